"""§8's real runs: greedy speculative decoding with every draft and gamma, once each for
its tokens and rounds; every run's wall time predicted from the passes the step sweep
timed; and plain greedy decoding with the runs the prediction puts first, timed.

A run of N tokens is a prefill of the prompt by the target and by the draft, then one
round per verification, each round gamma draft steps and one target pass over gamma + 1
tokens; plain greedy decoding is the target's prefill and N - 1 steps. So, from the
passes of ``algorithm.step_sweep`` (medians, and the ends of their intervals for the
range) and the rounds the run made::

    predicted run  = prefill(target) + prefill(draft) + rounds x (gamma x draft step + verify(gamma))
    predicted plain = prefill(target) + (N - 1) x target step

Timing every run for real takes a generation per run per round, six rounds at least: a
minute and more on two cores for a handful of configurations. The prediction spends
those rounds where they settle something: only plain greedy and the ``timed`` runs the
prediction puts first are timed, in one interleaved sweep, and each timed run carries
its measured time over the predicted one.
"""

from __future__ import annotations

from functools import partial

from measure.experiments.speculative_decoding.algorithm import speculative_greedy
from measure.lab.context import Context
from measure.lab.generation import greedy_cached
from measure.lab.medians import Estimate, ratio_cells
from measure.lab.sampling import interleaved


def untimed_runs(target, models: dict, ids, runs: list, *, new_tokens: int) -> tuple[list[int], dict]:
    """Plain greedy decoding's tokens and every run's (tokens, accepted per round), one
    call each (the tokens are the same at every call)."""
    plain = greedy_cached(target, ids, new_tokens)[0].tolist()
    return plain, {(d, g): speculative_greedy(target, models[d], ids, new_tokens, g) for d, g in runs}


def _sum(parts: list[tuple[float, Estimate]], end: str) -> float:
    """Σ count x the estimate's ``end`` (median, low or high), in seconds."""
    return sum(n * getattr(e, f"{end}_s") for n, e in parts)


def predicted(passes: dict, *, draft: str | None, gamma: int, rounds: int, new_tokens: int) -> dict:
    """The predicted wall time of a run (``draft`` None: plain greedy decoding), seconds
    at the median and at both ends of every pass's interval (see the module's docstring)."""
    if draft is None:
        parts = [(1, passes[("prefill", "target")]), (new_tokens - 1, passes[("target", 1)])]
    else:
        parts = [
            (1, passes[("prefill", "target")]),
            (1, passes[("prefill", draft)]),
            (rounds * gamma, passes[("draft", draft)]),
            (rounds, passes[("target", gamma + 1)]),
        ]
    return {end: _sum(parts, end) for end in ("median", "low", "high")}


def predicted_cells(passes: dict, *, draft: str, gamma: int, rounds: int, new_tokens: int) -> dict:
    """A run's predicted time (ms, with its range) and its predicted speed-up over plain
    greedy decoding, the range from the slow end of the one over the fast end of the other."""
    run = predicted(passes, draft=draft, gamma=gamma, rounds=rounds, new_tokens=new_tokens)
    plain = predicted(passes, draft=None, gamma=gamma, rounds=rounds, new_tokens=new_tokens)
    return {
        "predicted_ms": run["median"] * 1e3,
        "predicted_low_ms": run["low"] * 1e3,
        "predicted_high_ms": run["high"] * 1e3,
        "predicted_run_speedup": plain["median"] / run["median"],
        "predicted_run_speedup_low": plain["low"] / run["high"],
        "predicted_run_speedup_high": plain["high"] / run["low"],
    }


def timed_runs(target, models: dict, ids, runs: list, *, new_tokens: int, ctx: Context, cfg):
    """Plain greedy decoding (the point ``"greedy"``) and each (draft, gamma) of ``runs``,
    the points of one interleaved sweep, with no warm-up round: the runs were each called
    once before, and a generation is dozens of forward passes, so a first timed call is a
    sample like the others."""
    points = {"greedy": partial(greedy_cached, target, ids, new_tokens)}
    for d, g in runs:
        points[(d, g)] = partial(speculative_greedy, target, models[d], ids, new_tokens, g)
    ctx.log(f"  {len(points)} generations interleaved (budget {cfg.run_budget_s:g} s)")
    return interleaved(
        points, device=ctx.device, seed=cfg.run_seed, budget_s=cfg.run_budget_s, target=cfg.target, warmup=0
    )


def measured_cells(greedy: Estimate, spec: Estimate, prediction_ms: tuple[float, float, float]) -> dict:
    """A timed run's cells: plain greedy's time and its own, the speed-up paired round by
    round, and its time over the predicted one (the cautious range)."""
    value, low, high = prediction_ms
    return {
        **greedy.columns("greedy_ms"),
        **spec.columns("speculative_ms"),
        **ratio_cells("measured_speedup", greedy, spec),
        "measured_over_predicted": spec.median_ms / value,
        "measured_over_predicted_low": spec.low_ms / high,
        "measured_over_predicted_high": spec.high_ms / low,
    }
