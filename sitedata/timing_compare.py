"""One timing cell of two runs compared as a skeptic would: the machine's speed divided
out (``sitedata.machine_speed``), then decided three ways against a stated band.

A time (ms, s, µs) measured on a machine ``k`` times as fast is expected to be ``1 / k``
as long, a rate (GB/s, tokens/s) ``k`` times as high; a ratio of two times, a fraction
or a byte count is not scaled. The regenerated cell, so scaled, over the committed one
is the cell's change; its relative half-width combines the two cells' intervals and the
speed's own, in quadrature (independent errors, on the log scale). Then:

* ``drift``: the whole range lies beyond ``BAND`` (slower or faster by more than it);
* ``ok``: the whole range lies within the band;
* ``cannot tell``: the range straddles an edge of the band.

A run whose machine drifted past the drift limit while it ran (its speed moved under its
timings) widens the range by how far it moved (``Speed.unsteady``): a change larger than
that movement is still a drift, a smaller one cannot be told; none is then "ok", since
the drift limit is wider than the band.

A value at zero or of the other sign in one run (a difference of two timings), or whose
interval reaches zero in either run, has no ratio: it drifted where both runs' intervals
are apart, and cannot be told otherwise.
The machine's own terms and the roofline's predictions are not compared cell by cell:
they are the machine's speed, reported once (``machine_model``).

A cell without an interval of its own takes its row's typical noise in each run (the
times beside it were sampled in the same rounds: a rate worked out from a prefill's time
is known no better than that time), else its table's, else ``DEFAULT_HALF_WIDTH``; a
memory reading, ``HEAP_HALF_WIDTH``. Torch-free.
"""

from __future__ import annotations

import math

from sitedata.across_zero import across_zero, reaches_zero, valid
from sitedata.cell_compare import _float
from sitedata.machine_speed import Factor
from sitedata.schema import Column, interval_names

# Beyond this change, once the machine's speed is divided out, a timing drifted. Two calm
# runs on one machine differ by a few per cent (each interval is about ±2 to ±3 % wide);
# a change in a code path that matters is larger: a planted 15 % slowdown stands out.
BAND = 0.08
DEFAULT_HALF_WIDTH = 0.03  # a cell with no interval and a table with none: the target width
# A memory reading (a timing-policy byte count: a process's peak resident set, a peak above
# a baseline) moves from process to process with the heap's history, not with the program:
# over eleven runs on one machine a prefill's peak above its baseline spread from -40 % to
# +42 % of their median, its baseline from -20 % to +2 %. Each such reading, which has no
# interval of its own, is taken to be known within this half-width.
HEAP_HALF_WIDTH = 0.30
TIME_UNITS = ("ms", "s", "µs", "us")


def direction(unit: str) -> int:
    """+1 for a time, -1 for a rate (per second), 0 for what the machine's speed does not scale."""
    unit = unit.strip()
    if unit in TIME_UNITS:
        return 1
    if unit.endswith("/s"):
        return -1
    return 0


def relative_half_width(median: float, low: float | None, high: float | None) -> float | None:
    """Half an interval's width over its median; None where the bounds do not hold it."""
    if low is None or high is None or median == 0 or not (low <= median <= high):
        return None
    return (high - low) / 2 / abs(median)


def log_half_width(median: float, low: float | None, high: float | None) -> float | None:
    """Half an interval's width on the log scale, ln(high / low) / 2: the same as
    ``relative_half_width`` for a narrow interval (±10 % either way), and honest for a wide
    or lopsided one (1.25 to 5.65 around 3.1 is a factor of 2.1 either way, not ±71 %)."""
    if relative_half_width(median, low, high) is None or low <= 0:
        return None
    return math.log(high / low) / 2


def compare_timing(
    old: float,
    new: float,
    *,
    unit: str,
    old_bounds: tuple[float | None, float | None] = (None, None),
    new_bounds: tuple[float | None, float | None] = (None, None),
    speed: Factor | None = None,
    unsteady: float = 0.0,
    typical_half_width: float | tuple[float | None, float | None] | None = None,
    whose: str = "machine's",
) -> tuple[str, str]:
    """(verdict, the tolerance in words) for one committed/regenerated timing pair;
    ``whose`` speed ``speed`` is, in the words; ``typical_half_width``, the half-width of a
    run's cell without bounds of its own (one for both runs, or the committed's and the
    regenerated's)."""
    scale = direction(unit)
    factor = speed.value if speed is not None and scale else 1.0
    scaled = new * factor**scale
    typical = typical_half_width if isinstance(typical_half_width, tuple) else (typical_half_width,) * 2
    if unit.strip() == "bytes":
        fallbacks = (HEAP_HALF_WIDTH,) * 2
    else:
        fallbacks = tuple(DEFAULT_HALF_WIDTH if t is None else t for t in typical)
    widths = [
        log_half_width(old, *old_bounds) if old_bounds[0] is not None else None,
        log_half_width(new, *new_bounds) if new_bounds[0] is not None else None,
    ]
    # every width on the log scale: a relative half-width w is ln(1 + w) there
    widths = [math.log1p(f) if w is None else w for w, f in zip(widths, fallbacks, strict=True)]
    if speed is not None and scale:
        widths.append(math.log1p(speed.half_width))
    unsteady = unsteady if scale else 0.0  # a ratio or a byte count does not move with the machine
    if unsteady:
        widths.append(math.log1p(unsteady))
    half = math.exp(math.sqrt(sum(w * w for w in widths))) - 1
    moved = f"; widened by ±{unsteady:.1%}, how far a run's machine moved while it ran" if unsteady else ""
    if old == 0 or scaled == 0 or (old < 0) != (scaled < 0) or reaches_zero(old, old_bounds, new, new_bounds):
        # the speed's own uncertainty widens the scaled interval, as it widens a ratio's
        spread = (speed.half_width if speed is not None and scale else 0.0) + unsteady
        ends = [None if b is None else b * factor**scale for b in new_bounds]
        if None not in ends:
            ends = [ends[0] - abs(ends[0]) * spread, ends[1] + abs(ends[1]) * spread]
        verdict, words = across_zero(old, scaled, valid(old, old_bounds), valid(scaled, tuple(ends)))
        return verdict, words + moved
    change = scaled / old
    low, high = change / (1 + half), change * (1 + half)
    edge = 1 + BAND
    words = f"{change - 1:+.1%} [{low - 1:+.1%}, {high - 1:+.1%}] against ±{BAND:.0%}"
    if scale and speed is not None:
        words += f" ({whose} speed divided out)"
    words += moved
    if low > edge or high < 1 / edge:
        return "drift", words
    if low >= 1 / edge and high <= edge:
        return "ok", words
    return "cannot tell", words


# A step's prediction by the run's roofline (measure/lab/prediction.py) is the machine's
# model, not the program: the drift gate reports the machine's speed once instead. So are
# the predicted ratios and rises built from two such predictions (``split_ratio_predicted``).
PREDICTED = (
    "_predicted_ms", "_predicted_low_ms", "_predicted_high_ms", "_memory_ms", "_compute_ms", "_fixed_ms",
    "_predicted", "_predicted_low", "_predicted_high",
)  # fmt: skip

# The machine's own terms, which every roofline is built from (measure/lab/roofline.py,
# roofline_in_rounds.py): a bandwidth and a cost per operator probed in a sweep's rounds,
# the calibration's bandwidth and ceilings, and the terms and floors taken from them. A
# rerun's are its machine's: its speed, reported once, never cell by cell.
MACHINE_TERM_SUFFIXES = ("_round_gb_s", "_round_operator_us", "_round_gflop_s")
MACHINE_TERMS = (
    "bandwidth_gb_s", "kernel_bandwidth_gb_s", "one_thread_gb_s", "floor_ms", "floor_with_cache_ms",
    "decode_floor_ms", "ceiling_gflop_s", "kernel_gflop_s", "operator_us", "trivial_us", "fixed_ms",
    "arithmetic_ms", "one_row_gflops", "peak_gflops", "balance_flops_per_byte",
)  # fmt: skip


# A step's fraction of its floor (floor / step): the floor is the weights' bytes over the
# calibration's bandwidth, probed minutes away from the sweep; the step is compared by
# itself, with its own sweep's speed divided out. The ratio adds nothing but how far the
# sweep's machine was from the calibration's.
OF_THE_FLOOR = (
    "fraction_of_floor", "fraction_smallest", "fraction_largest", "fraction_smallest_batch", "fraction_largest_batch",
    "settings_best_fraction",
)  # fmt: skip
# So are the shares of a step that one of the machine's terms takes (``fixed_ms`` over the
# step), and a rate over the calibration's bandwidth (prefill_decode/regime.py).
OF_A_TERM = ("fixed_share", "arithmetic_share", "matmul_read_share")
# Where the roofline's two terms cross (the smallest batch whose compute term exceeds its
# memory term) is read from the calibration's ceilings alone: an unchanged regeneration
# moved it from 2 to 1 when its matrix arithmetic was probed 5 % slower.
CROSSINGS = ("compute_bound_from",)


# A step's decomposition under the profiler: each operator group's self time and share, a
# group's rise between two contexts, a rate read from one group's time, the rest of a step
# beside its profiled multiplies. The profiler's records move between processes beyond
# their intervals (an unchanged regeneration moved every group of one profiled step by +22
# to +36 % together, and one group's share by -47 %), while the step they decompose is
# timed unprofiled beside them and compared. So they are reported, not compared.
PROFILED_TABLES = ("breakdown",)
PROFILED_COLUMNS = (("decode_kernels", "matmul_ms"),)
PROFILED_VALUES = (
    "profiled_step_ms", "matmul_read_gb_s", "kernel_rest_min_ms", "kernel_rest_max_ms", "matmul_decode_over_prefill",
    "gap_per_request_share",
)  # fmt: skip
PROFILED_PREFIX = "breakdown_"


def profiled(name: str, table: str | None = None) -> str | None:
    """Why the column ``name`` of ``table`` (a value where None) is not compared: it was
    read under the profiler (see ``PROFILED_TABLES``); None otherwise."""
    if table is None:
        hit = name.startswith(PROFILED_PREFIX) or name in _PROFILED_VALUE_NAMES
    else:
        hit = table in PROFILED_TABLES or (table, name) in _PROFILED_COLUMN_NAMES
    return "read under the profiler: the step it decomposes is timed unprofiled and compared" if hit else None


def _with_bounds(names) -> frozenset[str]:
    return frozenset(n for name in names for n in (name, *interval_names(name)[:2]))


_MACHINE_NAMES = _with_bounds(MACHINE_TERMS)
_MACHINE_ENDINGS = tuple(_with_bounds(MACHINE_TERM_SUFFIXES))
_FLOOR_ENDINGS = tuple(_with_bounds(OF_THE_FLOOR))
_TERM_SHARES = _with_bounds(OF_A_TERM)
_PROFILED_VALUE_NAMES = _with_bounds(PROFILED_VALUES)
_PROFILED_COLUMN_NAMES = frozenset((t, n) for t, c in PROFILED_COLUMNS for n in _with_bounds((c,)))


def predicted_by_roofline(name: str) -> bool:
    """A column or value that holds a step's prediction, not a measurement (a measured
    time over its prediction, ``step_over_predicted``, is a measurement)."""
    return (name.endswith(PREDICTED) and "_over_predicted" not in name) or name.endswith("_bound")


def machine_term(name: str) -> bool:
    """A column or value that holds one of the machine's own terms (with its bounds)."""
    return name in _MACHINE_NAMES or name.endswith(_MACHINE_ENDINGS)


def machine_model(name: str) -> str | None:
    """Why a timing column or value is the machine's, not the program's, or None."""
    if predicted_by_roofline(name):
        return "the roofline's prediction: the machine's speed, reported once"
    if machine_term(name):
        return "the machine's own term (a probe, a ceiling, a floor): its speed, reported once"
    if name.endswith(_FLOOR_ENDINGS):
        return "a step over the calibration's floor: the step is compared, the floor is the machine's"
    if name in _TERM_SHARES:
        return "a time against one of the machine's terms: the time is compared, the term is the machine's"
    if name in CROSSINGS:
        return "where the roofline's ceilings cross: the machine's speed, reported once"
    return None


def timing_cell(
    ro: dict,
    rn: dict,
    c: Column,
    speed: Factor | None,
    unsteady: float,
    noise: float | tuple[float | None, float | None] | None,
    *,
    whose: str = "machine's",
) -> tuple[str, str]:
    """One cell of column ``c`` in the committed row ``ro`` and the regenerated ``rn``, with
    ``speed`` divided out (the run's machine's, or ``whose`` else: a sweep's own);
    ``noise``, the typical relative interval width of a cell without its own (one for both
    runs, or each run's: its row's, else its table's)."""

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
        speed=speed,
        unsteady=unsteady,
        typical_half_width=tuple(
            None if n is None else n / 2 for n in (noise if isinstance(noise, tuple) else (noise,) * 2)
        ),
        whose=whose,
    )
