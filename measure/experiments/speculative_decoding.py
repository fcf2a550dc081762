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
* ``acceptance_by_temperature``: speculative *sampling* (measure/lab/speculative_sampling.py)
  keeps a drafted token with probability Σ min(p_T, q_T); its mean over the positions of
  the agreement text, per draft and temperature T (T = 0 is greedy, where it is α).
* ``exactness``: the sampling rule run many times at the positions of that text where
  one draft differs most from the target, its emitted tokens tested against the target's
  distribution by a chi-square goodness-of-fit test; the draft's own samples beside them.
* ``sampled_run``: speculative sampling actually run at one temperature, per draft: the
  share of judged drafts kept and tokens per round, next to the formula.

Acceptance is measured on the agreement prompt and protocol of §7 (measure/lab/evaluation.py):
the α of a fake-quantized draft here is the agreement of the same scheme on the quality page.

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
import time
from dataclasses import dataclass

import torch

from measure.lab.context import Context
from measure.lab.evaluation import AGREEMENT_PROMPT, AGREEMENT_TOKENS, agreement_prompt_ids, reference_continuation
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
from measure.lab.speculative_sampling import (
    SIGNIFICANCE,
    chi_square_goodness_of_fit,
    emitted_tokens,
    expected_acceptance,
    judged_drafts,
    speculative_sampled,
    tempered,
)
from sitedata.schema import Column, Result, Table, Value

TITLE = "Speculative decoding"
NEEDS_TRAINED = True  # acceptance is agreement between trained models
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
            _LABEL,
            _GAMMA,
            Column("position", label="position i"),
            Column("proposed", label="rounds reaching i", **_DRAFTED),
            Column("accepted", label="kept", **_DRAFTED),
            Column("rate", label="rate", **_NUM_DRAFTED),
            Column("alpha", label="α (agreement)", **_NUM_DRAFTED),
        ),
    ),
    Table(
        "acceptance_by_temperature",
        "Chance that speculative sampling keeps a drafted token, Σ min(p_T, q_T), mean over the text",
        (
            _DRAFT,
            _LABEL,
            Column("temperature", label="T", compare="numeric", scope="any"),
            Column("positions", label="positions"),
            Column("expected_acceptance", label="acceptance", **_NUM_DRAFTED),
            Column("lowest", label="lowest at one position", **_NUM_DRAFTED),
        ),
    ),
    Table(
        "exactness",
        "Tokens emitted by the sampling rule against the target's distribution: chi-square goodness of fit",
        (
            Column("position", label="position"),
            Column("sampler", label="tokens from"),
            Column("expected_acceptance", label="Σ min(p, q) here", **_NUM_DRAFTED),
            Column("draws", label="draws"),
            Column("cells", label="cells", **_DRAFTED),
            Column("dof", label="degrees of freedom", **_DRAFTED),
            Column("chi_square", label="χ²", **_NUM_DRAFTED),
            Column("p_value", label="p-value", **_NUM_DRAFTED),
            Column("rejected", label="rejected", **_DRAFTED),
        ),
    ),
    Table(
        "sampled_run",
        "Speculative sampling run for real, next to the formula",
        (
            _DRAFT,
            _LABEL,
            Column("temperature", label="T", compare="numeric", scope="any"),
            _GAMMA,
            Column("new_tokens", "tokens", "tokens"),
            Column("rounds", label="rounds", **_DRAFTED),
            Column("judged", label="drafts judged", **_DRAFTED),
            Column("accepted", label="kept", **_DRAFTED),
            Column("acceptance", label="acceptance, run", **_NUM_DRAFTED),
            Column("expected_acceptance", label="acceptance, Σ min over the text", **_NUM_DRAFTED),
            Column("predicted_tokens_per_round", "tokens", "tokens/round, formula", **_NUM_DRAFTED),
            Column("tokens_per_round", "tokens", "tokens/round, run", **_NUM_DRAFTED),
            Column("seconds", "s", "time", **_TIMING),
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
    Value("significance", compare="numeric", scope="any"),
    Value("exactness_draft"),
    Value("exactness_draws"),
    Value("exactness_temperature", compare="numeric", scope="any"),
    Value("exact_rule_passes", description="the rule's samples passed every chi-square test", **_DRAFTED),
    Value("draft_alone_rejected", description="the draft's own samples failed every chi-square test", **_DRAFTED),
    Value("sampled_temperature", compare="numeric", scope="any"),
    Value("sampled_gamma"),
    Value("sampled_tokens", "tokens"),
    Value("greedy_samples_ms", "ms", **_TIMING),
    Value("target_step_ms", "ms", **_TIMING),
)


@dataclass(frozen=True, kw_only=True)
class Config:
    agreement_tokens: int = AGREEMENT_TOKENS  # spec §7: the agreement column that gives alpha
    schemes: tuple[str, ...] = tuple(SCHEMES)
    formula_alphas: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)  # spec §8
    formula_gammas: tuple[int, ...] = FORMULA_GAMMAS
    formula_costs: tuple[float, ...] = (0.1, 0.2)  # spec §8
    drafts: tuple[str, ...] = ("int8_row", "nf4_b64", DYNAMIC_INT8)  # DYNAMIC_INT8: CPU runs only
    run_gammas: tuple[int, ...] = (1, 2, 4, 8)
    new_tokens: int = 128
    repeats: int = 3
    step_repeats: int = 15
    temperatures: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5)
    exactness_draft: str = "int4_row"  # a draft that differs from the target enough to show
    exactness_positions: int = 3
    exactness_draws: int = 100_000
    exactness_temperature: float = 1.0
    sampled_temperature: float = 1.0
    sampled_gamma: int = 4
    sampled_tokens: int = 128
    seed: int = 0

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # Each fake-quantized draft step costs a full target step on a CPU: two
            # drafts, two gammas and a shorter generation keep §8 near a minute.
            return cls(
                drafts=("int8_row", DYNAMIC_INT8),
                run_gammas=(2, 4),
                new_tokens=48,
                repeats=2,
                step_repeats=10,
                sampled_tokens=96,
            )
        return cls(
            agreement_tokens=8,
            schemes=("int8_row",),
            drafts=("int8_row",),
            run_gammas=(2,),
            new_tokens=6,
            repeats=1,
            step_repeats=2,
            exactness_draft="int8_row",
            exactness_positions=2,
            exactness_draws=2_000,
            sampled_tokens=6,
        )


def _prompt(ctx: Context) -> torch.Tensor:
    """The agreement prompt of §7, so that α here is the quality page's agreement."""
    if ctx.model.tokenizer is None:
        return ctx.prompt_ids(24)
    return agreement_prompt_ids(ctx.model.tokenizer, ctx.device)


def exactness_rows(p_rows: torch.Tensor, q_rows: torch.Tensor, cfg: Config) -> list[dict]:
    """Rows of ``exactness``: at the positions where the draft differs most from the
    target (largest 1 − Σ min(p, q)), the rule's emitted tokens and the draft's own
    samples, each tested against the target's distribution p."""
    p_all = tempered(p_rows, cfg.exactness_temperature)
    q_all = tempered(q_rows, cfg.exactness_temperature)
    kept = expected_acceptance(p_all, q_all)
    positions = sorted(kept.argsort()[: cfg.exactness_positions].tolist())
    g = torch.Generator().manual_seed(cfg.seed)
    rows = []
    for i in positions:
        p, q = p_all[i], q_all[i]
        for sampler, draws in (
            ("speculative rule", emitted_tokens(p, q, cfg.exactness_draws, g)),
            ("draft alone", torch.multinomial(q, cfg.exactness_draws, replacement=True, generator=g)),
        ):
            test = chi_square_goodness_of_fit(draws, p)
            rows.append(
                {
                    "position": i,
                    "sampler": sampler,
                    "expected_acceptance": float(kept[i]),
                    "draws": cfg.exactness_draws,
                    "cells": test.cells,
                    "dof": test.dof,
                    "chi_square": test.statistic,
                    "p_value": test.p_value,
                    "rejected": test.rejects(SIGNIFICANCE),
                }
            )
    return rows


def sampled_rows(target, models: dict, ids: torch.Tensor, by_temperature: list[dict], cfg: Config) -> list[dict]:
    """Rows of ``sampled_run``: speculative sampling with each draft, seeded, timed once."""
    rows = []
    for name, draft in models.items():
        g = torch.Generator().manual_seed(cfg.seed)
        t0 = time.perf_counter()
        tokens, accepted = speculative_sampled(
            target, draft, ids, cfg.sampled_tokens, cfg.sampled_gamma, cfg.sampled_temperature, g
        )
        seconds = time.perf_counter() - t0
        alpha = next(
            r["expected_acceptance"]
            for r in by_temperature
            if r["draft"] == name and r["temperature"] == cfg.sampled_temperature
        )
        judged, kept = judged_drafts(accepted, cfg.sampled_gamma), sum(accepted)
        rows.append(
            {
                "draft": name,
                "label": draft_label(name),
                "temperature": cfg.sampled_temperature,
                "gamma": cfg.sampled_gamma,
                "new_tokens": len(tokens),
                "rounds": len(accepted),
                "judged": judged,
                "accepted": kept,
                "acceptance": kept / judged if judged else 0.0,
                "expected_acceptance": alpha,
                "predicted_tokens_per_round": expected_tokens_per_verification(alpha=alpha, gamma=cfg.sampled_gamma),
                # Every round's tokens, the last round's surplus over new_tokens included.
                "tokens_per_round": sum(n + 1 for n in accepted) / len(accepted),
                "seconds": seconds,
            }
        )
    return rows


def run(cfg: Config, ctx: Context) -> Result:
    target = ctx.model.model
    ids = _prompt(ctx)
    can_dynamic = ctx.device.type == "cpu" and ctx.dtype == torch.float32
    drafts = [d for d in cfg.drafts if d != DYNAMIC_INT8 or can_dynamic]

    ctx.log(f"  reference: the target's greedy continuation of {cfg.agreement_tokens} tokens")
    reference = reference_continuation(target, ids, cfg.agreement_tokens)
    names = list(cfg.schemes) + [d for d in drafts if d not in cfg.schemes]
    temperatures = tuple(dict.fromkeys((*cfg.temperatures, cfg.sampled_temperature)))
    acceptance, models, by_temperature, logits_of = acceptance_rows(
        target, ids, names, drafts, ctx, reference, temperatures, keep_logits=(cfg.exactness_draft,)
    )
    ctx.log(f"  exactness: the sampling rule {cfg.exactness_draws:,} times at {cfg.exactness_positions} positions")
    exactness = exactness_rows(logits_of["target"], logits_of[cfg.exactness_draft], cfg)
    del logits_of
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
        by_position += [{**r, "label": draft_label(d)} for r in position_rows(d, g, accepted, alpha)]
    ctx.log(f"  speculative sampling at T = {cfg.sampled_temperature:g}, gamma {cfg.sampled_gamma}")
    sampled = sampled_rows(target, models, ids, by_temperature, cfg)
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
        "acceptance_by_temperature": [r for r in by_temperature if r["temperature"] in cfg.temperatures],
        "exactness": exactness,
        "sampled_run": sampled,
    }
    best = max(real_rows, key=lambda r: r["measured_speedup"])
    values = {
        "prompt": AGREEMENT_PROMPT if ctx.model.tokenizer is not None else "(random token ids)",
        "agreement_tokens": cfg.agreement_tokens,
        "new_tokens": cfg.new_tokens,
        "all_identical": all(r["identical_to_greedy"] for r in real_rows),
        "runs": len(real_rows),
        "best_draft": best["label"],
        "best_gamma": best["gamma"],
        "best_measured_speedup": best["measured_speedup"],
        "best_predicted_speedup": best["predicted_speedup"],
        "significance": SIGNIFICANCE,
        "exactness_draft": draft_label(cfg.exactness_draft),
        "exactness_draws": cfg.exactness_draws,
        "exactness_temperature": cfg.exactness_temperature,
        "exact_rule_passes": not any(r["rejected"] for r in exactness if r["sampler"] == "speculative rule"),
        "draft_alone_rejected": all(r["rejected"] for r in exactness if r["sampler"] == "draft alone"),
        "sampled_temperature": cfg.sampled_temperature,
        "sampled_gamma": cfg.sampled_gamma,
        "sampled_tokens": cfg.sampled_tokens,
        "greedy_samples_ms": [round(s * 1e3, 3) for s in samples["greedy"]],
        "target_step_ms": target_step * 1e3,
    }
    return Result(tables=tables, values=values)
