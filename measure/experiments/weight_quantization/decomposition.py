"""§5's decode steps set against the run's roofline (``measure/lab/roofline.py``), and
taken apart by the profiler.

* Each kernel's compute ceiling: one projection of the model's largest shape (hidden x
  intermediate, the MLP's up projection) built as the variant builds it
  (``measure/lab/lowbit_kernels.py``), multiplying one row with its weights in cache
  (read again at every call), a point of the same interleaved sweep as the steps, timed
  in blocks of calls: the FLOP/s the kernel reaches at a decode step's one row when
  memory does not hold it back. The machine's own probes measure this for float32 and
  bfloat16 matrix multiplies only; the int8 and int4 kernels need their own.
* What each step does, counted while it runs (``measure/lab/step_counts.py``): its FLOPs
  (every projection's, the output head's, attention's) and its operators. Its bytes are
  the variant's weights as stored (the row's ``weight_bytes``: the dynamic int8 engine's
  packed weights are no tensor a count can see) and the cache's, counted.
* The prediction: max(bytes / bandwidth, FLOPs / the kernel's ceiling) + operators x
  the cost of one (the bandwidth and that cost from the run's roofline).
* ``profiled``: every variant's step profiled, interleaved (``measure/lab/profiled.py``):
  its matrix multiplies' self time (the low-bit kernels included). The rest of the step,
  its median minus that, is the work no weight format touches: attention, the norms, the
  cache's appends, the framework between the operators.
"""

from __future__ import annotations

import torch

from measure.lab import lowbit_kernels as lk
from measure.lab.generation import cache_tensors
from measure.lab.medians import Estimate
from measure.lab.prediction import prediction_cells
from measure.lab.profiled import group_estimates, profiled
from measure.lab.quantizers import projection_layers
from measure.lab.roofline import Rate, Roofline
from measure.lab.step_counts import cache_storages, count_step, weight_storages


def ceiling_probe(model: torch.nn.Module, v, *, seed: int = 0) -> tuple[object, int]:
    """A call of variant ``v``'s kernel on one row through the model's largest projection
    (its weights in cache), and the FLOPs of one call."""
    _, lin = max(projection_layers(model), key=lambda item: item[1].weight.numel())
    layer, _ = lk.build(v.kind, lin, dtype=v.dtype, group=v.group)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(1, lin.in_features, generator=g).to(device=lin.weight.device, dtype=v.dtype)

    def call() -> None:
        with torch.inference_mode():
            layer(x)

    return call, 2 * lin.in_features * lin.out_features


def kernel_roofline(roofline: Roofline, probes: dict[str, Estimate], flops: int) -> Roofline:
    """The run's roofline with, as its ceilings, each variant's kernel at one row."""

    def rate(est: Estimate) -> Rate:
        return Rate(flops / est.median_s, flops / est.high_s, flops / est.low_s)

    return Roofline(
        bandwidth=roofline.bandwidth,
        read_bandwidth=roofline.read_bandwidth,
        ceilings={name: ((1, rate(est)),) for name, est in probes.items()},
        dispatch=roofline.dispatch,
    )


def counted(prepared) -> dict:
    """A prepared variant's step, counted once (its cache set back after)."""
    c = count_step(
        prepared.step,
        weights=weight_storages(prepared.model),
        cache=cache_storages(cache_tensors(prepared.cache)),
    )
    prepared.reset()
    return c


def predicted_cells(row: dict, est: Estimate, counts, roofline: Roofline) -> dict:
    """The row's prediction cells (``prediction_columns("step")``) and its kernel's ceiling."""
    prediction = roofline.predict(
        moved_bytes=row["weight_bytes"] + counts.cache_bytes,
        flops=counts.flops,
        rows=1,
        dtype=row["variant"],
        ops=counts.ops,
    )
    return {
        "kernel_gflop_s": roofline.ceiling(row["variant"], 1).value / 1e9,
        **prediction_cells("step", est, prediction),
    }


def profiled_matmuls(steps: dict, resets: dict, *, device, seed: int, budget_s: float, target: float) -> tuple:
    """Every variant's step profiled in interleaved rounds: per variant the estimate of its
    matrix multiplies' self time, and the sweep's notes."""
    sweep, records = profiled(
        steps, device=device, seed=seed, budget_s=budget_s, target=target, before=lambda name: resets[name]()
    )
    return {name: group_estimates(records[name], target)["matmul"][0] for name in steps}, sweep.describe()


def parts_cells(step: Estimate, matmul: Estimate) -> dict:
    """The row's matrix multiplies and the rest of its step: the plain step's median minus
    the profiled multiplies', its range the cautious one (two sweeps)."""
    return {
        **matmul.columns("matmul_ms"),
        "rest_ms": step.median_ms - matmul.median_ms,
        "rest_low_ms": step.low_ms - matmul.high_ms,
        "rest_high_ms": step.high_ms - matmul.low_ms,
    }


def cap_values(rows: list[dict], reference: str) -> dict:
    """What no weight format can gain past: the reference step over the smallest rest of
    any variant (a format that made every multiply free would leave that much), with the
    cautious range; the rests' smallest and largest. Only a rest its interval holds above
    zero counts: a rest whose range reaches zero is the difference of two noisy sweeps that
    did not resolve it, and its median, however small, would set a cap of any size."""
    timed = [r for r in rows if r.get("rest_ms") is not None]
    resolved = [r for r in timed if r["rest_ms"] > 0 and (r.get("rest_low_ms") or 0) > 0]
    ref = next((r for r in timed if r["variant"] == reference), None)
    if not resolved or ref is None:  # no rest resolved: no cap to speak of
        return dict.fromkeys(("kernel_rest_min_ms", "kernel_rest_max_ms", "kernel_cap", "kernel_cap_low",
                              "kernel_cap_high"))  # fmt: skip
    least = min(resolved, key=lambda r: r["rest_ms"])
    return {
        "kernel_rest_min_ms": least["rest_ms"],
        "kernel_rest_max_ms": max(r["rest_ms"] for r in resolved),
        "kernel_cap": ref["step_ms"] / least["rest_ms"],
        "kernel_cap_low": ref["step_low_ms"] / least["rest_high_ms"],
        "kernel_cap_high": ref["step_high_ms"] / least["rest_low_ms"],
    }
