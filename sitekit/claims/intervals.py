"""The claims' words for timings, decided on 95 % intervals instead of medians.

A timing's median moves from run to run on a shared machine; its interval says how far.
So a claim about timings compares intervals, and has three outcomes: it holds (✓), it
does not, or the intervals cannot tell: ``NOISE``, rendered ≈ "within this machine's
noise" where a page's clause for that outcome shows it (branches.py); a page shows a
claim's sentence only for the outcome its wording states.

- ``interval('exp.table', 'col', where={...})``: one cell's median with the 95 %
  interval its column declares (``noise.interval`` in meta.json);
- ``faster(a, b)``: a's high bound below b's low bound; false when a's low is above b's
  high; otherwise ``NOISE``;
- ``within_noise(a, b)``: the two intervals overlap (true or false, never ``NOISE``);
- ``increasing('exp.table', 'col', by='x')``: every consecutive pair (rows ordered by
  ``x``) apart upwards; false when any pair is apart downwards; otherwise ``NOISE``;
- ``flat('exp.table', 'col', by='x', within=0.05)``: the change per doubling of ``x``
  from the first row to the last (the ratio of the last to the first, to the power one
  over the doublings), with the interval the two bounds give, inside ±``within``; false
  when the whole interval lies outside that band; otherwise ``NOISE``;
- ``inside_band(low, high, within=0.05)``: the same decision for a change whose interval
  an experiment computed itself (a value's low and high bounds);
- ``below(low, high, limit)``: such an interval wholly below ``limit``; false when wholly
  above it; otherwise ``NOISE`` (``not below(...)``: above).

Against a smallest effect that matters, ``margin`` (``calibration.margin``, stated once
on the methods page), for a ratio of two timings whose interval an experiment computed
(1 is no difference), so that an effect of +3 % [+1 %, +5 %] reads "practically the
same" in every run instead of flipping between "apart" and "within noise":

- ``exceeds(low, high, margin)``: the ratio wholly above ``1 + margin`` (larger by more
  than the margin); false when wholly at or below it; otherwise ``NOISE``;
- ``undercuts(low, high, margin)``: the ratio wholly below ``1 / (1 + margin)``; false
  when wholly at or above it; otherwise ``NOISE``;
- ``same(low, high, margin)``: the ratio wholly inside ``[1 / (1 + margin), 1 + margin]``,
  practically the same; false when wholly outside that band; otherwise ``NOISE``;
- ``faster_by(a, b, margin)`` and ``same_time(a, b, margin)``: the same decisions for two
  intervals ``interval(...)`` sampled apart, on the cautious range of ``b / a``
  (``b.low / a.high`` to ``b.high / a.low``).

``and``, ``or`` and ``not`` follow Kleene's three-valued logic (``False and NOISE`` is
false, ``True or NOISE`` true, ``not NOISE`` is ``NOISE``); anything else that meets
``NOISE`` (a comparison, ``all``, ``if``) is an error naming the claim, since it would
silently read as true or false.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


class ClaimNoiseError(TypeError):
    """``NOISE`` met an operation that can only take true or false."""


class _Noise:
    """The third outcome: the intervals overlap where the claim needs them apart."""

    _instance: _Noise | None = None

    def __new__(cls) -> _Noise:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        raise ClaimNoiseError("a result within this machine's noise can only be combined with and, or, not")

    def __repr__(self) -> str:
        return "NOISE"


NOISE = _Noise()


@dataclass(frozen=True)
class Interval:
    """A median and the bounds of its 95 % interval."""

    median: float
    low: float
    high: float

    def __post_init__(self) -> None:
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in (self.median, self.low, self.high)):
            raise ValueError(
                f"an interval needs three finite numbers, not {self.median!r} [{self.low!r}, {self.high!r}]"
            )
        if not self.low <= self.median <= self.high:
            raise ValueError(f"the median {self.median} lies outside its interval [{self.low}, {self.high}]")

    def __repr__(self) -> str:
        return f"{self.median:.4g} [{self.low:.4g}, {self.high:.4g}]"

    def __bool__(self) -> bool:
        raise TypeError("an interval is no claim by itself: compare it with faster() or within_noise()")


def _interval(x: Any) -> Interval:
    if not isinstance(x, Interval):
        raise TypeError(f"{x!r} is not an interval: use interval('experiment.table', 'column', where={{...}})")
    return x


def faster(a: Any, b: Any) -> bool | _Noise:
    """Time ``a`` below time ``b``, their intervals apart; ``NOISE`` when they overlap."""
    a, b = _interval(a), _interval(b)
    if a.high < b.low:
        return True
    if a.low > b.high:
        return False
    return NOISE


def within_noise(a: Any, b: Any) -> bool:
    """The two intervals overlap."""
    a, b = _interval(a), _interval(b)
    return not (a.high < b.low or a.low > b.high)


def increasing(points: list[Interval]) -> bool | _Noise:
    """Each point above the one before with intervals apart; false if one is below it with
    intervals apart; ``NOISE`` otherwise."""
    if len(points) < 2:
        raise ValueError("increasing needs at least two rows")
    steps = [faster(a, b) for a, b in zip(points, points[1:], strict=False)]
    if any(s is False for s in steps):
        return False
    return True if all(s is True for s in steps) else NOISE


def per_doubling(xs: list[float], points: list[Interval]) -> tuple[float, float, float]:
    """The change per doubling of x from the first point to the last: (median, low, high)
    as fractions (0.05 is +5 % per doubling); the bounds from the two intervals' bounds."""
    if len(points) < 2:
        raise ValueError("flat needs at least two rows")
    x0, x1 = xs[0], xs[-1]
    if not (isinstance(x0, (int, float)) and isinstance(x1, (int, float)) and 0 < x0 < x1):
        raise ValueError(f"flat needs positive, increasing x from the first row to the last, not {x0!r} .. {x1!r}")
    first, last = points[0], points[-1]
    if first.low <= 0:
        raise ValueError(f"flat needs positive times, not {first!r}")
    doublings = math.log2(x1 / x0)

    def rate(ratio: float) -> float:
        return ratio ** (1 / doublings) - 1

    return rate(last.median / first.median), rate(last.low / first.high), rate(last.high / first.low)


def flat(xs: list[float], points: list[Interval], within: Any) -> bool | _Noise:
    """The change per doubling inside ±``within``: true when its whole interval is inside,
    false when its whole interval is outside, ``NOISE`` when it straddles an edge."""
    _, low, high = per_doubling(xs, points)
    return inside_band(low, high, within)


def inside_band(low: Any, high: Any, within: Any) -> bool | _Noise:
    """An interval of a change (fractions: -0.01 is -1 %) inside ±``within``: true when
    wholly inside, false when wholly outside, ``NOISE`` when it straddles an edge."""
    if not isinstance(within, (int, float)) or not 0 < within < 1:
        raise ValueError(f"within must be a fraction between 0 and 1 (0.05 is ±5 %), not {within!r}")
    _bounds(low, high)
    if -within <= low and high <= within:
        return True
    if high < -within or low > within:
        return False
    return NOISE


def below(low: Any, high: Any, limit: Any) -> bool | _Noise:
    """An interval an experiment computed itself (a value's low and high bounds: a ratio
    of timings, say) below ``limit``: true when wholly below, false when wholly above,
    ``NOISE`` when it holds ``limit``. ``not below(...)`` is the same decision for above."""
    _bounds(low, high)
    if not isinstance(limit, (int, float)) or not math.isfinite(limit):
        raise ValueError(f"a limit must be a finite number, not {limit!r}")
    if high < limit:
        return True
    if low > limit:
        return False
    return NOISE


def _margin(margin: Any) -> float:
    if not isinstance(margin, (int, float)) or not 0 < margin < 1:
        raise ValueError(f"a margin must be a fraction between 0 and 1 (0.05 is 5 %), not {margin!r}")
    return 1.0 + margin


def exceeds(low: Any, high: Any, margin: Any) -> bool | _Noise:
    """A ratio's interval wholly above ``1 + margin``: true; wholly at or below: false."""
    _bounds(low, high)
    edge = _margin(margin)
    if low > edge:
        return True
    if high <= edge:
        return False
    return NOISE


def undercuts(low: Any, high: Any, margin: Any) -> bool | _Noise:
    """A ratio's interval wholly below ``1 / (1 + margin)``: true; wholly at or above: false."""
    _bounds(low, high)
    edge = 1 / _margin(margin)
    if high < edge:
        return True
    if low >= edge:
        return False
    return NOISE


def same(low: Any, high: Any, margin: Any) -> bool | _Noise:
    """A ratio's interval wholly inside ``[1 / (1 + margin), 1 + margin]``: practically the
    same (true); wholly outside it: false; straddling an edge: ``NOISE``."""
    _bounds(low, high)
    top = _margin(margin)
    if 1 / top <= low and high <= top:
        return True
    if low > top or high < 1 / top:
        return False
    return NOISE


def _cautious_ratio(a: Any, b: Any) -> tuple[float, float]:
    a, b = _interval(a), _interval(b)
    if a.low <= 0:
        raise ValueError(f"a ratio of timings needs positive times, not {a!r}")
    return b.low / a.high, b.high / a.low


def faster_by(a: Any, b: Any, margin: Any) -> bool | _Noise:
    """Time ``a`` below time ``b`` by more than the margin: ``exceeds`` on ``b / a``."""
    return exceeds(*_cautious_ratio(a, b), margin)


def same_time(a: Any, b: Any, margin: Any) -> bool | _Noise:
    """Times ``a`` and ``b`` practically the same: ``same`` on ``b / a``."""
    return same(*_cautious_ratio(a, b), margin)


def _bounds(low: Any, high: Any) -> None:
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in (low, high)) or low > high:
        raise ValueError(f"an interval's bounds must be finite numbers, low first, not {low!r}, {high!r}")


def kleene_not(v: Any) -> Any:
    return NOISE if v is NOISE else not v


def kleene(values, stop: bool, evaluate) -> Any:
    """``and`` (``stop`` False) or ``or`` (``stop`` True) over the operands, evaluated in
    order and short-circuited as Python does; ``NOISE`` where the known ones cannot decide."""
    unsure = False
    for node in values:
        v = evaluate(node)
        if v is NOISE:
            unsure = True
        elif bool(v) == stop:
            return stop
    return NOISE if unsure else not stop
