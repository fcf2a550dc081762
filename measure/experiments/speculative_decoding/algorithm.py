"""Speculative decoding itself, for §8: the drafts (fake-quantized copies, or PyTorch's
dynamic int8 quantization with real int8 kernels) and their acceptance, greedy
speculative decoding with transformers-style caches, timed against plain greedy
decoding, the cost of one forward pass against a fixed cache, and the rows of the
formula tables (Leviathan et al. 2023, eq. 1). The sampling rule itself is in
``sampling``.
"""

from __future__ import annotations

import copy
import warnings
from functools import partial

import torch

from measure.lab.context import Context
from measure.lab.formulas import expected_tokens_per_verification, speculative_speedup
from measure.lab.generation import crop_cache, prefill
from measure.lab.medians import ratio_cells
from measure.lab.quantizers import SCHEMES, quantized_copy
from measure.lab.sampling import Sweep, interleaved

DYNAMIC_INT8 = "int8_dynamic"  # real int8 kernels (CPU only), see dynamic_int8
# int8 weights in bf16 activations, the weight-quantization page's most accurate fast
# kernel (CPU only): see int8_weight_draft
INT8_WEIGHTS = "int8_weights_bf16"
REAL_KERNELS = (DYNAMIC_INT8, INT8_WEIGHTS)  # the drafts that compute on low-bit kernels


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


def int8_weight_draft(model: torch.nn.Module) -> torch.nn.Module:
    """A copy with every projection computed by ``torch._weight_int8pack_mm`` on int8
    codes with one scale per output row (the quality page's int8 per-row weights) and
    bf16 activations, everything else cast to bf16 (measure/lab/lowbit_variants.py, the
    weight-quantization page's variant ``int8_bf16``, checked against its weights)."""
    from measure.lab.lowbit_variants import VARIANTS, variant_model

    variant = VARIANTS["int8_bf16"]
    draft, facts = variant_model(model, variant)
    if not facts["max_rel_error"] <= variant.tolerance:
        raise RuntimeError(f"the int8 weight-only kernel is off its weights by {facts['max_rel_error']:.3g}")
    return draft.eval()


def make_draft(model, name: str):
    if name == DYNAMIC_INT8:
        return dynamic_int8(model)
    if name == INT8_WEIGHTS:
        return int8_weight_draft(model)
    return quantized_copy(model, name)


def draft_label(name: str) -> str:
    if name == DYNAMIC_INT8:
        return "int8 per-row, int8 kernels"
    if name == INT8_WEIGHTS:
        return "int8 per-row, int8 weight kernels in bf16"
    return SCHEMES[name].label


def draft_kernels(name: str) -> str:
    """What a draft computes in, as the acceptance table says it."""
    if name == DYNAMIC_INT8:
        return "int8"
    if name == INT8_WEIGHTS:
        return "int8 weights, bf16 activations"
    return "target dtype (fake-quantized weights)"


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
    Each point has its own cache, cut back to the prompt before every call (untimed).
    Beside them, the prefill of the prompt by the target and by each draft
    (``("prefill", "target")``, ``("prefill", name)``): a run's time is predicted from
    these passes (runs.py)."""
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

    points[("prefill", "target")] = partial(prefill, target, ids)
    for name, model in models.items():
        points[("prefill", name)] = partial(prefill, model, ids)

    def before(key) -> None:
        if key in caches:
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


_VS_FEWER = ("vs_fewer", "vs_fewer_low", "vs_fewer_high")


def cost_rows_of(target, models: dict, ids: torch.Tensor, gammas: tuple[int, ...], ctx: Context, cfg):
    """The target's decode step (an ``Estimate``); the rows of ``draft_cost`` (each draft
    in ``models``: its step, and c = its step / the target's, paired round by round
    with its interval) and of ``verify_cost`` (the target verifying gamma + 1 tokens in one
    pass, for each gamma, and against the pass over the gamma before it in the table);
    every pass's estimate, by its key in ``step_sweep``; the
    sweep's description."""
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
    verify_rows, before = [], None
    for g in gammas:
        v = sweep.points[("target", g + 1)]
        fewer = ratio_cells("vs_fewer", v, before) if before is not None else dict.fromkeys(_VS_FEWER)
        verify_rows.append(
            {
                "gamma": g,
                "tokens_verified": g + 1,
                **v.columns("verify_ms"),
                **ratio_cells("relative_to_one_step", v, step),
                **fewer,
            }
        )
        before = v
    return step, cost_rows, verify_rows, sweep.points, sweep.describe()


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
