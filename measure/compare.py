"""Compare a regenerated result folder with the committed one, column by column,
according to each column's declared kind.

* exact:   equal, character for character as written to CSV.
* numeric: |new - old| <= RTOL_NUMERIC * max(|old|, |new|) (+ a tiny absolute floor).
* timing:  compared only when the device fingerprints match; the tolerance comes from
  the measured noise: a column ``x_ms`` with a sibling spread column (``x_spread_ms``,
  or ``spread_ms`` for ``total_ms``) may move by SPREAD_FACTOR x the larger of the two
  runs' spreads plus TIMING_REL_FLOOR of its value; a timing column with no spread of its
  own (a ratio of two times, memory read from the OS) gets SPREAD_FACTOR x the median
  relative spread of its table, and never less than TIMING_REL_FLOOR.

Pure functions over two folders of CSV + meta.json; no model, no torch.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Float32 results move at ~1e-6 relative between BLAS builds and thread counts; any real
# change of method (a quantizer, a tokenisation, a protocol) moves them by far more
# than 1e-3. So 1e-3 passes the first and catches the second.
RTOL_NUMERIC = 1e-3
ATOL_NUMERIC = 1e-12
# A median moves within a few interquartile ranges between runs on the same machine.
SPREAD_FACTOR = 3.0
# Machines drift (thermal state, background load) beyond the noise within one run.
TIMING_REL_FLOOR = 0.10


@dataclass(frozen=True, kw_only=True)
class Finding:
    experiment: str
    table: str  # table name, or "values" / "meta"
    verdict: str  # ok | drift | not comparable | stale | missing | unused | unknown
    row: int | None = None
    column: str | None = None
    kind: str = ""
    committed: Any = None
    new: Any = None
    tolerance: str = ""
    reason: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def _read(folder: Path) -> tuple[dict, dict[str, list[dict[str, str]]]]:
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    tables = {}
    for name, t in meta["tables"].items():
        with open(folder / t["file"], newline="", encoding="utf-8") as f:
            tables[name] = list(csv.DictReader(f))
    return meta, tables


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
    kind: str,
    old: Any,
    new: Any,
    *,
    spread_old: float | None = None,
    spread_new: float | None = None,
    table_rel_noise: float | None = None,
) -> tuple[bool, str]:
    """(within tolerance, the tolerance in words) for one committed/new pair."""
    if kind == "exact":
        return str(old) == str(new), "equal"
    a, b = _float(old), _float(new)
    if a is None or b is None:
        return str(old) == str(new), "equal (not a number)"
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b), "both NaN"
    if kind == "numeric":
        tol = RTOL_NUMERIC * max(abs(a), abs(b)) + ATOL_NUMERIC
        return abs(a - b) <= tol, f"±{tol:.3g} (rel {RTOL_NUMERIC:g})"
    if spread_old is not None or spread_new is not None:
        tol = SPREAD_FACTOR * max(spread_old or 0.0, spread_new or 0.0) + TIMING_REL_FLOOR * abs(a)
        return abs(a - b) <= tol, f"±{tol:.3g} ({SPREAD_FACTOR:g}×spread + {TIMING_REL_FLOOR:.0%})"
    rel = max(TIMING_REL_FLOOR, SPREAD_FACTOR * (table_rel_noise or 0.0))
    return abs(a - b) <= rel * abs(a), f"±{rel:.0%} (table noise)"


def compare_experiment(
    committed: Path, new: Path, *, kinds: tuple[str, ...] = ("exact", "numeric", "timing")
) -> list[Finding]:
    """Every compared cell and value as a Finding (verdict ok, drift or not comparable)."""
    exp = committed.name
    old_meta, old_tables = _read(committed)
    new_meta, new_tables = _read(new)
    same_device = old_meta["device"]["id"] == new_meta["device"]["id"]
    device_reason = f"committed on {old_meta['device']['id']}, regenerated on {new_meta['device']['id']}"
    out: list[Finding] = []

    def skip_reason(kind: str) -> str:
        if kind not in kinds:
            return f"{kind} columns not compared in this check (--kinds {','.join(kinds)})"
        if kind == "timing" and not same_device:
            return device_reason
        return ""

    for tname, tmeta in old_meta["tables"].items():
        if tname not in new_meta["tables"]:
            out.append(
                Finding(
                    experiment=exp,
                    table=tname,
                    committed="present",
                    new="absent",
                    verdict="drift",
                    reason="the regenerated run did not produce this table",
                )
            )
            continue
        cols = [c["name"] for c in tmeta["columns"]]
        new_cols = [c["name"] for c in new_meta["tables"][tname]["columns"]]
        old_rows, new_rows = old_tables[tname], new_tables[tname]
        if cols != new_cols or len(old_rows) != len(new_rows):
            out.append(
                Finding(
                    experiment=exp,
                    table=tname,
                    committed=f"{len(old_rows)} rows x {cols}",
                    new=f"{len(new_rows)} rows x {new_cols}",
                    tolerance="same shape",
                    verdict="drift",
                    reason="table shape changed",
                )
            )
            continue
        noise = _table_rel_noise(old_rows, cols)
        for c in tmeta["columns"]:
            name, kind = c["name"], c["kind"]
            why = skip_reason(kind)
            spread_col = _spread_column(name, cols) if kind == "timing" else None
            for i, (ro, rn) in enumerate(zip(old_rows, new_rows, strict=True)):
                verdict, tol = "not comparable", ""
                if not why:
                    ok, tol = compare_cell(
                        kind,
                        ro[name],
                        rn[name],
                        spread_old=_float(ro[spread_col]) if spread_col else None,
                        spread_new=_float(rn[spread_col]) if spread_col else None,
                        table_rel_noise=noise,
                    )
                    verdict = "ok" if ok else "drift"
                out.append(
                    Finding(
                        experiment=exp,
                        table=tname,
                        row=i,
                        column=name,
                        kind=kind,
                        committed=ro[name],
                        new=rn[name],
                        tolerance=tol,
                        verdict=verdict,
                        reason=why,
                    )
                )
    for vname, v in old_meta["values"].items():
        out.append(_compare_value(exp, vname, v, new_meta["values"].get(vname), skip_reason(v["kind"])))
    return out


def _compare_value(exp: str, name: str, old: dict, new: dict | None, why: str) -> Finding:
    """One named value of meta.json; lists (of exact or numeric items) item by item."""
    kind = old["kind"]
    if new is None:
        new, why, verdict, tol = {"value": None}, "value not produced", "drift", ""
    else:
        if not why and isinstance(old["value"], list) and kind == "timing":
            why = "raw timing samples are kept, not compared"
        old_items = old["value"] if isinstance(old["value"], list) else [old["value"]]
        new_items = new["value"] if isinstance(new["value"], list) else [new["value"]]
        verdict, tol = "not comparable", ""
        if not why and len(old_items) != len(new_items):
            verdict, tol = "drift", "same length"
        elif not why:
            results = [compare_cell(kind, a, b) for a, b in zip(old_items, new_items, strict=True)]
            verdict = "ok" if all(ok for ok, _ in results) else "drift"
            tol = results[0][1] if results else ""
    return Finding(
        experiment=exp,
        table="values",
        column=name,
        kind=kind,
        committed=old["value"],
        new=new["value"],
        tolerance=tol,
        verdict=verdict,
        reason=why,
    )
