"""A table whose rows differ in number between the committed and the regenerated run.

On the same device type and dtype a new shape is a change of method (drift). Between
devices the rows may legitimately differ (a row per dtype of the run), and the table is
not comparable row by row; its any-scope cells still reproduce, and are compared as the
rows' sets (``compare_cell`` is the drift gate's rule for one cell, sitedata.compare)."""

from __future__ import annotations

from collections.abc import Callable

from sitedata.findings import Finding
from sitedata.schema import Table


def reshaped(
    exp: str,
    t: Table,
    old_rows: list,
    new_rows: list,
    new_cols: list,
    device_gap: str,
    kinds: tuple[str, ...],
    compare_cell: Callable,
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
