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
  draft relative to the target's (c), and of verifying gamma + 1 tokens in one pass;
  every pass a point of one interleaved sweep (measure/lab/sampling.py), each median
  with its 95 % interval, each ratio paired round by round, with its interval.
* ``real_run``: greedy speculative decoding actually run, per draft and gamma: the
  output checked token for token against plain greedy decoding of the target, tokens
  per round, wall time against plain greedy (plain greedy and every run the points of
  a second sweep, the tokens from each point's first call), and the formula's
  prediction beside it.
* ``acceptance_by_position``: how often the i-th drafted token of a round was kept,
  given that the ones before it were.
* ``acceptance_by_temperature``: speculative *sampling* (``sampling``) keeps a drafted
  token with probability Σ min(p_T, q_T); its mean over the positions of the agreement
  text, per draft and temperature T (T = 0 is greedy, where it is α).
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
real int8 matrix kernels and so can be cheaper.

The package: ``tables`` declares what is written and ``config`` holds the parameters;
``algorithm`` holds the drafts and greedy speculative decoding itself, ``sampling`` the
sampling rule and its test, ``sampling_rows`` the two tables built from them; the rest
is here.

Writes ``site_data/speculative_decoding/``. Alone: ``python -m measure run --only speculative_decoding``.
"""

from __future__ import annotations

import gc

import torch

from measure.experiments.speculative_decoding.acceptance import acceptance_rows, position_rows
from measure.experiments.speculative_decoding.algorithm import REAL_KERNELS, cost_rows_of, draft_label, formula_rows
from measure.experiments.speculative_decoding.config import Config
from measure.experiments.speculative_decoding.runs import measured_cells, predicted_cells, timed_runs, untimed_runs
from measure.experiments.speculative_decoding.sampling import SIGNIFICANCE
from measure.experiments.speculative_decoding.sampling_rows import exactness_rows, sampled_rows
from measure.experiments.speculative_decoding.tables import TABLES, VALUES
from measure.lab.context import Context
from measure.lab.evaluation import AGREEMENT_PROMPT, agreement_prompt_ids, reference_continuation
from measure.lab.formulas import expected_tokens_per_verification, speculative_speedup
from measure.lab.medians import ratio_cells
from sitedata.schema import Result

__all__ = ["NEEDS_TRAINED", "TABLES", "TITLE", "VALUES", "Config", "run"]

TITLE = "Speculative decoding"
NEEDS_TRAINED = True  # acceptance is agreement between trained models


def _prompt(ctx: Context) -> torch.Tensor:
    """The agreement prompt of §7, so that α here is the quality page's agreement."""
    if ctx.model.tokenizer is None:
        return ctx.prompt_ids(24)
    return agreement_prompt_ids(ctx.model.tokenizer, ctx.device)


def run(cfg: Config, ctx: Context) -> Result:
    target = ctx.model.model
    ids = _prompt(ctx)
    # the low-bit kernels' drafts run on a CPU, and take the float32 model they quantize
    can_kernels = ctx.device.type == "cpu" and ctx.dtype == torch.float32
    drafts = [d for d in cfg.drafts if d not in REAL_KERNELS or can_kernels]

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
    target_step, cost_rows, verify_rows, passes, step_notes = cost_rows_of(
        target, models, ids, cfg.run_gammas, ctx, cfg
    )
    cost_of = {r["draft"]: r["draft_cost"] for r in cost_rows}
    verify_of = {r["gamma"]: r["relative_to_one_step"] for r in verify_rows}

    ctx.log(f"  speculative decoding for real: {cfg.new_tokens} tokens, drafts {', '.join(drafts)}")
    runs = [(d, g) for d in drafts for g in cfg.run_gammas]
    plain, results = untimed_runs(target, models, ids, runs, new_tokens=cfg.new_tokens)
    real_rows, by_position = [], []
    for d, g in runs:
        tokens, accepted = results[(d, g)]
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
                **predicted_cells(passes, draft=d, gamma=g, rounds=len(accepted), new_tokens=cfg.new_tokens),
            }
        )
        by_position += [{**r, "label": draft_label(d)} for r in position_rows(d, g, accepted, alpha)]
    ranked = sorted(real_rows, key=lambda r: -r["predicted_run_speedup"])
    timed = [(r["draft"], r["gamma"]) for r in ranked[: cfg.timed_runs]]
    sweep = timed_runs(target, models, ids, timed, new_tokens=cfg.new_tokens, ctx=ctx, cfg=cfg)
    greedy = sweep.points["greedy"]
    columns = next(t for t in TABLES if t.name == "real_run").column_names
    for r in real_rows:
        key = (r["draft"], r["gamma"])
        r["timed"] = key in timed
        if r["timed"]:
            r |= measured_cells(
                greedy, sweep.points[key], (r["predicted_ms"], r["predicted_low_ms"], r["predicted_high_ms"])
            )
    real_rows = [dict.fromkeys(columns) | r for r in real_rows]
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
    measured = sorted((r for r in real_rows if r["timed"]), key=lambda r: -r["measured_speedup"])
    best = measured[0]
    values = {
        "prompt": AGREEMENT_PROMPT if ctx.model.tokenizer is not None else "(random token ids)",
        "agreement_tokens": cfg.agreement_tokens,
        "new_tokens": cfg.new_tokens,
        "all_identical": all(r["identical_to_greedy"] for r in real_rows),
        "runs": len(real_rows),
        "best_draft": best["label"],
        "best_gamma": best["gamma"],
        "best_measured_speedup": best["measured_speedup"],
        "best_measured_speedup_low": best["measured_speedup_low"],
        "best_measured_speedup_high": best["measured_speedup_high"],
        "best_predicted_speedup": best["predicted_speedup"],
        "best_predicted_run_speedup": best["predicted_run_speedup"],
        "timed_runs": len(measured),
        "predicted_first_draft": ranked[0]["label"],
        "predicted_first_gamma": ranked[0]["gamma"],
        **{f"predicted_first_speedup{e}": ranked[0][f"predicted_run_speedup{e}"] for e in ("", "_low", "_high")},
        **_runner_up(measured, sweep),
        "significance": SIGNIFICANCE,
        "exactness_draft": draft_label(cfg.exactness_draft),
        "exactness_draws": cfg.exactness_draws,
        "exactness_temperature": cfg.exactness_temperature,
        "exact_rule_passes": not any(r["rejected"] for r in exactness if r["sampler"] == "speculative rule"),
        "draft_alone_rejected": all(r["rejected"] for r in exactness if r["sampler"] == "draft alone"),
        "sampled_temperature": cfg.sampled_temperature,
        "sampled_gamma": cfg.sampled_gamma,
        "sampled_tokens": cfg.sampled_tokens,
        "greedy_samples_ms": greedy.samples_ms(),
        "target_step_ms": target_step.median_ms,
    }
    notes = {"step_sweep": step_notes, "run_sweep": sweep.describe()}
    return Result(tables=tables, values=values, notes=notes)


def _runner_up(measured: list[dict], sweep) -> dict:
    """The second fastest timed run, and its time over the fastest's, paired round by
    round: where its range lies within the margin, the two are not told apart."""
    if len(measured) < 2:
        return dict.fromkeys(("runner_up_draft", "runner_up_gamma", "runner_up_over_best", "runner_up_over_best_low",
                              "runner_up_over_best_high"))  # fmt: skip
    best, second = measured[0], measured[1]
    return {
        "runner_up_draft": second["label"],
        "runner_up_gamma": second["gamma"],
        **ratio_cells(
            "runner_up_over_best",
            sweep.points[(second["draft"], second["gamma"])],
            sweep.points[(best["draft"], best["gamma"])],
        ),
    }
