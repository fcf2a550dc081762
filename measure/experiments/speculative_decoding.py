"""§8 Speculative decoding.

A cheap draft model proposes gamma tokens; the target checks all of them in one forward
pass and keeps the longest prefix it agrees with, plus one token of its own. Under
greedy decoding a drafted token is kept only if it is the target's own argmax, so the
output cannot change. Measures, with quantized copies of the run's model as drafts for
the full-precision model:

* ``acceptance``: alpha of every quantization scheme of §7 (measure/lab/quantizers.py): the
  agreement of its argmax with the target's greedy continuation under identical
  prefixes (measure/lab/evaluation.py), the greedy acceptance rate of that draft.
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
real int8 matrix kernels and so can be cheaper. The drafts and the algorithm itself live
in measure/lab/speculative_algorithm.py.

Writes ``site_data/speculative_decoding/``. Alone: ``python -m measure run --only speculative_decoding``.
"""

from __future__ import annotations

import gc
import statistics
from dataclasses import dataclass

import torch

from measure.lab.context import Context
from measure.lab.evaluation import reference_continuation
from measure.lab.formulas import expected_tokens_per_verification, speculative_speedup
from measure.lab.quantizers import SCHEMES
from measure.lab.speculative_algorithm import (
    DYNAMIC_INT8,
    acceptance_rows,
    cost_rows_of,
    draft_label,
    formula_rows,
    position_rows,
    timed_runs,
)
from sitedata.schema import Column, Result, Table, Value

TITLE = "Speculative decoding"
NEEDS_TRAINED = True  # acceptance is agreement between trained models
PROMPT = "Tell me a short story about a lighthouse keeper and a storm."
FORMULA_GAMMAS = (1, 2, 4, 8)  # spec §8; the columns of the formula tables

# What a draft agrees on, and all that follows from it, reproduces with the draft's
# kernels: fake-quantized drafts compute in the target's dtype (same device type and
# dtype), the dynamic int8 draft in CPU int8 kernels that round differently from one CPU
# model to another (same machine). A column holds rows of both kinds: machine.
_DRAFTED = dict(scope="machine")
_NUM_DRAFTED = dict(compare="numeric", **_DRAFTED)
_TIMING = dict(compare="timing")

_DRAFT = Column("draft")
_LABEL = Column("label", label="draft")
_ALPHA = Column("alpha", label="α", **_NUM_DRAFTED)
_GAMMA = Column("gamma", label="γ")
_SOURCE = Column("alpha_source", label="alpha from")

TABLES = (
    Table(
        "acceptance",
        "Acceptance α of each quantized draft: agreement with the target's greedy tokens",
        (
            _DRAFT,
            _LABEL,
            Column("kernels", label="computes in"),
            Column("agreed", label="agreed", **_DRAFTED),
            Column("positions", label="positions"),
            _ALPHA,
            Column("first_disagreement", label="first disagreement", **_DRAFTED),
        ),
    ),
    Table(
        "expected_tokens",
        "Tokens per verification, (1 − α^(γ+1)) / (1 − α)",
        (
            _SOURCE,
            _ALPHA,
            *(Column(f"tokens_g{g}", "tokens", f"γ = {g}", **_NUM_DRAFTED) for g in FORMULA_GAMMAS),
        ),
    ),
    Table(
        "speedup",
        "Net speedup, tokens per verification / (γ·c + 1); below 1 is a loss",
        (
            _SOURCE,
            _ALPHA,
            Column("draft_cost", label="draft cost c"),  # a parameter, copied as given
            *(Column(f"speedup_g{g}", "x", f"γ = {g}", **_NUM_DRAFTED) for g in FORMULA_GAMMAS),
            Column("best_gamma", label="best γ", **_DRAFTED),
            Column("losses", label="losses (speedup < 1)", **_DRAFTED),
        ),
    ),
    Table(
        "draft_cost",
        "The draft's cost c: one decode step, relative to the target's",
        (
            _DRAFT,
            _LABEL,
            Column("target_step_ms", "ms", "target step", **_TIMING),
            Column("draft_step_ms", "ms", "draft step", **_TIMING),
            Column("draft_cost", label="c", **_TIMING),
        ),
    ),
    Table(
        "verify_cost",
        "Verifying γ + 1 tokens in one target pass, relative to one decode step",
        (
            _GAMMA,
            Column("tokens_verified", "tokens", "tokens in the pass"),
            Column("verify_ms", "ms", "one pass", **_TIMING),
            Column("relative_to_one_step", "x", "vs one decode step", **_TIMING),
        ),
    ),
    Table(
        "real_run",
        "Speculative decoding run for real, next to the formula",
        (
            _DRAFT,
            _LABEL,
            _GAMMA,
            Column("new_tokens", "tokens", "tokens"),
            Column("identical_to_greedy", label="same tokens as greedy", **_DRAFTED),
            Column("first_mismatch", label="first mismatch", **_DRAFTED),
            Column("rounds", label="rounds", **_DRAFTED),
            _ALPHA,
            Column("predicted_tokens_per_round", "tokens", "tokens/round, formula", **_NUM_DRAFTED),
            Column("tokens_per_round", "tokens", "tokens/round, run", **_NUM_DRAFTED),
            Column("draft_cost", label="c, measured", **_TIMING),
            Column("predicted_speedup", "x", "speedup, formula", **_TIMING),
            Column("predicted_with_verify_cost", "x", "formula with run's tokens/round and verify cost", **_TIMING),
            Column("greedy_ms", "ms", "plain greedy", **_TIMING),
            Column("speculative_ms", "ms", "speculative", **_TIMING),
            Column("measured_speedup", "x", "speedup, measured", **_TIMING),
        ),
    ),
    Table(
        "acceptance_by_position",
        "Acceptance of the i-th drafted token of a round, given the ones before it were kept",
        (
            _DRAFT,
            _GAMMA,
            Column("position", label="position i"),
            Column("proposed", label="rounds reaching i", **_DRAFTED),
            Column("accepted", label="kept", **_DRAFTED),
            Column("rate", label="rate", **_NUM_DRAFTED),
            Column("alpha", label="α (agreement)", **_NUM_DRAFTED),
        ),
    ),
)
VALUES = (
    Value("prompt"),
    Value("agreement_tokens", "tokens"),
    Value("new_tokens", "tokens"),
    Value("all_identical", description="every speculative run produced exactly the target's greedy tokens", **_DRAFTED),
    Value("runs"),
    # Picked by the measured speedup: may change with timing noise even here, so
    # compared only where timings are.
    Value("best_draft", compare="timing"),
    Value("best_gamma", compare="timing"),
    Value("best_measured_speedup", "x", **_TIMING),
    Value("best_predicted_speedup", "x", **_TIMING),  # uses the measured draft cost c
    Value("greedy_samples_ms", "ms", **_TIMING),
    Value("target_step_ms", "ms", **_TIMING),
)


@dataclass(frozen=True, kw_only=True)
class Config:
    agreement_tokens: int = 144  # spec §7: the agreement column that gives alpha
    schemes: tuple[str, ...] = tuple(SCHEMES)
    formula_alphas: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)  # spec §8
    formula_gammas: tuple[int, ...] = FORMULA_GAMMAS
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


def run(cfg: Config, ctx: Context) -> Result:
    target = ctx.model.model
    ids = _prompt(ctx)
    can_dynamic = ctx.device.type == "cpu" and ctx.dtype == torch.float32
    drafts = [d for d in cfg.drafts if d != DYNAMIC_INT8 or can_dynamic]

    ctx.log(f"  reference: the target's greedy continuation of {cfg.agreement_tokens} tokens")
    reference = reference_continuation(target, ids, cfg.agreement_tokens)
    names = list(cfg.schemes) + [d for d in drafts if d not in cfg.schemes]
    acceptance, models = acceptance_rows(target, ids, names, drafts, ctx, reference)
    alpha_of = {r["draft"]: r["alpha"] for r in acceptance}

    formula_alphas = [(f"measured: {r['label']}", r["alpha"]) for r in acceptance]
    formula_alphas += [("assumed", a) for a in cfg.formula_alphas]
    expected, speedup = formula_rows(formula_alphas, cfg.formula_gammas, cfg.formula_costs)

    ctx.log("  cost of one decode step, target and drafts, and of verifying gamma + 1 tokens")
    target_step, cost_rows, verify_rows = cost_rows_of(target, models, ids, cfg.run_gammas, ctx, cfg.step_repeats)
    cost_of = {r["draft"]: r["draft_cost"] for r in cost_rows}
    verify_of = {r["gamma"]: r["relative_to_one_step"] for r in verify_rows}

    ctx.log(f"  speculative decoding for real: {cfg.new_tokens} tokens, drafts {', '.join(drafts)}")
    runs = [(d, g) for d in drafts for g in cfg.run_gammas]
    plain, results, samples = timed_runs(
        target, models, ids, runs, new_tokens=cfg.new_tokens, repeats=cfg.repeats, ctx=ctx
    )
    greedy_s = statistics.median(samples["greedy"])

    real_rows, by_position = [], []
    for d, g in runs:
        tokens, accepted = results[(d, g)]
        spec_s = statistics.median(samples[(d, g)])
        alpha, c = alpha_of[d], cost_of[d]
        per_round = len(tokens) / len(accepted)
        mismatch = next((i for i, (x, y) in enumerate(zip(tokens, plain, strict=True)) if x != y), -1)
        real_rows.append(
            {
                "draft": d,
                "label": draft_label(d),
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
        by_position += position_rows(d, g, accepted, alpha)
    del models
    gc.collect()

    tables = {
        "acceptance": acceptance,
        "expected_tokens": expected,
        "speedup": speedup,
        "draft_cost": cost_rows,
        "verify_cost": verify_rows,
        "real_run": real_rows,
        "acceptance_by_position": by_position,
    }
    best = max(real_rows, key=lambda r: r["measured_speedup"])
    values = {
        "prompt": PROMPT if ctx.model.tokenizer is not None else "(random token ids)",
        "agreement_tokens": cfg.agreement_tokens,
        "new_tokens": cfg.new_tokens,
        "all_identical": all(r["identical_to_greedy"] for r in real_rows),
        "runs": len(real_rows),
        "best_draft": best["label"],
        "best_gamma": best["gamma"],
        "best_measured_speedup": best["measured_speedup"],
        "best_predicted_speedup": best["predicted_speedup"],
        "greedy_samples_ms": [round(s * 1e3, 3) for s in samples["greedy"]],
        "target_step_ms": target_step * 1e3,
    }
    return Result(tables=tables, values=values)
