"""Where an eager decode step stands on this machine, measured: what its time is spent on,
and the three bounds beside it.

* ``breakdown``: the step (batch 1) under ``torch.profiler`` (CPU activities), profiled
  alone once per round at the smallest context and at ``flat_up_to``, interleaved
  (``sampling.interleaved`` with a timer that profiles each call). Every operator's self
  time is summed by group (``GROUPS``); what the profiled step's wall time holds beyond
  all of them is Python, transformers and the dispatcher between the operators (and the
  profiler's own records, which is why the profiled step is slower than the plain one).
  Each group's time has the 95 % interval of its median over the profiled steps.
* the operators one step dispatches, counted exactly (a ``TorchDispatchMode`` sees every
  ATen operator the step calls from Python).
* two probes, interleaved: one trivial operator (``torch.add`` of two one-element
  tensors, ``dispatch_calls`` in a row, so the clock's own cost is spread over them),
  the cost of an operator that does no work; and one ``n x n`` matmul in the run's
  dtype, the FLOP/s of large matrix arithmetic on this device.

From them: the step's arithmetic at that rate, its operators' dispatch at that cost, and
its memory floor at the run's bandwidth, each against the measured step.
"""

from __future__ import annotations

from functools import partial

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from measure.experiments.prefill_decode.tables import GROUPS
from measure.lab.context import Context
from measure.lab.generation import crop_cache, decode_step, random_cache
from measure.lab.medians import Estimate
from measure.lab.profiled import group_estimates, group_of, profiled
from measure.lab.sampling import interleaved

__all__ = ["breakdown", "count_ops", "group_of", "probes", "regime_values"]


class _Counting(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def count_ops(fn) -> int:
    """The ATen operators ``fn()`` dispatches."""
    with _Counting() as counting, torch.inference_mode():
        fn()
    return counting.calls


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


def probes(cfg, ctx: Context) -> tuple[Estimate, Estimate, int, dict]:
    """One trivial operator's cost (per call) and one matmul's time, interleaved; the
    matmul's size."""
    device, n = ctx.device, cfg.matmul_size if ctx.device.type == "cpu" else cfg.matmul_size_cuda
    x, y = torch.ones(1, device=device), torch.ones(1, device=device)
    g = torch.Generator(device="cpu").manual_seed(cfg.probe_seed)
    a, b = (torch.randn(n, n, generator=g).to(device=device, dtype=ctx.dtype) for _ in range(2))

    def dispatch() -> None:
        for _ in range(cfg.dispatch_calls):
            torch.add(x, y)

    ctx.log(f"  probes: {cfg.dispatch_calls} trivial operators, and a {n} x {n} matmul, interleaved")
    sweep = interleaved(
        {"dispatch": dispatch, "matmul": partial(torch.mm, a, b)},
        device=device,
        seed=cfg.probe_seed,
        budget_s=cfg.probe_budget_s,
        target=cfg.target,
    )
    per_op = sweep.points["dispatch"].scaled(1 / cfg.dispatch_calls)
    return per_op, sweep.points["matmul"], n, {"probe_sweep": sweep.describe()}


def _cell(rows: list[dict], c: int, group: str, column: str = "self_ms"):
    return next(r[column] for r in rows if r["cache_tokens"] == c and r["part"] == GROUPS[group])


def regime_values(
    *,
    per_op: Estimate,
    matmul: Estimate,
    n: int,
    ops: int,
    step_s: float,
    ctx: Context,
    counts: dict,
    rows: list[dict],
) -> dict:
    """The values that place the step (the eager step at the smallest context, ``step_s``)
    between its bounds: dispatch, arithmetic and memory; ``counts`` holds the step's
    FLOPs, the weights' and projections' bytes and the contexts profiled."""
    cal = ctx.calibration
    rate = 2 * n**3 / matmul.median_s
    rate_low, rate_high = 2 * n**3 / matmul.high_s, 2 * n**3 / matmul.low_s
    flops = counts["step_flops"]
    lo, hi = counts["contexts"][0], counts["contexts"][-1]
    mm = [r for r in rows if r["cache_tokens"] == lo and r["part"] == GROUPS["matmul"]][0]
    values = {
        "ops_per_step": ops,
        "dispatch_us": per_op.median_ms * 1e3,
        "dispatch_low_us": per_op.low_ms * 1e3,
        "dispatch_high_us": per_op.high_ms * 1e3,
        "dispatch_ms": ops * per_op.median_ms,
        "dispatch_low_ms": ops * per_op.low_ms,
        "dispatch_high_ms": ops * per_op.high_ms,
        "dispatch_share": ops * per_op.median_s / step_s,
        "matmul_size": n,
        "matmul_gflop_s": rate / 1e9,
        "matmul_low_gflop_s": rate_low / 1e9,
        "matmul_high_gflop_s": rate_high / 1e9,
        "step_flops": flops,
        "arithmetic_ms": flops / rate * 1e3,
        "arithmetic_low_ms": flops / rate_high * 1e3,
        "arithmetic_high_ms": flops / rate_low * 1e3,
        "arithmetic_share": flops / rate / step_s,
        "ridge_flops_per_byte": rate / cal.bandwidth_bytes_per_s,
        "ridge_low_flops_per_byte": rate_low / cal.bandwidth_high_bytes_per_s,
        "ridge_high_flops_per_byte": rate_high / cal.bandwidth_low_bytes_per_s,
        "decode_flops_per_byte": counts["step_flops_per_byte"],
        "projection_bytes": counts["projection_bytes"],
        "matmul_read_gb_s": counts["projection_bytes"] / mm["self_ms"] / 1e6,
        "matmul_read_low_gb_s": counts["projection_bytes"] / mm["self_high_ms"] / 1e6,
        "matmul_read_high_gb_s": counts["projection_bytes"] / mm["self_low_ms"] / 1e6,
        "profiled_step_ms": _cell(rows, lo, "step"),
    }
    for group in GROUPS:
        if group != "step":
            values[f"breakdown_{group}_share"] = _cell(rows, lo, group, "share")
        values[f"breakdown_rise_{group}_ms"] = _cell(rows, hi, group) - _cell(rows, lo, group)
    return values
