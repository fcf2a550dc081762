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

The interval is the distribution-free interval of the median from order statistics:
what ``scipy.stats.quantile_test(x, p=0.5).confidence_interval(0.95)`` gives (a test
holds the two equal), computed with ``math.comb`` since the GPU machine has no scipy.
Six samples is the least that reaches 95 % (the minimum and maximum of six cover the
median with probability 1 - 2/64).

Why not a library. ``torch.utils.benchmark`` times one statement at a time: the points
of a sweep cannot be interleaved (the remedy for drift), and ``adaptive_autorange``
stops on IQR / median, a spread of the samples, not an interval of the median.
pyperf reports mean ± standard deviation over a process per sample (which would reload
the model each time; and the mean is what an outlier moves). asv's
``statistics.quantile_ci`` is this very interval; asv is no dependency of the measuring
code, so the few lines are written here and checked against scipy.
``scipy.stats.bootstrap`` would need scipy on the GPU machine and is less exact than
this interval at 6 to a few dozen samples.

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

import math
import random
import statistics
import time
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

from measure.lab.timing import synchronize
from sitedata.schema import interval_names

K = TypeVar("K", bound=Hashable)
CONFIDENCE = 0.95
MIN_ROUNDS = 6  # the least n whose order-statistic interval of the median reaches 95 %
_MINIMAL = ContextVar("minimal_rounds", default=False)


@contextmanager
def minimal_rounds() -> Iterator[None]:
    """Within it, every sweep times each point once after its warm-up and every budget is
    spent at once (``budget`` is 0): for a regeneration whose timings nobody compares, the
    drift gate without ``timing`` in its kinds. What the gate compares (bytes, tokens,
    float results) does not depend on how long a point was sampled; the time goes to it
    instead. One sample gives no interval: an estimate's bounds are then the range of its
    samples and it never meets its target, so nothing timed within it can be published
    as measured (``Estimate.of``)."""
    token = _MINIMAL.set(True)
    try:
        yield
    finally:
        _MINIMAL.reset(token)


def budget(seconds: float) -> float:
    """A timing budget as it applies now: ``seconds``, or 0 within ``minimal_rounds``.
    Every loop that samples until a budget is spent reads its budget through this."""
    return 0.0 if _MINIMAL.get() else seconds


def median_interval(samples, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The distribution-free interval of the median: the order statistics ``x[lo]`` and
    ``x[hi]`` (0-based, sorted) with ``lo = ppf(a) - 1`` and ``hi = isf(a)`` of
    binomial(n, 1/2), ``a = (1 - confidence) / 2``; NaN for a bound that n samples cannot
    give (fewer than six at 95 %). The same indices as scipy's ``quantile_test``."""
    x = sorted(samples)
    n = len(x)
    if not 0 < confidence < 1:
        raise ValueError("confidence must be strictly between 0 and 1")
    a = Fraction((1 - confidence) / 2)  # the float scipy computes, held exactly
    total = 2**n
    below = 0  # sum of C(n, i) for i <= k
    lo = hi = None
    for k in range(n + 1):
        below += math.comb(n, k)
        if lo is None and below >= a * total:  # ppf(a): the least k with cdf(k) >= a
            lo = k - 1
        if hi is None and total - below <= a * total:  # isf(a): the least k with sf(k) <= a
            hi = k
    low = x[lo] if lo is not None and lo >= 0 else math.nan
    high = x[hi] if hi is not None and hi < n else math.nan
    return low, high


@dataclass(frozen=True)
class Estimate:
    """One point of a sweep: its raw samples (seconds, in the order taken), their median
    and the 95 % interval of the median, and whether that interval met ``target``."""

    samples_s: tuple[float, ...]
    median_s: float
    low_s: float
    high_s: float
    target: float  # the relative half-width asked for, e.g. 0.03
    met: bool  # (high - low) / 2 <= target * median

    @classmethod
    def of(cls, samples_s, target: float) -> Estimate:
        samples = tuple(float(s) for s in samples_s)
        if len(samples) < MIN_ROUNDS:
            if samples and _MINIMAL.get():
                return cls(samples, statistics.median(samples), min(samples), max(samples), target, False)
            raise ValueError(f"{len(samples)} samples give no 95 % interval of the median; {MIN_ROUNDS} are needed")
        median = statistics.median(samples)
        low, high = median_interval(samples)
        return cls(samples, median, low, high, target, (high - low) / 2 <= target * median)

    @property
    def n(self) -> int:
        return len(self.samples_s)

    @property
    def median_ms(self) -> float:
        return self.median_s * 1e3

    @property
    def low_ms(self) -> float:
        return self.low_s * 1e3

    @property
    def high_ms(self) -> float:
        return self.high_s * 1e3

    @property
    def half_width(self) -> float:
        """The interval's half-width relative to the median (0.03 is ±3 %)."""
        return (self.high_s - self.low_s) / 2 / self.median_s

    def samples_ms(self) -> list[float]:
        return [round(x * 1e3, 4) for x in self.samples_s]

    def scaled(self, factor: float) -> Estimate:
        """The same estimate of ``factor`` times the quantity (per copy, per token)."""
        s = tuple(x * factor for x in self.samples_s)
        return Estimate(s, self.median_s * factor, self.low_s * factor, self.high_s * factor, self.target, self.met)

    def columns(self, name: str) -> dict[str, float | int]:
        """A table's cells for this point in milliseconds, as ``sitedata.schema.interval_columns``
        declares them: ``columns("step_ms")`` is ``step_ms`` (the median), ``step_low_ms``,
        ``step_high_ms`` and ``step_samples``."""
        low, high, samples = interval_names(name)
        return {name: self.median_ms, low: self.low_ms, high: self.high_ms, samples: self.n}


def ratio(num: Estimate, den: Estimate) -> tuple[float, float, float]:
    """``num / den`` of two medians, and the range their two intervals give: the low over
    the high and the high over the low (each interval holds with 95 %, so the range is the
    cautious one)."""
    return num.median_s / den.median_s, num.low_s / den.high_s, num.high_s / den.low_s


def ratio_cells(name: str, num: Estimate, den: Estimate) -> dict[str, float]:
    """A table's cells for ``num / den`` as ``sitedata.schema.derived_columns`` declares them:
    ``ratio_cells("speedup", a, b)`` is ``speedup``, ``speedup_low`` and ``speedup_high``."""
    low, high, _ = interval_names(name)
    return dict(zip((name, low, high), ratio(num, den), strict=True))


@dataclass(frozen=True)
class Sweep(Generic[K]):
    points: dict[K, Estimate]
    seed: int
    rounds: int  # rounds begun (the last may have been cut short by the budget)
    seconds: float  # wall time of the sampling, warm-up included
    budget_s: float
    target: float

    def describe(self) -> dict:
        """What provenance and notes record about how the sweep was sampled."""
        missed = [str(k) for k, e in self.points.items() if not e.met]
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
        }


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
    timer: Callable[[Callable[[], object]], float] | None = None,
    now: Callable[[], float] = time.perf_counter,
) -> Sweep[K]:
    """Time every point of ``points`` in interleaved rounds (see the module's docstring).

    ``min_rounds`` are always completed, whatever the budget (fewer give no interval);
    after them no call begins once ``budget_s`` is spent. Within ``minimal_rounds`` one
    round is taken and the budget is spent at once. ``timer(fn)`` returns the seconds of one call (default:
    ``host_timer``; CUDA events for a copy on a GPU); ``now`` is the clock of the
    budget. Both are injected by the tests."""
    if not points:
        raise ValueError("no point to time")
    if min_rounds < MIN_ROUNDS or max_rounds < min_rounds:
        raise ValueError(f"min_rounds must be at least {MIN_ROUNDS} and max_rounds at least min_rounds")
    import torch

    timer = timer or host_timer(device, now)
    budget_s = budget(budget_s)
    if _MINIMAL.get():
        min_rounds = max_rounds = 1
    keys = list(points)
    samples: dict[K, list[float]] = {k: [] for k in keys}
    start = now()

    def call(key: K) -> None:
        if before is not None:
            before(key)
        points[key]()

    def timed(key: K) -> None:
        if before is not None:
            before(key)
        samples[key].append(timer(points[key]))

    with torch.inference_mode():
        for key in round_order(keys, seed, 0):
            for _ in range(warmup):
                call(key)
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
        points={k: Estimate.of(samples[k], target) for k in keys},
        seed=seed,
        rounds=rounds,
        seconds=now() - start,
        budget_s=budget_s,
        target=target,
    )
