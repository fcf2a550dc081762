"""§8 Speculative decoding.

A cheap draft model proposes gamma tokens; the target checks all of them in one forward
pass and keeps the longest prefix it agrees with, plus one token of its own. Under
greedy decoding a drafted token is kept only if it is the target's own argmax, so the
output cannot change. Measures, with quantized copies of the run's model as drafts for
the full-precision model:

* ``acceptance``: alpha of every quantization scheme of §7 (measure/quantizers.py): the
  agreement of its argmax with the target's greedy continuation under identical
  prefixes (measure/evaluation.py), the greedy acceptance rate of that draft.
* ``expected_tokens`` and ``speedup``: the formula (Leviathan et al. 2023, eq. 1):
  tokens per verification (1 - alpha^(gamma+1)) / (1 - alpha) and the net speedup
  divided by (gamma c + 1), over the measured alphas and 0.3 / 0.5 / 0.7 / 0.9, gamma 1 to
  8 and a draft cost c of 0.1 and 0.2; losses (speedup below 1) listed.
* ``draft_cost`` and ``verify_cost``: the measured time of one decode step of each
  draft relative to the target's (c), and of verifying gamma + 1 tokens in one pass.
* ``real_run``: greedy speculative decoding actually run, per draft and gamma: the
  output checked token for token against plain greedy decoding of the target, tokens
  per round, wall time against plain greedy, and the formula's prediction beside it.
* ``acceptance_by_position``: how often the i-th drafted token of a round was kept,
  given that the ones before it were.

Two kinds of draft: weights fake-quantized in place by the shared quantizers (compute
stays in the target's dtype, so such a draft costs what the target costs: it measures
acceptance, not speed) and, on a CPU, PyTorch's dynamic int8 quantization, which runs
real int8 matrix kernels and so can be cheaper.

Writes ``site_data/speculative/``. Alone: ``python -m measure run --only speculative``.
"""

from __future__ import annotations

import copy
import gc
import statistics
import warnings
from dataclasses import dataclass

import torch

from measure.context import Context
from measure.evaluation import agreement, reference_continuation
from measure.formulas import expected_tokens_per_verification, speculative_speedup
from measure.generation import greedy_cached, prefill
from measure.quantizers import SCHEMES, quantized_copy
from measure.schema import Column, Result, Table, Value
from measure.timing import time_call, timed

TITLE = "Speculative decoding"
NEEDS_TRAINED = True  # acceptance is agreement between trained models
PROMPT = "Tell me a short story about a lighthouse keeper and a storm."
DYNAMIC_INT8 = "int8_dynamic"  # real int8 kernels (CPU only), see _dynamic_int8


@dataclass(frozen=True, kw_only=True)
class Config:
    agreement_tokens: int = 144  # spec §7: the agreement column that gives alpha
    schemes: tuple[str, ...] = tuple(SCHEMES)
    formula_alphas: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)  # spec §8
    formula_gammas: tuple[int, ...] = (1, 2, 4, 8)  # spec §8
    formula_costs: tuple[float, ...] = (0.1, 0.2)  # spec §8
    drafts: tuple[str, ...] = ("int8_row", "nf4_b64", DYNAMIC_INT8)  # DYNAMIC_INT8: CPU runs only
    run_gammas: tuple[int, ...] = (1, 2, 4, 8)
    new_tokens: int = 128
    repeats: int = 3
    step_repeats: int = 15

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # Each fake-quantized draft step costs a full target step on a CPU: two
            # drafts, two gammas and a shorter generation keep §8 near a minute.
            return cls(drafts=("int8_row", DYNAMIC_INT8), run_gammas=(2, 4), new_tokens=48, repeats=2, step_repeats=10)
        return cls(
            agreement_tokens=8,
            schemes=("int8_row",),
            drafts=("int8_row",),
            run_gammas=(2,),
            new_tokens=6,
            repeats=1,
            step_repeats=2,
        )


def _prompt(ctx: Context) -> torch.Tensor:
    tok = ctx.model.tokenizer
    if tok is None:
        return ctx.prompt_ids(24)
    enc = tok.apply_chat_template(
        [{"role": "user", "content": PROMPT}], add_generation_prompt=True, return_tensors="pt"
    )
    return enc["input_ids"].to(ctx.device)


def _dynamic_int8(model: torch.nn.Module) -> torch.nn.Module:
    """A copy with every Linear layer replaced by PyTorch's dynamically quantized int8
    Linear: weights int8 per output row, activations quantized per tensor on the fly,
    int8 matrix kernels (fbgemm / qnnpack). CPU only."""
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization announces its move to torchao
        return quantize_dynamic(
            copy.deepcopy(model), {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8
        ).eval()


def _make_draft(model, name: str):
    return _dynamic_int8(model) if name == DYNAMIC_INT8 else quantized_copy(model, name)


def _draft_label(name: str) -> str:
    if name == DYNAMIC_INT8:
        return "int8 per-row, int8 kernels"
    return SCHEMES[name].label


def _truncate(cache, length: int) -> None:
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


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
        _truncate(tcache, base + n)  # keep seq minus its (new) last token
        _truncate(dcache, min(dcache.get_seq_length(), base + n))
    return out[:new_tokens], accepted


def _step_time(model, ids: torch.Tensor, tokens: int, ctx: Context, repeats: int) -> float:
    """Median seconds of one forward pass over ``tokens`` new tokens against a cache of the
    prompt, the cache cut back after each pass so that every pass sees the same length."""
    _, cache = prefill(model, ids)
    length = cache.get_seq_length()
    block = ids[:, -tokens:] if tokens <= ids.shape[1] else ids[:, :1].repeat(1, tokens)

    def step():
        model(input_ids=block, past_key_values=cache, use_cache=True)
        _truncate(cache, length)

    return time_call(step, device=ctx.device, warmup=2, repeats=repeats).median_s


def _formula_tables(cfg: Config, alphas: list[tuple[str, float]]) -> tuple[Table, Table]:
    rows_e, rows_s = [], []
    for source, alpha in alphas:
        row = {"alpha_source": source, "alpha": alpha}
        for g in cfg.formula_gammas:
            row[f"tokens_g{g}"] = expected_tokens_per_verification(alpha=alpha, gamma=g)
        rows_e.append(row)
        for c in cfg.formula_costs:
            s = {g: speculative_speedup(alpha=alpha, gamma=g, draft_cost=c) for g in cfg.formula_gammas}
            losses = [g for g in cfg.formula_gammas if s[g] < 1]
            rows_s.append(
                {
                    "alpha_source": source,
                    "alpha": alpha,
                    "draft_cost": c,
                    **{f"speedup_g{g}": s[g] for g in cfg.formula_gammas},
                    "best_gamma": max(cfg.formula_gammas, key=lambda g: s[g]),
                    "losses": ", ".join(f"γ = {g}" for g in losses) if losses else "none",
                }
            )
    source_cols = (
        Column(name="alpha_source", label="alpha from"),
        Column(name="alpha", kind="numeric", label="α"),
    )
    expected = Table(
        name="expected_tokens",
        title="Tokens per verification, (1 − α^(γ+1)) / (1 − α)",
        columns=(
            *source_cols,
            *(Column(name=f"tokens_g{g}", unit="tokens", kind="numeric", label=f"γ = {g}") for g in cfg.formula_gammas),
        ),
        rows=rows_e,
    )
    speedup = Table(
        name="speedup",
        title="Net speedup, tokens per verification / (γ·c + 1); below 1 is a loss",
        columns=(
            *source_cols,
            Column(name="draft_cost", kind="numeric", label="draft cost c"),
            *(Column(name=f"speedup_g{g}", unit="x", kind="numeric", label=f"γ = {g}") for g in cfg.formula_gammas),
            Column(name="best_gamma", kind="numeric", label="best γ"),
            Column(name="losses", kind="numeric", label="losses (speedup < 1)"),
        ),
        rows=rows_s,
    )
    return expected, speedup


def run(cfg: Config, ctx: Context) -> Result:
    target = ctx.model.model
    ids = _prompt(ctx)
    can_dynamic = ctx.device.type == "cpu" and ctx.dtype == torch.float32
    drafts = [d for d in cfg.drafts if d != DYNAMIC_INT8 or can_dynamic]

    ctx.log(f"  reference: the target's greedy continuation of {cfg.agreement_tokens} tokens")
    reference = reference_continuation(target, ids, cfg.agreement_tokens)
    acceptance, models = [], {}
    names = list(cfg.schemes) + [d for d in drafts if d not in cfg.schemes]
    for name in ctx.progress(names, "acceptance of each quantized draft"):
        draft = _make_draft(target, name)
        a = agreement(target, draft, ids, reference=reference)
        acceptance.append(
            {
                "draft": name,
                "label": _draft_label(name),
                "kernels": "int8" if name == DYNAMIC_INT8 else "target dtype (fake-quantized weights)",
                "agreed": a.agreed,
                "positions": a.total,
                "alpha": a.fraction,
                "first_disagreement": a.first_disagreement,
            }
        )
        if name in drafts:
            models[name] = draft
        else:
            del draft
            gc.collect()
    alpha_of = {r["draft"]: r["alpha"] for r in acceptance}

    formula_alphas = [(f"measured: {r['label']}", r["alpha"]) for r in acceptance]
    formula_alphas += [("assumed", a) for a in cfg.formula_alphas]
    expected, speedup = _formula_tables(cfg, formula_alphas)

    ctx.log("  cost of one decode step, target and drafts, and of verifying gamma + 1 tokens")
    target_step = _step_time(target, ids, 1, ctx, cfg.step_repeats)
    cost_rows = [
        {
            "draft": name,
            "label": _draft_label(name),
            "target_step_ms": target_step * 1e3,
            "draft_step_ms": (s := _step_time(models[name], ids, 1, ctx, cfg.step_repeats)) * 1e3,
            "draft_cost": s / target_step,
        }
        for name in drafts
    ]
    cost_of = {r["draft"]: r["draft_cost"] for r in cost_rows}
    verify_rows = []
    for g in cfg.run_gammas:
        v = _step_time(target, ids, g + 1, ctx, cfg.step_repeats)
        verify_rows.append(
            {"gamma": g, "tokens_verified": g + 1, "verify_ms": v * 1e3, "relative_to_one_step": v / target_step}
        )
    verify_of = {r["gamma"]: r["relative_to_one_step"] for r in verify_rows}

    ctx.log(f"  speculative decoding for real: {cfg.new_tokens} tokens, drafts {', '.join(drafts)}")
    plain: list[int] = []
    runs = [(d, g) for d in drafts for g in cfg.run_gammas]
    samples: dict = {"greedy": [], **{r: [] for r in runs}}
    results: dict = {}
    for _ in ctx.progress(range(cfg.repeats), "repeats (greedy, then every draft x gamma)"):
        # Interleaved, so that a machine busy with something else slows every method alike.
        out, seconds = timed(lambda: greedy_cached(target, ids, cfg.new_tokens), device=ctx.device)
        plain = out[0].tolist()
        samples["greedy"].append(seconds)
        for d, g in runs:
            results[(d, g)], seconds = timed(
                lambda draft=models[d]: speculative_greedy(target, draft, ids, cfg.new_tokens, g), device=ctx.device
            )
            samples[(d, g)].append(seconds)
    greedy_s = statistics.median(samples["greedy"])

    real_rows, position_rows = [], []
    for d, g in runs:
        tokens, accepted = results[(d, g)]
        spec_s = statistics.median(samples[(d, g)])
        alpha, c = alpha_of[d], cost_of[d]
        per_round = len(tokens) / len(accepted)
        mismatch = next((i for i, (x, y) in enumerate(zip(tokens, plain, strict=True)) if x != y), -1)
        real_rows.append(
            {
                "draft": d,
                "label": _draft_label(d),
                "gamma": g,
                "new_tokens": len(tokens),
                "identical_to_greedy": tokens == plain,
                "first_mismatch": mismatch,
                "rounds": len(accepted),
                "alpha": alpha,
                "predicted_tokens_per_round": expected_tokens_per_verification(alpha=alpha, gamma=g),
                "tokens_per_round": per_round,
                "draft_cost": c,
                "predicted_speedup": speculative_speedup(alpha=alpha, gamma=g, draft_cost=c),
                "predicted_with_verify_cost": per_round / (g * c + verify_of[g]),
                "greedy_ms": greedy_s * 1e3,
                "speculative_ms": spec_s * 1e3,
                "measured_speedup": greedy_s / spec_s,
            }
        )
        for i in range(1, g + 1):
            reached = sum(1 for n in accepted if n >= i - 1)
            kept = sum(1 for n in accepted if n >= i)
            position_rows.append(
                {
                    "draft": d,
                    "gamma": g,
                    "position": i,
                    "proposed": reached,
                    "accepted": kept,
                    "rate": kept / reached if reached else 0.0,
                    "alpha": alpha,
                }
            )
    del models
    gc.collect()

    draft_cols = (Column(name="draft"), Column(name="label", label="draft"))
    tables = [
        Table(
            name="acceptance",
            title="Acceptance α of each quantized draft: agreement with the target's greedy tokens",
            columns=(
                *draft_cols,
                Column(name="kernels", label="computes in"),
                Column(name="agreed", kind="numeric", label="agreed"),
                Column(name="positions", label="positions"),
                Column(name="alpha", kind="numeric", label="α"),
                Column(name="first_disagreement", kind="numeric", label="first disagreement"),
            ),
            rows=acceptance,
        ),
        expected,
        speedup,
        Table(
            name="draft_cost",
            title="The draft's cost c: one decode step, relative to the target's",
            columns=(
                *draft_cols,
                Column(name="target_step_ms", unit="ms", kind="timing", label="target step"),
                Column(name="draft_step_ms", unit="ms", kind="timing", label="draft step"),
                Column(name="draft_cost", kind="timing", label="c"),
            ),
            rows=cost_rows,
        ),
        Table(
            name="verify_cost",
            title="Verifying γ + 1 tokens in one target pass, relative to one decode step",
            columns=(
                Column(name="gamma", label="γ"),
                Column(name="tokens_verified", unit="tokens", label="tokens in the pass"),
                Column(name="verify_ms", unit="ms", kind="timing", label="one pass"),
                Column(name="relative_to_one_step", unit="x", kind="timing", label="vs one decode step"),
            ),
            rows=verify_rows,
        ),
        Table(
            name="real_run",
            title="Speculative decoding run for real, next to the formula",
            columns=(
                *draft_cols,
                Column(name="gamma", label="γ"),
                Column(name="new_tokens", unit="tokens", label="tokens"),
                Column(name="identical_to_greedy", label="same tokens as greedy"),
                Column(name="first_mismatch", kind="numeric", label="first mismatch"),
                Column(name="rounds", kind="numeric", label="rounds"),
                Column(name="alpha", kind="numeric", label="α"),
                Column(name="predicted_tokens_per_round", unit="tokens", kind="numeric", label="tokens/round, formula"),
                Column(name="tokens_per_round", unit="tokens", kind="numeric", label="tokens/round, run"),
                Column(name="draft_cost", kind="timing", label="c, measured"),
                Column(name="predicted_speedup", unit="x", kind="timing", label="speedup, formula"),
                Column(
                    name="predicted_with_verify_cost",
                    unit="x",
                    kind="timing",
                    label="formula with run's tokens/round and verify cost",
                ),
                Column(name="greedy_ms", unit="ms", kind="timing", label="plain greedy"),
                Column(name="speculative_ms", unit="ms", kind="timing", label="speculative"),
                Column(name="measured_speedup", unit="x", kind="timing", label="speedup, measured"),
            ),
            rows=real_rows,
        ),
        Table(
            name="acceptance_by_position",
            title="Acceptance of the i-th drafted token of a round, given the ones before it were kept",
            columns=(
                Column(name="draft"),
                Column(name="gamma", label="γ"),
                Column(name="position", label="position i"),
                Column(name="proposed", kind="numeric", label="rounds reaching i"),
                Column(name="accepted", kind="numeric", label="kept"),
                Column(name="rate", kind="numeric", label="rate"),
                Column(name="alpha", kind="numeric", label="α (agreement)"),
            ),
            rows=position_rows,
        ),
    ]
    best = max(real_rows, key=lambda r: r["measured_speedup"])
    values = [
        Value(name="prompt", value=PROMPT if ctx.model.tokenizer is not None else "(random token ids)"),
        Value(name="agreement_tokens", value=cfg.agreement_tokens, unit="tokens"),
        Value(name="new_tokens", value=cfg.new_tokens, unit="tokens"),
        Value(
            name="all_identical",
            value=all(r["identical_to_greedy"] for r in real_rows),
            description="every speculative run produced exactly the target's greedy tokens",
        ),
        Value(name="runs", value=len(real_rows)),
        Value(name="best_draft", value=best["label"]),
        Value(name="best_gamma", value=best["gamma"]),
        Value(name="best_measured_speedup", value=best["measured_speedup"], unit="x", kind="timing"),
        Value(name="best_predicted_speedup", value=best["predicted_speedup"], unit="x", kind="timing"),
        Value(name="greedy_samples_ms", value=[round(s * 1e3, 3) for s in samples["greedy"]], unit="ms", kind="timing"),
        Value(name="target_step_ms", value=target_step * 1e3, unit="ms", kind="timing"),
    ]
    return Result(tables=tables, values=values)
