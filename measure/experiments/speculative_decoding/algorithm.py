"""Speculative decoding itself, for §8: the drafts (fake-quantized copies, or PyTorch's
dynamic int8 quantization with real int8 kernels) and their acceptance, greedy
speculative decoding with transformers-style caches, timed against plain greedy
decoding, the cost of one forward pass against a fixed cache, and the rows of the
formula tables (Leviathan et al. 2023, eq. 1). The sampling rule itself is in
``sampling``.
"""

from __future__ import annotations

import copy
import gc
import warnings
from functools import partial

import torch

from measure.experiments.speculative_decoding.sampling import expected_acceptance, tempered
from measure.lab.context import Context
from measure.lab.evaluation import agreement_of, logits_given_prefix
from measure.lab.formulas import expected_tokens_per_verification, speculative_speedup
from measure.lab.generation import crop_cache, greedy_cached, prefill
from measure.lab.medians import ratio_cells
from measure.lab.quantizers import SCHEMES, quantized_copy
from measure.lab.sampling import Sweep, interleaved

DYNAMIC_INT8 = "int8_dynamic"  # real int8 kernels (CPU only), see dynamic_int8


def dynamic_int8(model: torch.nn.Module) -> torch.nn.Module:
    """A copy with every Linear layer replaced by PyTorch's dynamically quantized int8
    Linear: weights int8 per output row, activations quantized per tensor on the fly,
    int8 matrix kernels (fbgemm / qnnpack). CPU only."""
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization announces its move to torchao
        return quantize_dynamic(
            copy.deepcopy(model), {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8
        ).eval()


def make_draft(model, name: str):
    return dynamic_int8(model) if name == DYNAMIC_INT8 else quantized_copy(model, name)


def draft_label(name: str) -> str:
    if name == DYNAMIC_INT8:
        return "int8 per-row, int8 kernels"
    return SCHEMES[name].label


# --8<-- [start:speculative_greedy] (shown on the speculative-decoding page)
@torch.inference_mode()
def speculative_greedy(target, draft, ids: torch.Tensor, new_tokens: int, gamma: int) -> tuple[list[int], list[int]]:
    """Greedy speculative decoding, batch 1. Returns the generated token ids and, per
    round, how many drafted tokens the target accepted.

    Invariant between rounds: ``seq`` is prompt + output; the target's cache holds every
    token of ``seq`` but the last; the draft's cache holds a prefix of ``seq``.
    """
    token, tcache = prefill(target, ids)
    seq = ids[0].tolist() + [int(token)]
    _, dcache = prefill(draft, ids)
    out, accepted = [int(token)], []
    while len(out) < new_tokens:
        # Draft gamma tokens, feeding the draft whatever part of seq it has not seen.
        pending = torch.tensor([seq[dcache.get_seq_length() :]], device=ids.device)
        drafted = []
        for _ in range(gamma):
            logits = draft(input_ids=pending, past_key_values=dcache, use_cache=True).logits
            nxt = int(logits[0, -1].argmax())
            drafted.append(nxt)
            pending = torch.tensor([[nxt]], device=ids.device)
        # Verify: the target scores the last token of seq and the gamma drafts in one pass;
        # position i of its output is its own choice after seq + drafted[:i].
        block = torch.tensor([[seq[-1], *drafted]], device=ids.device)
        choice = target(input_ids=block, past_key_values=tcache, use_cache=True).logits[0].argmax(dim=-1).tolist()
        n = 0
        while n < gamma and drafted[n] == choice[n]:
            n += 1
        new = drafted[:n] + [choice[n]]  # the accepted drafts, then the target's own token
        base = len(seq)
        seq += new
        out += new
        accepted.append(n)
        crop_cache(tcache, base + n)  # keep seq minus its (new) last token
        crop_cache(dcache, min(dcache.get_seq_length(), base + n))
    return out[:new_tokens], accepted
    # --8<-- [end:speculative_greedy]


def step_sweep(target, models: dict, ids: torch.Tensor, gammas: tuple[int, ...], ctx: Context, cfg) -> Sweep:
    """One forward pass against a cache of the prompt, every point in one interleaved
    sweep: the target over 1 token (``("target", 1)``) and over gamma + 1 tokens for each
    gamma (``("target", gamma + 1)``), and each draft over 1 token (``("draft", name)``).
    Each point has its own cache, cut back to the prompt before every call (untimed)."""
    wanted = [("target", 1), *dict.fromkeys(("target", g + 1) for g in gammas), *(("draft", n) for n in models)]
    caches, lengths, points = {}, {}, {}
    _, target_cache = prefill(target, ids)  # one prefill, a copy of its cache for each target point
    for key in wanted:
        model = target if key[0] == "target" else models[key[1]]
        tokens = key[1] if key[0] == "target" else 1
        block = ids[:, -tokens:] if tokens <= ids.shape[1] else ids[:, :1].repeat(1, tokens)
        caches[key] = copy.deepcopy(target_cache) if model is target else prefill(model, ids)[1]
        lengths[key] = caches[key].get_seq_length()
        points[key] = partial(model, input_ids=block, past_key_values=caches[key], use_cache=True)

    def before(key) -> None:
        crop_cache(caches[key], lengths[key])  # the previous pass grew it

    ctx.log(f"  {len(points)} passes interleaved (budget {cfg.step_budget_s:g} s)")
    return interleaved(
        points,
        device=ctx.device,
        seed=cfg.step_seed,
        budget_s=cfg.step_budget_s,
        target=cfg.target,
        warmup=2,
        before=before,
    )


def cost_rows_of(target, models: dict, ids: torch.Tensor, gammas: tuple[int, ...], ctx: Context, cfg):
    """The target's decode step (an ``Estimate``); the rows of ``draft_cost`` (each draft
    in ``models``: its step, and c = its step / the target's, paired round by round
    with its interval) and of ``verify_cost`` (the target verifying gamma + 1 tokens in one
    pass, for each gamma); the sweep's description."""
    sweep = step_sweep(target, models, ids, gammas, ctx, cfg)
    step = sweep.points[("target", 1)]
    cost_rows = [
        {
            "draft": name,
            "label": draft_label(name),
            **step.columns("target_step_ms"),
            **(d := sweep.points[("draft", name)]).columns("draft_step_ms"),
            **ratio_cells("draft_cost", d, step),
        }
        for name in models
    ]
    verify_rows = [
        {
            "gamma": g,
            "tokens_verified": g + 1,
            **(v := sweep.points[("target", g + 1)]).columns("verify_ms"),
            **ratio_cells("relative_to_one_step", v, step),
        }
        for g in gammas
    ]
    return step, cost_rows, verify_rows, sweep.describe()


def formula_rows(
    alphas: list[tuple[str, float]], gammas: tuple[int, ...], costs: tuple[float, ...]
) -> tuple[list[dict], list[dict]]:
    """Rows of the tables ``expected_tokens`` (per alpha) and ``speedup`` (per alpha and
    draft cost c), for each (source, alpha) given."""
    rows_e, rows_s = [], []
    for source, alpha in alphas:
        row = {"alpha_source": source, "alpha": alpha}
        for g in gammas:
            row[f"tokens_g{g}"] = expected_tokens_per_verification(alpha=alpha, gamma=g)
        rows_e.append(row)
        for c in costs:
            s = {g: speculative_speedup(alpha=alpha, gamma=g, draft_cost=c) for g in gammas}
            losses = [g for g in gammas if s[g] < 1]
            rows_s.append(
                {
                    "alpha_source": source,
                    "alpha": alpha,
                    "draft_cost": c,
                    **{f"speedup_g{g}": s[g] for g in gammas},
                    "best_gamma": max(gammas, key=lambda g: s[g]),
                    "losses": ", ".join(f"γ = {g}" for g in losses) if losses else "none",
                }
            )
    return rows_e, rows_s


def position_rows(draft: str, gamma: int, accepted: list[int], alpha: float) -> list[dict]:
    """Rows of ``acceptance_by_position``: how often the i-th drafted token of a round was
    kept, given that the ones before it were."""
    rows = []
    for i in range(1, gamma + 1):
        reached = sum(1 for n in accepted if n >= i - 1)
        kept = sum(1 for n in accepted if n >= i)
        rows.append(
            {
                "draft": draft,
                "gamma": gamma,
                "position": i,
                "proposed": reached,
                "accepted": kept,
                "rate": kept / reached if reached else 0.0,
                "alpha": alpha,
            }
        )
    return rows


def acceptance_rows(
    target,
    ids: torch.Tensor,
    names: list[str],
    keep: list[str],
    ctx: Context,
    reference: torch.Tensor,
    temperatures: tuple[float, ...] = (),
    keep_logits: tuple[str, ...] = (),
) -> tuple:
    """Rows of ``acceptance``: each draft's agreement with the target's greedy
    continuation ``reference`` (the same count as measure/lab/evaluation.py's
    ``agreement``); rows of ``acceptance_by_temperature``: at every position of the same
    continuation, the chance Σ min(p_T, q_T) that speculative sampling at temperature T
    keeps the draft's token, averaged over the positions; the drafts named in ``keep``,
    built once, by name in the order of ``keep``; and the draft logits (positions, vocab)
    of those named in ``keep_logits``, with the target's under the key "target"."""
    target_logits = logits_given_prefix(target, ids, reference)[0]
    p_at = {t: tempered(target_logits, t) for t in temperatures}
    rows, by_temperature, models, logits_of = [], [], {}, {"target": target_logits}
    for name in ctx.progress(names, "acceptance of each quantized draft"):
        draft = make_draft(target, name)
        logits = logits_given_prefix(draft, ids, reference)
        a = agreement_of(logits.argmax(dim=-1), reference)
        rows.append(
            {
                "draft": name,
                "label": draft_label(name),
                "kernels": "int8" if name == DYNAMIC_INT8 else "target dtype (fake-quantized weights)",
                "agreed": a.agreed,
                "positions": a.total,
                "alpha": a.fraction,
                "first_disagreement": a.first_disagreement,
            }
        )
        for t in temperatures:
            kept = expected_acceptance(p_at[t], tempered(logits[0], t))
            by_temperature.append(
                {
                    "draft": name,
                    "label": draft_label(name),
                    "temperature": t,
                    "positions": kept.numel(),
                    # A sum divided by the count, as agreed / positions is: at T = 0 the two are equal floats.
                    "expected_acceptance": float(kept.sum()) / kept.numel(),
                    "lowest": float(kept.min()),
                }
            )
        if name in keep_logits:
            logits_of[name] = logits[0]
        if name in keep:
            models[name] = draft
        else:
            del draft
            gc.collect()
    return rows, {name: models[name] for name in keep}, by_temperature, logits_of


def timed_runs(target, models: dict, ids: torch.Tensor, runs: list, *, new_tokens: int, ctx: Context, cfg):
    """Plain greedy decoding (the point ``"greedy"``) and speculative decoding with every
    (draft, gamma) of ``runs``, each a point of one interleaved sweep. Returns the plain
    greedy tokens and each run's (tokens, accepted per round), both from each point's
    first call (the tokens are the same at every call), and the sweep. No warm-up round:
    the step sweep before it has run every model at these shapes, and a generation is
    dozens of forward passes, so its first call is a sample like the others."""
    first: dict = {}

    def point(key, fn):
        def call() -> None:
            out = fn()
            first.setdefault(key, out)

        return call

    points = {"greedy": point("greedy", partial(greedy_cached, target, ids, new_tokens))}
    for d, g in runs:
        points[(d, g)] = point((d, g), partial(speculative_greedy, target, models[d], ids, new_tokens, g))
    ctx.log(f"  {len(points)} generations interleaved (budget {cfg.run_budget_s:g} s)")
    sweep = interleaved(
        points, device=ctx.device, seed=cfg.run_seed, budget_s=cfg.run_budget_s, target=cfg.target, warmup=0
    )
    return first["greedy"][0].tolist(), {r: first[r] for r in runs}, sweep
