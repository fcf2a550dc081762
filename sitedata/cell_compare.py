"""One cell of two runs compared by its declared rule, where no machine speed is at hand:
exact, numeric, or a timing against the two runs' spreads (``sitedata.compare`` says
which rule each cell gets; ``sitedata.timing_compare`` compares a timing with the
machine's speed divided out). Torch-free."""

from __future__ import annotations

import math
import statistics
from typing import Any

from sitedata.schema import Column, Table

# Float32 results move at ~1e-6 relative between BLAS builds, CPU models and thread
# counts; any real change of method (a quantizer, a tokenisation, a protocol) moves them
# by far more than 1e-3. So 1e-3 passes the first and catches the second.
RTOL_NUMERIC = 1e-3
ATOL_NUMERIC = 1e-12
# A median moves within a few interquartile ranges between runs on the same machine.
SPREAD_FACTOR = 3.0
# Machines drift (thermal state, background load) beyond the noise within one run.
TIMING_REL_FLOOR = 0.10


def _float(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _noise(row: dict[str, str], column: Column) -> float | None:
    """The noise of one timing cell, as a spread: its interquartile range, or the width
    of its confidence interval (None where it names neither, or a bound is empty)."""
    if column.interval:
        low, high = (_float(row[n]) for n in column.interval)
        return None if low is None or high is None else high - low
    return _float(row[column.spread]) if column.spread else None


def _table_rel_noise(rows: list[dict[str, str]], table: Table) -> float | None:
    """The median noise / value over the table's timing columns that name their noise."""
    rel = []
    for c in table.columns:
        for r in rows:
            v, sp = _float(r[c.name]), _noise(r, c)
            if v and sp is not None and v > 0:
                rel.append(sp / v)
    return statistics.median(rel) if rel else None


def compare_cell(
    compare: str,
    old: Any,
    new: Any,
    *,
    spread_old: float | None = None,
    spread_new: float | None = None,
    table_rel_noise: float | None = None,
) -> tuple[bool, str]:
    """(within tolerance, the tolerance in words) for one committed/new pair."""
    if compare == "exact":
        return str(old) == str(new), "equal"
    a, b = _float(old), _float(new)
    if a is None or b is None:
        return str(old) == str(new), "equal (not a number)"
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b), "both NaN"
    if compare == "numeric":
        tol = RTOL_NUMERIC * max(abs(a), abs(b)) + ATOL_NUMERIC
        return abs(a - b) <= tol, f"±{tol:.3g} (rel {RTOL_NUMERIC:g})"
    if spread_old is not None or spread_new is not None:
        tol = SPREAD_FACTOR * max(spread_old or 0.0, spread_new or 0.0) + TIMING_REL_FLOOR * abs(a)
        return abs(a - b) <= tol, f"±{tol:.3g} ({SPREAD_FACTOR:g}×spread + {TIMING_REL_FLOOR:.0%})"
    rel = max(TIMING_REL_FLOOR, SPREAD_FACTOR * (table_rel_noise or 0.0))
    return abs(a - b) <= rel * abs(a), f"±{rel:.0%} (table noise)"
