"""Where an eager decode step stands on this machine, measured: what its time is spent on,
set beside what the run's roofline (``measure/lab/roofline.py``, probed by the run's
calibration) predicts for it.

* ``breakdown``: the step (batch 1) under ``torch.profiler`` (CPU activities), profiled
  alone once per round at the smallest context and at ``flat_up_to``, interleaved
  (``sampling.interleaved`` with a timer that profiles each call). Every operator's self
  time is summed by group (``GROUPS``); what the profiled step's wall time holds beyond
  all of them is Python, transformers and the dispatcher between the operators (and the
  profiler's own records, which is why the profiled step is slower than the plain one).
  Each group's time has the 95 % interval of its median over the profiled steps.
* ``regime_values``: the step's three terms by the roofline, each with its range: its
  operators (counted exactly, ``op_counting.count_ops``) at the run's fixed cost per
  operator, its arithmetic at the run's one-row compute ceiling, its bytes at the run's
  bandwidth; and the read rate its matrix multiplies reached under the profiler.
"""

from __future__ import annotations

from functools import partial

from measure.lab.context import Context
from measure.lab.generation import crop_cache, decode_step, random_cache
from measure.lab.profiled import GROUPS, group_estimates, group_of, profiled
from measure.lab.roofline import Rate, Roofline
from sitedata.schema import interval_names

__all__ = ["breakdown", "group_of", "regime_values"]


def breakdown(cfg, ctx: Context, contexts: tuple[int, ...]) -> tuple[list[dict], dict]:
    """The ``breakdown`` rows at each context, and the sweep's notes."""
    model = ctx.model.model
    token = ctx.prompt_ids(1)
    caches = {c: random_cache(model, batch=1, tokens=c) for c in contexts}
    points = {c: partial(decode_step, model, token, caches[c]) for c in contexts}
    ctx.log(f"  profiling the eager step at contexts {', '.join(map(str, contexts))}, interleaved")
    sweep, records = profiled(
        points,
        device=ctx.device,
        seed=cfg.breakdown_seed,
        budget_s=cfg.breakdown_budget_s,
        target=cfg.target,
        before=lambda c: crop_cache(caches[c], c),
    )
    rows = []
    for c in contexts:
        step = sweep.points[c]
        for group, (est, calls) in group_estimates(records[c], cfg.target).items():
            rows.append(
                {
                    "cache_tokens": c,
                    "part": GROUPS[group],
                    "calls": calls,
                    **est.columns("self_ms"),
                    "share": est.median_s / step.median_s,
                }
            )
    return rows, {"breakdown_sweep": sweep.describe()}


def _cell(rows: list[dict], c: int, group: str, column: str = "self_ms"):
    return next(r[column] for r in rows if r["cache_tokens"] == c and r["part"] == GROUPS[group])


def _triple(name: str, rate: Rate | None, scale: float) -> dict:
    """``name`` and its range (``<name>_low``, ``<name>_high`` before a unit suffix)."""
    low, high, _ = interval_names(name)
    if rate is None:
        return dict.fromkeys((name, low, high))
    return {name: rate.value * scale, low: rate.low * scale, high: rate.high * scale}


def regime_values(
    *, roof: Roofline, calibrated: Roofline, ops: int, step_s: float, dtype: str, counts: dict, rows: list[dict]
) -> dict:
    """The values that place the step (the eager step at the smallest context, ``step_s``)
    under the roofline: its fixed cost, its arithmetic and its memory terms, each with
    its range, by ``roof`` (the terms the step was predicted with); the machine's balance
    point and the matrix multiplies' share of the copy bandwidth by ``calibrated`` (the
    run's, as the methods page gives it). ``counts`` holds the step's FLOPs and FLOPs per
    byte, the projections' bytes and the contexts profiled."""
    flops = counts["step_flops"]
    lo, hi = counts["contexts"][0], counts["contexts"][-1]
    mm = [r for r in rows if r["cache_tokens"] == lo and r["part"] == GROUPS["matmul"]][0]
    fixed = roof.dispatch.times(ops)
    arithmetic = roof.ceiling(dtype, 1).inverse(flops)
    values = {
        "ops_per_step": ops,
        **_triple("operator_us", roof.dispatch, 1e6),
        **_triple("trivial_us", roof.trivial, 1e6),
        **_triple("fixed_ms", fixed, 1e3),
        "fixed_share": fixed.value / step_s,
        "step_flops": flops,
        **_triple("arithmetic_ms", arithmetic, 1e3),
        "arithmetic_share": arithmetic.value / step_s,
        **_triple("one_row_gflops", roof.ceiling(dtype, 1), 1e-9),
        **_triple("peak_gflops", roof.peak(dtype), 1e-9),
        **_triple("balance_flops_per_byte", calibrated.balance(dtype), 1.0),
        "decode_flops_per_byte": counts["step_flops_per_byte"],
        "projection_bytes": counts["projection_bytes"],
        "matmul_read_gb_s": counts["projection_bytes"] / mm["self_ms"] / 1e6,
        "matmul_read_low_gb_s": counts["projection_bytes"] / mm["self_high_ms"] / 1e6,
        "matmul_read_high_gb_s": counts["projection_bytes"] / mm["self_low_ms"] / 1e6,
        "matmul_read_share": counts["projection_bytes"] / mm["self_ms"] / 1e6 / (calibrated.bandwidth.value / 1e9),
        "profiled_step_ms": _cell(rows, lo, "step"),
    }
    for group in GROUPS:
        if group != "step":
            values[f"breakdown_{group}_share"] = _cell(rows, lo, group, "share")
        values |= _rise(rows, lo, hi, group)
    return values


def _rise(rows: list[dict], lo: int, hi: int, group: str) -> dict:
    """A group's self time at context ``hi`` less at ``lo``, with the cautious range of a
    difference of two medians (each end against the other's far end): a rise near zero
    has no relative noise of its own, and its range is what says whether it moved."""
    name = f"breakdown_rise_{group}_ms"
    low, high, _ = interval_names(name)
    at = {c: {col: _cell(rows, c, group, col) for col in ("self_ms", "self_low_ms", "self_high_ms")} for c in (lo, hi)}
    return {
        name: at[hi]["self_ms"] - at[lo]["self_ms"],
        low: at[hi]["self_low_ms"] - at[lo]["self_high_ms"],
        high: at[hi]["self_high_ms"] - at[lo]["self_low_ms"],
    }
