"""Compare a regenerated experiment with the committed one, cell by cell.

Each cell is compared only where its declared scope says it reproduces:

* ``any``      always (the gate regenerates with the committed model and profile);
* ``device``   when both runs used the same device type and dtype;
* ``machine``  when both runs came from the same device fingerprint.

and then by its declared ``compare``:

* exact:   equal, character for character as written to CSV;
* numeric: |new - old| <= RTOL_NUMERIC * max(|old|, |new|) (+ a tiny absolute floor);
* timing:  a column ``x_ms`` with a sibling spread column (``x_spread_ms``, or
  ``spread_ms`` for ``total_ms``) may move by SPREAD_FACTOR x the larger of the two runs'
  spreads plus TIMING_REL_FLOOR of its value; a timing column with no spread of its own
  (a ratio of two times, memory read from the OS) gets SPREAD_FACTOR x the median
  relative spread of its table, and never less than TIMING_REL_FLOOR.

Every cell becomes one Finding: ok, drift, or not comparable with the reason.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from sitedata.read import Experiment

# Float32 results move at ~1e-6 relative between BLAS builds, CPU models and thread
# counts; any real change of method (a quantizer, a tokenisation, a protocol) moves them
# by far more than 1e-3. So 1e-3 passes the first and catches the second.
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
    verdict: str  # ok | drift | not comparable | not compared | stale | missing | invalid | unused | unknown
    row: int | None = None
    column: str | None = None
    compare: str = ""
    scope: str = ""
    committed: Any = None
    new: Any = None
    tolerance: str = ""
    reason: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


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


def _where(meta: dict) -> dict[str, str]:
    return {"device": f"{meta['device']['type']} {meta['dtype']}", "machine": meta["device"]["id"]}


def scope_gap(scope: str, old_meta: dict, new_meta: dict) -> str:
    """Why a value of this scope cannot be compared between the two runs ("" if it can)."""
    if scope == "any":
        return ""
    old, new = _where(old_meta)[scope], _where(new_meta)[scope]
    if old == new:
        return ""
    what = "device type and dtype" if scope == "device" else "machine"
    return f"reproduces on the same {what} only: committed on {old}, regenerated on {new}"


def run_gap(old_meta: dict, new_meta: dict) -> str:
    """Why two runs cannot be compared at all ("" if they can): another model or sweep."""
    for key in ("profile", "parameters"):
        if old_meta[key] != new_meta[key]:
            return f"the runs differ in {key}"
    if old_meta["model"]["spec"] != new_meta["model"]["spec"]:
        return f"the runs measured different models ({old_meta['model']['spec']} vs {new_meta['model']['spec']})"
    return ""


def compare_experiment(
    committed: Experiment, new: Experiment, *, kinds: tuple[str, ...] = ("exact", "numeric", "timing")
) -> list[Finding]:
    """Every cell and value of the committed run as a Finding."""
    exp = committed.name
    old_meta, new_meta = committed.meta, new.meta
    whole = run_gap(old_meta, new_meta)

    def reason(compare: str, scope: str) -> tuple[str, str]:
        if compare not in kinds:
            return "not compared", f"{compare} not selected in this check (--kinds {','.join(kinds)})"
        gap = whole or scope_gap(scope, old_meta, new_meta)
        return ("not comparable", gap) if gap else ("", "")

    out: list[Finding] = []
    for tname, tmeta in old_meta["tables"].items():
        if tname not in new_meta["tables"]:
            out.append(
                Finding(
                    experiment=exp,
                    table=tname,
                    verdict="drift",
                    committed="present",
                    new="absent",
                    reason="the regenerated run did not produce this table",
                )
            )
            continue
        cols = [c["name"] for c in tmeta["columns"]]
        new_cols = [c["name"] for c in new.columns(tname)]
        old_rows, new_rows = committed.rows(tname), new.rows(tname)
        if not whole and cols == new_cols and len(old_rows) != len(new_rows) and tmeta.get("length") == "timing":
            # The timings chose where the table ends: compare the rows both runs have.
            shared = min(len(old_rows), len(new_rows))
            out.append(
                Finding(
                    experiment=exp,
                    table=tname,
                    verdict="not comparable",
                    committed=f"{len(old_rows)} rows",
                    new=f"{len(new_rows)} rows",
                    reason=f"rows after the first {shared} are set by timings on the measuring machine",
                )
            )
            old_rows, new_rows = old_rows[:shared], new_rows[:shared]
        if not whole and (cols != new_cols or len(old_rows) != len(new_rows)):
            # Rows per dtype (one table row for each precision the run used) legitimately
            # differ between devices; on the same device a new shape is a change of method.
            device_gap = scope_gap("device", old_meta, new_meta)
            out.append(
                Finding(
                    experiment=exp,
                    table=tname,
                    verdict="not comparable" if device_gap else "drift",
                    committed=f"{len(old_rows)} rows x {cols}",
                    new=f"{len(new_rows)} rows x {new_cols}",
                    tolerance="same shape",
                    reason=f"table shape changed; {device_gap}" if device_gap else "table shape changed",
                )
            )
            continue
        noise = _table_rel_noise(old_rows, cols)
        for c in tmeta["columns"]:
            name, compare, scope = c["name"], c["compare"], c["scope"]
            skip, why = reason(compare, scope)
            spread_col = _spread_column(name, cols) if compare == "timing" else None
            for i, ro in enumerate(old_rows):
                rn = new_rows[i] if i < len(new_rows) else {}
                verdict, tol = skip, ""
                if not skip:
                    ok, tol = compare_cell(
                        compare,
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
                        compare=compare,
                        scope=scope,
                        committed=ro[name],
                        new=rn.get(name),
                        tolerance=tol,
                        verdict=verdict,
                        reason=why,
                    )
                )
    for vname, v in old_meta["values"].items():
        skip, why = reason(v["compare"], v["scope"])
        out.append(_compare_value(exp, vname, v, new_meta["values"].get(vname), skip, why))
    return out


def _compare_value(exp: str, name: str, old: dict, new: dict | None, skip: str, why: str) -> Finding:
    """One named value of meta.json; lists item by item (raw timing samples are kept, not compared)."""
    compare, scope = old["compare"], old["scope"]
    tol = ""
    if new is None:
        new, verdict, why = {"value": None}, "drift", "value not produced"
    elif skip:
        verdict = skip
    elif isinstance(old["value"], (list, dict)) and compare == "timing":
        verdict, why = "not compared", "raw timing samples are kept, not compared"
    else:
        old_items = old["value"] if isinstance(old["value"], list) else [old["value"]]
        new_items = new["value"] if isinstance(new["value"], list) else [new["value"]]
        if len(old_items) != len(new_items):
            verdict, tol = "drift", "same length"
        else:
            results = [compare_cell(compare, a, b) for a, b in zip(old_items, new_items, strict=True)]
            verdict = "ok" if all(ok for ok, _ in results) else "drift"
            tol = results[0][1] if results else ""
    return Finding(
        experiment=exp,
        table="values",
        column=name,
        compare=compare,
        scope=scope,
        committed=old["value"],
        new=new["value"],
        tolerance=tol,
        verdict=verdict,
        reason=why,
    )
