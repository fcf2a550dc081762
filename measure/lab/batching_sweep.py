"""§4 batching: the batch sweep's plumbing. Measuring each batch size in turn, stopping
at the first that runs out of device memory, and finding the knee in the step times.

Used by measure/experiments/batching.py.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Sequence

import torch

from measure.lab.timing import Timing

OOM = "out of memory"
NOT_RUN = "not run: a smaller batch ran out of memory"


def is_out_of_memory(e: BaseException) -> bool:
    """CUDA's own error, or the RuntimeError other backends raise with that message."""
    return isinstance(e, torch.OutOfMemoryError) or (isinstance(e, RuntimeError) and "out of memory" in str(e).lower())


def sweep(
    batches: Sequence[int], measure: Callable[[int], Timing], progress: Callable = iter
) -> dict[int, Timing | str]:
    """``measure(b)`` for each batch size in order. The first one that runs out of
    memory is recorded as ``OOM`` and ends the sweep (a larger batch needs more); the
    rest are recorded as not run. Any other error propagates."""
    out: dict[int, Timing | str] = {}
    for i, b in enumerate(progress(batches)):
        try:
            out[b] = measure(b)
        except RuntimeError as e:  # torch.OutOfMemoryError is a RuntimeError
            if not is_out_of_memory(e):
                raise
            out[b] = OOM
            for later in batches[i + 1 :]:
                out[later] = NOT_RUN
            break
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return out


def find_knee(points: Sequence[tuple[int, float]]) -> int | None:
    """The knee of a batch sweep: the batch size B from which every further growth to the
    next size B' makes the step at least sqrt(B'/B) times slower.

    Growing the batch by B'/B multiplies throughput by (B'/B) / slowdown, so past the
    knee throughput gains no more than latency loses; before it, growth bought more
    throughput than it cost. Requiring the test to hold for *every* later growth keeps
    one noisy point at small B from moving the knee. ``points`` are (batch, step time),
    batch increasing. None when the last growth of the sweep was still cheap.
    """
    knee = None
    for (b0, t0), (b1, t1) in zip(points, points[1:], strict=False):
        if t1 / t0 >= math.sqrt(b1 / b0):
            knee = b0 if knee is None else knee
        else:
            knee = None
    return knee


_MEASURED = (
    "step_ms",
    "spread_ms",
    "throughput_tok_s",
    "throughput_gain",
    "latency_factor",
    "gain_vs_previous",
    "slowdown_vs_previous",
)


def sweep_rows(
    batch_sizes: Sequence[int], cache_tokens: int, results: dict[int, Timing | str]
) -> tuple[list[dict], dict]:
    """Rows of the ``sweep`` table for ``batch_sizes`` (the first is the base), and the
    knee's values. A batch that did not run keeps its status and empty measurements."""
    base = results[batch_sizes[0]]
    if not isinstance(base, Timing):
        raise RuntimeError(f"the smallest batch ({batch_sizes[0]}) did not run: {base}")
    rows, prev, ok = [], None, []
    for b in batch_sizes:
        r = results[b]
        row = {"batch": b, "cache_tokens": cache_tokens, "status": "measured" if isinstance(r, Timing) else r}
        if isinstance(r, Timing):
            tput = b / r.median_s
            row |= {
                "step_ms": r.median_ms,
                "spread_ms": r.spread_ms,
                "throughput_tok_s": tput,
                "throughput_gain": tput / (batch_sizes[0] / base.median_s),
                "latency_factor": r.median_s / base.median_s,
                "gain_vs_previous": tput / (prev[0] / prev[1].median_s) if prev else None,
                "slowdown_vs_previous": r.median_s / prev[1].median_s if prev else None,
            }
            prev = (b, r)
            ok.append((b, r.median_s))
        else:
            row |= dict.fromkeys(_MEASURED)
        rows.append(row)
    knee = find_knee(ok)
    after = [b for b, _ in ok if knee is not None and b > knee]
    past = next((r for r in rows if after and r["batch"] == after[0]), None)
    values = {
        "knee_found": knee is not None,
        "knee_batch": knee if knee is not None else ok[-1][0],
        "knee_next_batch": after[0] if after else ok[-1][0],
        "knee_next_gain": past["gain_vs_previous"] if past else None,
        "knee_next_slowdown": past["slowdown_vs_previous"] if past else None,
        "largest_measured_batch": ok[-1][0],
        "out_of_memory": any(r == OOM for r in results.values()),
        "sweep_samples_ms": {str(b): r.samples_ms() for b, r in results.items() if isinstance(r, Timing)},
    }
    return rows, values


def step_costs(results: dict[int, Timing | str], slots: int) -> dict[int, float]:
    """The measured step time (median, seconds) at every occupancy 1..slots: the simulations' input."""
    costs = {}
    for k in range(1, slots + 1):
        r = results[k]
        if not isinstance(r, Timing):
            raise RuntimeError(f"the simulations need a measured step at occupancy {k}, which did not run: {r}")
        costs[k] = r.median_s
    return costs
