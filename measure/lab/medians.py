"""A timed point's median, its 95 % interval, and the ratio of two points.

The interval is the distribution-free interval of the median from order statistics:
what ``scipy.stats.quantile_test(x, p=0.5).confidence_interval(0.95)`` gives (a test
holds the two equal), computed with ``math.comb`` since the GPU machine has no scipy.
Six samples is the least that reaches 95 % (the minimum and maximum of six cover the
median with probability 1 - 2/64).

Ratios are paired. Two points of one sweep were sampled in the same rounds, moments apart
(sample i of each in round i + 1: a point that leaves the rounds never comes back), so the
ratio within a round cancels whatever the machine did to both meanwhile; ``ratio`` gives
the median of those ratios with its interval, narrower than the range of two intervals
taken apart. Points of different sweeps are not paired.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction

from sitedata.schema import interval_names

CONFIDENCE = 0.95
MIN_ROUNDS = 6  # the least n whose order-statistic interval of the median reaches 95 %
_MINIMAL = ContextVar("minimal_rounds", default=False)


@contextmanager
def minimal_rounds() -> Iterator[None]:
    """Within it, every sweep times each point once after its warm-up (never in a block)
    and every budget is spent at once (``budget`` is 0): for a regeneration whose timings
    nobody compares, the drift gate without ``timing`` in its kinds. What the gate compares (bytes, tokens,
    float results) does not depend on how long a point was sampled; the time goes to it
    instead. One sample gives no interval: an estimate's bounds are then the range of its
    samples and it never meets its target, so nothing timed within it can be published
    as measured (``Estimate.of``)."""
    token = _MINIMAL.set(True)
    try:
        yield
    finally:
        _MINIMAL.reset(token)


def is_minimal() -> bool:
    """Whether the code runs within ``minimal_rounds``."""
    return _MINIMAL.get()


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
    and the 95 % interval of the median, whether that interval met ``target``, and the
    sweep it was sampled in (None outside one)."""

    samples_s: tuple[float, ...]
    median_s: float
    low_s: float
    high_s: float
    target: float  # the relative half-width asked for, e.g. 0.03
    met: bool  # (high - low) / 2 <= target * median
    sweep: int | None = None

    @classmethod
    def of(cls, samples_s, target: float, sweep: int | None = None) -> Estimate:
        samples = tuple(float(s) for s in samples_s)
        if len(samples) < MIN_ROUNDS:
            if samples and is_minimal():
                return cls(samples, statistics.median(samples), min(samples), max(samples), target, False, sweep)
            raise ValueError(f"{len(samples)} samples give no 95 % interval of the median; {MIN_ROUNDS} are needed")
        median = statistics.median(samples)
        low, high = median_interval(samples)
        return cls(samples, median, low, high, target, (high - low) / 2 <= target * median, sweep)

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
        return Estimate(
            s, self.median_s * factor, self.low_s * factor, self.high_s * factor, self.target, self.met, self.sweep
        )

    def columns(self, name: str) -> dict[str, float | int]:
        """A table's cells for this point in milliseconds, as ``sitedata.schema.interval_columns``
        declares them: ``columns("step_ms")`` is ``step_ms`` (the median), ``step_low_ms``,
        ``step_high_ms`` and ``step_samples``."""
        low, high, samples = interval_names(name)
        return {name: self.median_ms, low: self.low_ms, high: self.high_ms, samples: self.n}


def ratio(num: Estimate, den: Estimate) -> tuple[float, float, float]:
    """``num / den`` and its 95 % range. Points of one sweep with six rounds or more in
    common: the median of the ratios round by round, and that median's interval (see the
    module's docstring). Otherwise the ratio of the medians, and the low over the high and
    the high over the low (each interval holds with 95 %, so the range is the cautious one)."""
    if num.sweep is not None and num.sweep == den.sweep and min(num.n, den.n) >= MIN_ROUNDS:
        paired = [a / b for a, b in zip(num.samples_s, den.samples_s, strict=False)]  # to the shorter
        return (statistics.median(paired), *median_interval(paired))
    return num.median_s / den.median_s, num.low_s / den.high_s, num.high_s / den.low_s


def fraction_cells(name: str, floor: tuple[float, float, float], step: Estimate) -> dict[str, float]:
    """A table's cells for ``floor / step``: a time floor (seconds, with the 95 % range its
    bandwidth gives, ``Calibration.floor_s``) over a timed step, the fraction of its floor
    the step reached. The range is the cautious one: the low floor over the slow end of
    the step's interval, the high floor over its fast end."""
    value, low, high = floor
    low_name, high_name, _ = interval_names(name)
    return {name: value / step.median_s, low_name: low / step.high_s, high_name: high / step.low_s}


def ratio_cells(name: str, num: Estimate, den: Estimate) -> dict[str, float]:
    """A table's cells for ``num / den`` as ``sitedata.schema.derived_columns`` declares them:
    ``ratio_cells("speedup", a, b)`` is ``speedup``, ``speedup_low`` and ``speedup_high``."""
    low, high, _ = interval_names(name)
    return dict(zip((name, low, high), ratio(num, den), strict=True))
