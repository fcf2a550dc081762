"""How one committed cell and its regenerated counterpart are compared, by the ``compare``
the code declares for the column:

* exact:   equal, character for character as written to CSV;
* numeric: |new - old| <= RTOL_NUMERIC * max(|old|, |new|) (+ a tiny absolute floor);
* timing:  a column ``x_ms`` with a sibling spread column (``x_spread_ms``, or
  ``spread_ms`` for ``total_ms``) may move by SPREAD_FACTOR x the larger of the two runs'
  spreads plus TIMING_REL_FLOOR of its value; a timing column with no spread of its own
  (a ratio of two times, memory read from the OS) gets SPREAD_FACTOR x the median
  relative spread of its table, and never less than TIMING_REL_FLOOR.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

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


def _spread_column(name: str, columns: list[str]) -> str | None:
    for cand in (name.replace("_ms", "_spread_ms"), "spread_ms" if name == "total_ms" else ""):
        if cand and cand != name and cand in columns:
            return cand
    return None


def _table_rel_noise(rows: list[dict[str, str]], columns: list[str]) -> float | None:
    rel = []
    for c in columns:
        s = _spread_column(c, columns)
        if not s:
            continue
        for r in rows:
            v, sp = _float(r[c]), _float(r[s])
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
