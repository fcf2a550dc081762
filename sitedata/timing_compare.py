"""One timing cell of two runs compared as a skeptic would: the machine's speed divided
out (``sitedata.machine_speed``), then decided three ways against a stated band.

A time (ms, s, µs) measured on a machine ``k`` times as fast is expected to be ``1 / k``
as long, a rate (GB/s, tokens/s) ``k`` times as high; a ratio of two times, a fraction
or a byte count is not scaled. The regenerated cell, so scaled, over the committed one
is the cell's change; its relative half-width combines the two cells' intervals and the
speed's own, in quadrature (independent errors, on the log scale). Then:

* ``drift``: the whole range lies beyond ``BAND`` (slower or faster by more than it);
* ``ok``: the whole range lies within the band;
* ``cannot tell``: the range straddles an edge of the band, or either run's machine
  drifted past the drift limit while it ran (its own speed moved under its timings).

A cell without an interval of its own takes its table's typical noise (or
``DEFAULT_HALF_WIDTH``). Torch-free.
"""

from __future__ import annotations

import math
from typing import Any

from sitedata.machine_speed import Factor, Speed
from sitedata.schema import Column

# Beyond this change, once the machine's speed is divided out, a timing drifted. Two calm
# runs on one machine differ by a few per cent (each interval is about ±2 to ±3 % wide);
# a change in a code path that matters is larger: a planted 15 % slowdown stands out.
BAND = 0.08
DEFAULT_HALF_WIDTH = 0.03  # a cell with no interval and a table with none: the target width
TIME_UNITS = ("ms", "s", "µs", "us")


def direction(unit: str) -> int:
    """+1 for a time, -1 for a rate (per second), 0 for what the machine's speed does not scale."""
    unit = unit.strip()
    if unit in TIME_UNITS:
        return 1
    if unit.endswith("/s"):
        return -1
    return 0


def _half_width(median: float, low: float | None, high: float | None) -> float | None:
    if low is None or high is None or median == 0 or not (low <= median <= high):
        return None
    return (high - low) / 2 / abs(median)


def compare_timing(
    old: float,
    new: float,
    *,
    unit: str,
    old_bounds: tuple[float | None, float | None] = (None, None),
    new_bounds: tuple[float | None, float | None] = (None, None),
    speed: Factor | None = None,
    drifted: bool = False,
    typical_half_width: float | None = None,
) -> tuple[str, str]:
    """(verdict, the tolerance in words) for one committed/regenerated timing pair."""
    scale = direction(unit)
    factor = speed.value if speed is not None and scale else 1.0
    scaled = new * factor**scale
    fallback = typical_half_width if typical_half_width is not None else DEFAULT_HALF_WIDTH
    widths = [
        _half_width(old, *old_bounds) if old_bounds[0] is not None else None,
        _half_width(new, *new_bounds) if new_bounds[0] is not None else None,
    ]
    widths = [fallback if w is None else w for w in widths]
    if speed is not None and scale:
        widths.append(speed.half_width)
    half = math.sqrt(sum(w * w for w in widths))
    if old == 0 or scaled == 0 or (old < 0) != (scaled < 0):
        return ("ok" if old == scaled else "drift"), "equal (zero)"
    change = scaled / old
    low, high = change / (1 + half), change * (1 + half)
    edge = 1 + BAND
    words = f"{change - 1:+.1%} [{low - 1:+.1%}, {high - 1:+.1%}] against ±{BAND:.0%}"
    if scale and speed is not None:
        words += " (machine's speed divided out)"
    if drifted:
        return "cannot tell", words + "; a run's machine drifted past the limit while it ran"
    if low > edge or high < 1 / edge:
        return "drift", words
    if low >= 1 / edge and high <= edge:
        return "ok", words
    return "cannot tell", words


def _float(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


# A step's prediction by the run's roofline (measure/lab/prediction.py) is the machine's
# model, not the program: the drift gate reports the machine's speed once instead.
PREDICTED = ("_predicted_ms", "_predicted_low_ms", "_predicted_high_ms", "_memory_ms", "_compute_ms", "_fixed_ms")


def predicted_by_roofline(name: str) -> bool:
    """A column or value that holds a step's prediction, not a measurement."""
    return name.endswith(PREDICTED) or name.endswith("_bound")


def timing_cell(ro: dict, rn: dict, c: Column, speed: Speed, noise: float | None) -> tuple[str, str]:
    """One cell of column ``c`` in the committed row ``ro`` and the regenerated ``rn``;
    ``noise`` is the table's typical relative interval width, for a cell without its own."""

    def bounds(row: dict) -> tuple[float | None, float | None]:
        return tuple(_float(row[n]) for n in c.interval) if c.interval else (None, None)

    a, b = _float(ro[c.name]), _float(rn[c.name])
    if a is None or b is None:
        return ("ok" if str(ro[c.name]) == str(rn[c.name]) else "drift"), "equal (not a number)"
    return compare_timing(
        a,
        b,
        unit=c.unit,
        old_bounds=bounds(ro),
        new_bounds=bounds(rn),
        speed=speed.overall,
        drifted=speed.drifted,
        typical_half_width=noise / 2 if noise is not None else None,
    )
