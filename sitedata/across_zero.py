"""A timing whose change has no ratio: a value at zero, of the other sign in one run, or
whose interval reaches zero (a difference of two timings, a rise near nothing). Such a
change is judged by whether the two runs' intervals overlap (``sitedata.timing_compare``).
Torch-free."""

from __future__ import annotations


def valid(value: float, bounds: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    """``bounds`` where they are an interval around ``value``; (None, None) otherwise."""
    low, high = bounds
    if low is None or high is None or not (low <= value <= high):  # NaN fails the test too
        return None, None
    return low, high


def reaches_zero(old: float, old_bounds: tuple, new: float, new_bounds: tuple) -> bool:
    """Either run's interval reaches zero or past it (a rise of 8 % [-3 %, +34 %]): its
    change has no ratio to judge on any scale, only whether the two intervals overlap."""
    return any(low is not None and low <= 0 <= high for low, high in (valid(old, old_bounds), valid(new, new_bounds)))


def across_zero(
    old: float, new: float, old_bounds: tuple[float | None, float | None], new_bounds: tuple[float | None, float | None]
) -> tuple[str, str]:
    """A value at zero or across it in one run (a difference of two timings, say): no
    ratio measures its change. With both runs' intervals, it drifted where they are
    apart, and cannot be told where they overlap; without them there is no scale to
    judge it by, so it cannot be told, unless the two are equal."""
    if old == new:
        return "ok", "equal"
    if None in old_bounds or None in new_bounds:
        return "cannot tell", f"{old:.4g} then {new:.4g}: across zero, with no interval to judge the change by"
    (ol, oh), (nl, nh) = old_bounds, new_bounds
    words = f"{old:.4g} [{ol:.4g}, {oh:.4g}] then {new:.4g} [{nl:.4g}, {nh:.4g}]"
    if max(ol, nl) > min(oh, nh):
        return "drift", words + ": across zero, the intervals apart"
    return "cannot tell", words + ": across zero, the intervals overlapping"
