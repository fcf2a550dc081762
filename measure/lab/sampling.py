"""One timing method for a shared, noisy machine: the points of a sweep measured in
interleaved rounds, until each median's 95 % interval is as narrow as asked.

``interleaved`` times every point of a sweep once per round, in a fresh random order
each round (``random.Random(seed + round)``, the seed recorded), after each point's own
warm-up; so a machine that slows down for a while slows every point a little instead
of drawing a shape on the few it was measuring then. After ``min_rounds`` a round
measures only the points whose interval is still wider than ``target``: the time goes
where the intervals need it. It stops when every point meets its target, when
``budget_s`` (wall time, warm-up included) is spent, or after ``max_rounds``; a point
that missed its width says so (``Estimate.met``).

Why not a library. ``torch.utils.benchmark`` times one statement at a time: a sweep's
points cannot be interleaved (the remedy for drift), and ``adaptive_autorange`` stops on
IQR / median, a spread of the samples, not an interval of the median. pyperf reports
mean ± standard deviation over a process per sample (reloading the model each time; and
an outlier moves a mean). asv's ``statistics.quantile_ci`` is the interval used here
(``measure/lab/medians.py``, checked against scipy, which the GPU machine lacks). Blocks
of steps per sample (``blocked_autorange``) were tried on this kind of machine and
widened the interval: a block's mean keeps the stalls that a median of single steps
leaves out. A sample is one call, then, unless the call is quicker than ``min_sample_s``:
such a point (a few microseconds of one attention head, where the clock and the
interpreter are most of a lone call) is timed as a block of calls that fills
``min_sample_s``, each sample the block's mean per call, as timeit and pyperf loop a
quick statement.

How to time a sweep (the pattern every experiment follows): one call over all points,
then one row per point::

    ids = {p: ctx.prompt_ids(p) for p in cfg.prompt_lengths}
    sweep = interleaved({p: (lambda ids=ids[p]: prefill(model, ids)) for p in ids},
                        device=ctx.device, seed=cfg.seed, budget_s=cfg.prefill_budget_s)
    for p, est in sweep.points.items():
        rows.append({"prompt_tokens": p, **est.columns("time_ms"), "tokens_per_s": p / est.median_s})
    notes["prefill_sweep"] = sweep.describe()

(``columns("time_ms")`` gives the cells ``interval_columns("time_ms", "ms")`` declares.)
Bind each point's inputs as a default argument, or every lambda sees the last. A decode
step that grows its cache takes ``before=lambda k: crop_cache(caches[k], k)`` (untimed).
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Generic, TypeVar

from measure.lab.medians import MIN_ROUNDS, Estimate, is_minimal
from measure.lab.timing import synchronize

K = TypeVar("K", bound=Hashable)
_SWEEPS = itertools.count(1)  # tells the sweeps of a run apart: only their points pair


def budget(seconds: float) -> float:
    """A timing budget as it applies now: ``seconds``, or 0 within ``minimal_rounds``.
    Every loop that samples until a budget is spent reads its budget through this."""
    return 0.0 if is_minimal() else seconds


@dataclass(frozen=True)
class Sweep(Generic[K]):
    points: dict[K, Estimate]
    seed: int
    rounds: int  # rounds begun (the last may have been cut short by the budget)
    seconds: float  # wall time of the sampling, warm-up included
    budget_s: float
    target: float
    calls: dict[K, int] = field(default_factory=dict)  # calls per sample, each point's (1 but for blocks)

    def describe(self) -> dict:
        """What provenance and notes record about how the sweep was sampled."""
        missed = [_named(k) for k, e in self.points.items() if not e.met]
        return {
            "seed": self.seed,
            "rounds": self.rounds,
            "seconds": round(self.seconds, 3),
            "budget_s": self.budget_s,
            "target": self.target,
            "points": len(self.points),
            "met": len(self.points) - len(missed),
            "missed": missed,
            "samples": sum(e.n for e in self.points.values()),
        } | self._blocks()

    def _blocks(self) -> dict:
        """Each point's calls per sample, where some point was timed in blocks."""
        if all(n == 1 for n in self.calls.values()):
            return {}
        return {"calls_per_sample": {_named(k): n for k, n in self.calls.items()}}


def _named(key) -> str:
    """A point's key as the notes name it: a tuple's parts joined by spaces."""
    return " ".join(map(str, key)) if isinstance(key, tuple) else str(key)


def round_order(keys, seed: int, round_: int) -> list:
    """The order of round ``round_`` (0 is the warm-up): ``keys`` shuffled by
    ``random.Random(seed + round_)``."""
    order = list(keys)
    random.Random(seed + round_).shuffle(order)
    return order


def host_timer(device, now: Callable[[], float] = time.perf_counter) -> Callable[[Callable[[], object]], float]:
    """Seconds one call takes on the host clock, the device synchronised on both sides
    (on a GPU kernels are queued asynchronously: an unsynchronised clock sees the launch)."""

    def timer(fn: Callable[[], object]) -> float:
        synchronize(device)
        t0 = now()
        fn()
        synchronize(device)
        return now() - t0

    return timer


def interleaved(
    points: Mapping[K, Callable[[], object]],
    *,
    device,
    seed: int,
    budget_s: float,
    target: float = 0.03,
    min_rounds: int = MIN_ROUNDS,
    max_rounds: int = 200,
    warmup: int = 1,
    before: Callable[[K], None] | None = None,
    min_sample_s: float = 0.0,
    timer: Callable[[Callable[[], object]], float] | None = None,
    now: Callable[[], float] = time.perf_counter,
) -> Sweep[K]:
    """Time every point of ``points`` in interleaved rounds (see the module's docstring).

    ``min_rounds`` are always completed, whatever the budget (fewer give no interval);
    after them no call begins once ``budget_s`` is spent. Within ``minimal_rounds`` one
    round is taken and the budget is spent at once. ``timer(fn)`` returns the seconds of one call (default:
    ``host_timer``; CUDA events for a copy on a GPU); ``now`` is the clock of the
    budget. Both are injected by the tests. A point whose call (timed once after its
    warm-up) is quicker than ``min_sample_s`` is sampled as a block of as many calls as
    fill it, each sample the block's seconds per call (``Sweep.calls``). Within
    ``minimal_rounds`` each point is called once after its warm-up, unsized and never in
    a block: the warm-up stays, since what a regeneration without timings compares is a
    steady step's (the operators a profiled step dispatches are fewer on a first call)."""
    if not points:
        raise ValueError("no point to time")
    if min_rounds < MIN_ROUNDS or max_rounds < min_rounds:
        raise ValueError(f"min_rounds must be at least {MIN_ROUNDS} and max_rounds at least min_rounds")
    import torch

    timer = timer or host_timer(device, now)
    budget_s = budget(budget_s)
    if is_minimal():
        min_rounds = max_rounds = 1
        min_sample_s = 0.0
    keys = list(points)
    samples: dict[K, list[float]] = {k: [] for k in keys}
    start, sweep = now(), next(_SWEEPS)

    def prepared(key: K) -> Callable[[], object]:
        """The point's call, ``before`` having prepared it: before every call or block."""
        if before is not None:
            before(key)
        return points[key]

    calls = dict.fromkeys(keys, 1)

    def block(key: K) -> None:
        for _ in range(calls[key]):
            points[key]()

    def timed(key: K) -> None:
        one = prepared(key)
        # a lone call is timed as itself: a timer may tell a point by its callable
        samples[key].append(timer(one if calls[key] == 1 else partial(block, key)) / calls[key])

    with torch.inference_mode():
        for key in round_order(keys, seed, 0):
            for _ in range(warmup):
                prepared(key)()
            if min_sample_s > 0:
                calls[key] = max(1, math.ceil(min_sample_s / max(timer(prepared(key)), 1e-9)))
        active, rounds, spent = keys, 0, False
        while active and rounds < max_rounds and not spent:
            rounds += 1
            for key in round_order(active, seed, rounds):
                if rounds > min_rounds and now() - start >= budget_s:
                    spent = True
                    break
                timed(key)
            if rounds >= min_rounds:
                active = [k for k in active if not Estimate.of(samples[k], target).met]
                spent = spent or now() - start >= budget_s
    return Sweep(
        points={k: Estimate.of(samples[k], target, sweep) for k in keys},
        seed=seed,
        rounds=rounds,
        seconds=now() - start,
        budget_s=budget_s,
        target=target,
        calls=calls,
    )
