"""Compare a regenerated experiment with the committed one, cell by cell.

Each cell is compared only where its declared scope says it reproduces:

* ``any``      always (the gate regenerates with the committed model and profile);
* ``device``   when both runs used the same device type and dtype;
* ``machine``  when both runs came from the same device fingerprint.

and then by its declared ``compare`` (``sitedata.tolerance``: exact, numeric within a
relative tolerance, timing against the measured spread).

How each column and value is compared, where it reproduces and which tables, columns and
values there are come from the code (``sitedata.declared``), never from the meta.json of
the data checked, and the committed data must state the same. Every cell becomes one
Finding: ok, drift, or not comparable with a reason the code's declarations give (a scope
the two runs' devices do not share, or the rows a ``length="timing"`` table's timings set).
"""

from __future__ import annotations

from sitedata.declared import Declared, declaration_findings, header
from sitedata.findings import Finding
from sitedata.read import Experiment
from sitedata.schema import Table, Value
from sitedata.tolerance import _float, _spread_column, _table_rel_noise, compare_cell


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


def run_gap(committed: Experiment, new: Experiment, code: Declared) -> list[Finding]:
    """The regenerated run must rerun the committed one: its profile and model, with the
    parameters the code's Config gives for that profile. Otherwise it is no regeneration
    of it, and a failing finding for each difference stands in for its cells."""
    old_meta, new_meta = committed.meta, new.meta
    pairs = (
        ("profile", old_meta["profile"], new_meta["profile"], "measured another profile than the committed run"),
        (
            "model",
            old_meta["model"]["spec"],
            new_meta["model"]["spec"],
            "measured another model than the committed run",
        ),
        (
            "parameters",
            code.parameters,
            new_meta["parameters"],
            f"ran other parameters than the code's Config gives for profile {old_meta['profile']!r}",
        ),
    )
    return [
        Finding(
            experiment=committed.name,
            table="meta",
            verdict="drift",
            column=key,
            committed=old,
            new=now,
            reason=f"the regenerated run {what}: it is no rerun of the committed data, whose cells go uncompared",
        )
        for key, old, now, what in pairs
        if old != now
    ]


def compare_experiment(
    committed: Experiment,
    new: Experiment,
    *,
    code: Declared,
    kinds: tuple[str, ...] = ("exact", "numeric", "timing"),
) -> list[Finding]:
    """The committed data held against the code's declarations, then every table, cell
    and value the code declares, committed against regenerated, as Findings."""
    exp = committed.name
    old_meta, new_meta = committed.meta, new.meta
    out = declaration_findings(committed, code)
    gap = run_gap(committed, new, code)
    if gap:
        return out + gap
    old_model, new_model = old_meta["model"], new_meta["model"]
    keys = sorted(k for k in {*old_model, *new_model} if old_model.get(k) != new_model.get(k))
    if keys:  # the same spec loads the same model: its name, weights and parameter count are no one's to write
        out.append(
            Finding(
                experiment=exp,
                table="meta",
                verdict="drift",
                column="model",
                committed={k: old_model.get(k) for k in keys},
                new={k: new_model.get(k) for k in keys},
                reason=f"the committed run describes its model ({', '.join(keys)}) otherwise than a rerun of it does",
            )
        )

    def reason(compare: str, scope: str) -> tuple[str, str]:
        if compare not in kinds:
            return "not compared", f"{compare} not selected in this check (--kinds {','.join(kinds)})"
        gap = scope_gap(scope, old_meta, new_meta)
        return ("not comparable", gap) if gap else ("", "")

    for t in code.tables:
        cols = t.column_names
        if t.name not in old_meta["tables"] or header(committed, t.name) != cols:
            continue  # a failing finding of the declarations says why; no cell to line up
        if t.name not in new_meta["tables"]:
            out.append(
                Finding(
                    experiment=exp,
                    table=t.name,
                    verdict="drift",
                    committed="present",
                    new="absent",
                    reason="the regenerated run did not produce this table",
                )
            )
            continue
        new_cols = header(new, t.name)
        old_rows, new_rows = committed.rows(t.name), new.rows(t.name)
        if cols == new_cols and len(old_rows) != len(new_rows) and t.length == "timing":
            # The timings chose where the table ends: compare the rows both runs have.
            shared = min(len(old_rows), len(new_rows))
            out.append(
                Finding(
                    experiment=exp,
                    table=t.name,
                    verdict="not comparable",
                    committed=f"{len(old_rows)} rows",
                    new=f"{len(new_rows)} rows",
                    reason=f"rows after the first {shared} are set by timings on the measuring machine",
                )
            )
            old_rows, new_rows = old_rows[:shared], new_rows[:shared]
        if cols != new_cols or len(old_rows) != len(new_rows):
            out += _reshaped(exp, t, old_rows, new_rows, new_cols, scope_gap("device", old_meta, new_meta), kinds)
            continue
        noise = _table_rel_noise(old_rows, cols)
        for c in t.columns:
            skip, why = reason(c.compare, c.scope)
            spread_col = _spread_column(c.name, cols) if c.compare == "timing" else None
            for i, (ro, rn) in enumerate(zip(old_rows, new_rows, strict=True)):
                verdict, tol = skip, ""
                if not skip:
                    ok, tol = compare_cell(
                        c.compare,
                        ro[c.name],
                        rn[c.name],
                        spread_old=_float(ro[spread_col]) if spread_col else None,
                        spread_new=_float(rn[spread_col]) if spread_col else None,
                        table_rel_noise=noise,
                    )
                    verdict = "ok" if ok else "drift"
                out.append(
                    Finding(
                        experiment=exp,
                        table=t.name,
                        row=i,
                        column=c.name,
                        compare=c.compare,
                        scope=c.scope,
                        committed=ro[c.name],
                        new=rn[c.name],
                        tolerance=tol,
                        verdict=verdict,
                        reason=why,
                    )
                )
    for v in code.values:
        if v.name in old_meta["values"]:  # a missing one is a failing finding of the declarations
            skip, why = reason(v.compare, v.scope)
            out.append(_compare_value(exp, v, old_meta["values"][v.name], new_meta["values"].get(v.name), skip, why))
    return out


def _reshaped(
    exp: str, t: Table, old_rows: list, new_rows: list, new_cols: list, device_gap: str, kinds: tuple[str, ...]
) -> list[Finding]:
    """A table whose shape changed. On the same device type and dtype that is a change of
    method (drift). Between devices its rows may legitimately differ (a row per dtype of
    the run), but not its any-scope cells: each committed row's must stand in some
    regenerated row and each regenerated row's in some committed row."""
    shape = Finding(
        experiment=exp,
        table=t.name,
        verdict="not comparable" if device_gap else "drift",
        committed=f"{len(old_rows)} rows x {t.column_names}",
        new=f"{len(new_rows)} rows x {new_cols}",
        tolerance="same shape",
        reason=f"table shape changed; {device_gap}" if device_gap else "table shape changed",
    )
    cols = [c for c in t.columns if c.scope == "any" and c.compare in kinds and c.compare != "timing"]
    if not device_gap or not cols or not set(t.column_names) <= set(new_cols):
        return [shape]
    names, compare = ",".join(c.name for c in cols), "/".join(sorted({c.compare for c in cols}))

    def cells(row: dict) -> str:
        return ",".join(str(row[c.name]) for c in cols)

    def same(a: dict, b: dict) -> bool:
        return all(compare_cell(c.compare, a[c.name], b[c.name])[0] for c in cols)

    out = [shape]
    for i, ro in enumerate(old_rows):
        match = next((rn for rn in new_rows if same(ro, rn)), None)
        out.append(
            Finding(
                experiment=exp,
                table=t.name,
                verdict="ok" if match else "drift",
                row=i,
                column=names,
                compare=compare,
                scope="any",
                committed=cells(ro),
                new=cells(match) if match else None,
                tolerance="in a regenerated row",
                reason="" if match else "no regenerated row holds these any-scope cells",
            )
        )
    for j, rn in enumerate(new_rows):
        if not any(same(ro, rn) for ro in old_rows):
            out.append(
                Finding(
                    experiment=exp,
                    table=t.name,
                    verdict="drift",
                    column=names,
                    compare=compare,
                    scope="any",
                    new=cells(rn),
                    tolerance="in a committed row",
                    reason=f"regenerated row {j}'s any-scope cells stand in no committed row",
                )
            )
    return out


def _compare_value(exp: str, v: Value, old: dict, new: dict | None, skip: str, why: str) -> Finding:
    """One named value of meta.json; lists item by item (raw timing samples are kept, not compared)."""
    tol = ""
    if new is None:
        new, verdict, why = {"value": None}, "drift", "value not produced"
    elif skip:
        verdict = skip
    elif isinstance(old["value"], (list, dict)) and v.compare == "timing":
        verdict, why = "not compared", "raw timing samples are kept, not compared"
    else:
        old_items = old["value"] if isinstance(old["value"], list) else [old["value"]]
        new_items = new["value"] if isinstance(new["value"], list) else [new["value"]]
        if len(old_items) != len(new_items):
            verdict, tol = "drift", "same length"
        else:
            results = [compare_cell(v.compare, a, b) for a, b in zip(old_items, new_items, strict=True)]
            verdict = "ok" if all(ok for ok, _ in results) else "drift"
            tol = results[0][1] if results else ""
    return Finding(
        experiment=exp,
        table="values",
        column=v.name,
        compare=v.compare,
        scope=v.scope,
        committed=old["value"],
        new=new["value"],
        tolerance=tol,
        verdict=verdict,
        reason=why,
    )
