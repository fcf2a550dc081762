"""§4 batching: the batch sweep's plumbing. Preparing each batch size in turn, stopping
at the first that runs out of device memory, and finding the knee in the step times
(the medians of their interleaved samples).
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch

from measure.lab.medians import Estimate, ratio

OOM = "out of memory"
NOT_RUN = "not run: a smaller batch ran out of memory"
T = TypeVar("T")


def is_out_of_memory(e: BaseException) -> bool:
    """CUDA's own error, or the RuntimeError other backends raise with that message."""
    return isinstance(e, torch.OutOfMemoryError) or (isinstance(e, RuntimeError) and "out of memory" in str(e).lower())


def sweep(batches: Sequence[int], measure: Callable[[int], T], progress: Callable = iter) -> dict[int, T | str]:
    """``measure(b)`` for each batch size in order. The first one that runs out of
    memory is recorded as ``OOM`` and ends the sweep (a larger batch needs more); the
    rest are recorded as not run. Any other error propagates."""
    out: dict[int, T | str] = {}
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


# Why the extended sweep stopped (besides OOM, the status of a batch that did not fit).
KNEE_ESTABLISHED = "the knee is established"
CAP_REACHED = "the next batch would pass the cap on batch size"
WOULD_NOT_FIT = "the next batch's estimated memory would not fit"
BUDGET_SPENT = "the next batch would overrun the time budget"


def next_batch(
    points: Sequence[tuple[int, float]],
    *,
    last_status: str,
    cap: int,
    confirmations: int,
    fits: Callable[[int], bool],
    spent_s: float,
    last_cost_s: float,
    budget_s: float,
) -> int | str:
    """The next batch size of a sweep extended by doubling, or why it stops there.

    It stops when the last batch ran out of memory; when the data show a knee
    (``find_knee``) with at least ``confirmations`` measured growths past it, since one
    growth alone could be a noisy point; when doubling would pass ``cap``; when
    ``fits`` says the doubled batch would not fit in memory; or when measuring it,
    estimated at twice what the last batch cost (double the work, at worst double the
    time), would take the time spent past ``budget_s``. ``points`` are the measured
    (batch, step time), batch increasing."""
    if last_status == OOM:
        return OOM
    knee = find_knee(points)
    if knee is not None and sum(1 for b, _ in points if b > knee) >= confirmations:
        return KNEE_ESTABLISHED
    b = 2 * points[-1][0]
    if b > cap:
        return CAP_REACHED
    if not fits(b):
        return WOULD_NOT_FIT
    if spent_s + 2 * last_cost_s > budget_s:
        return BUDGET_SPENT
    return b


def extend_sweep(
    results: dict[int, object],
    batches: Sequence[int],
    measure: Callable[[int], object],
    *,
    seconds: Callable[[object], float],
    last_cost_s: float,
    clock: Callable[[], float] = time.perf_counter,
    **rule,
) -> tuple[list[int], str, float]:
    """Doubles the batch past the sweep of ``batches`` in ``results`` (batch -> a
    measurement, or a status; other batches there are ignored) while ``next_batch``
    says so, measuring each new batch into ``results`` (out of memory recorded as
    ``OOM``, as ``sweep`` does). ``seconds`` reads a
    measurement's step time; ``last_cost_s`` is what measuring the sweep's last batch
    took. Returns the batches added, why it stopped, and the seconds it spent."""
    if any(r == OOM for r in results.values()):
        return [], OOM, 0.0
    added, spent = [], 0.0
    while True:
        swept = sorted({*batches, *added})
        points = [(b, seconds(results[b])) for b in swept if not isinstance(results[b], str)]
        status = OOM if any(r == OOM for r in results.values()) else "measured"
        decision = next_batch(points, last_status=status, spent_s=spent, last_cost_s=last_cost_s, **rule)
        if isinstance(decision, str):
            return added, decision, spent
        t0 = clock()
        results |= sweep([decision], measure)
        last_cost_s = clock() - t0
        spent += last_cost_s
        added.append(decision)


def available_bytes(device: torch.device) -> int:
    """Memory a new batch could still take: the device's free memory on CUDA, the
    kernel's estimate of what can be allocated without swapping (MemAvailable) on CPU."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # reported in kB (KiB)
    raise OSError("MemAvailable not in /proc/meminfo")


_MEASURED = ("step_ms", "step_low_ms", "step_high_ms", "step_samples", "throughput_tok_s", "throughput_gain",
             "latency_factor")  # fmt: skip


def sweep_rows(batch_sizes: Sequence[int], cache_tokens: int, results: dict) -> tuple[list[dict], list[dict], dict]:
    """Rows of the ``sweep`` table for ``batch_sizes`` (the first is the base) and of the
    ``growths`` table (each measured batch against the measured one before it), and the
    knee's values. ``results`` holds per batch an object with the eager step's
    ``Estimate`` as ``eager``, or a status. Each step is a median with its 95 % interval;
    each growth's slowdown the ratio of the two steps paired round by round where they
    share a sweep (``medians.ratio``, with its interval), and its throughput factor the
    growth of the batch over it. The knee is found on the medians (``find_knee``). A batch
    that did not run keeps its status and empty measurements."""
    base = results[batch_sizes[0]]
    if isinstance(base, str):
        raise RuntimeError(f"the smallest batch ({batch_sizes[0]}) did not run: {base}")
    rows, growths, prev, ok = [], [], None, []
    for b in batch_sizes:
        r = results[b]
        row = {"batch": b, "cache_tokens": cache_tokens, "status": r if isinstance(r, str) else "measured"}
        if not isinstance(r, str):
            tput = b / r.eager.median_s
            row |= {
                **r.eager.columns("step_ms"),
                "throughput_tok_s": tput,
                "throughput_gain": tput / (batch_sizes[0] / base.eager.median_s),
                "latency_factor": r.eager.median_s / base.eager.median_s,
            }
            if prev:
                growths.append(growth_row(prev[0], prev[1].eager, b, r.eager))
            prev = (b, r)
            ok.append((b, r.eager.median_s))
        else:
            row |= dict.fromkeys(_MEASURED)
        rows.append(row)
    knee = find_knee(ok)
    after = [b for b, _ in ok if knee is not None and b > knee]
    past = next((g for g in growths if after and g["batch"] == after[0]), None)
    values = {
        "knee_found": knee is not None,
        "knee_batch": knee if knee is not None else ok[-1][0],
        "knee_next_batch": after[0] if after else ok[-1][0],
        "knee_next_gain": past["gain"] if past else None,
        "knee_next_slowdown": past["slowdown"] if past else None,
        "largest_measured_batch": ok[-1][0],
        "out_of_memory": any(r == OOM for r in results.values()),
        "sweep_samples_ms": {str(b): r.eager.samples_ms() for b, r in results.items() if not isinstance(r, str)},
    }
    return rows, growths, values


def growth_row(b0: int, e0: Estimate, b1: int, e1: Estimate) -> dict:
    """One growth of the batch from ``b0`` to ``b1``: the step's slowdown, paired round by
    round where the two share a sweep (``medians.ratio``), and the throughput factor it
    leaves, (b1 / b0) / slowdown, its range from the slowdown's the other way round."""
    slowdown = ratio(e1, e0)
    grown = b1 / b0
    return {
        "from_batch": b0,
        "batch": b1,
        "slowdown": slowdown[0],
        "slowdown_low": slowdown[1],
        "slowdown_high": slowdown[2],
        "gain": grown / slowdown[0],
        "gain_low": grown / slowdown[2],
        "gain_high": grown / slowdown[1],
    }


def step_costs(results: dict, slots: int) -> dict:
    """The measured step at every occupancy 1..slots (each batch's result, as
    ``results`` holds it): the simulations' input (they take its median, and each
    round's sample for the ratios' ranges)."""
    costs = {}
    for k in range(1, slots + 1):
        r = results[k]
        if isinstance(r, str):
            raise RuntimeError(f"the simulations need a measured step at occupancy {k}, which did not run: {r}")
        costs[k] = r
    return costs
