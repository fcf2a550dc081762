"""A named value that restates one of its experiment's table cells (the smallest context's
step, ``step_smallest_ms``, is row 0 of the decode table): compared once, as that cell.

A value is a page's handle on a number; where the number is a timing cell too, the cell
is compared with what its row knows (its interval, and its own sweep's speed where the
sweep probed the machine in its rounds: ``sitedata.round_speed``), which the value alone
does not. The value is then reported as compared there instead of being decided twice,
and on less. A value restates a cell where it equals that cell in both runs, float for
float (both are the same number, written once to the CSV and once to meta.json).
Torch-free.
"""

from __future__ import annotations

from sitedata.cell_compare import _float
from sitedata.declared import Declared
from sitedata.read import Experiment
from sitedata.timing_compare import machine_model, profiled


def restated_cells(committed: Experiment, new: Experiment, code: Declared) -> dict[str, str]:
    """Timing value name -> where it is compared instead ("decode row 0 step_ms")."""
    cells: dict[tuple[float, float], str] = {}
    for t in code.tables:
        if t.name not in committed.meta["tables"] or t.name not in new.meta["tables"]:
            continue
        old_rows, new_rows = committed.rows(t.name), new.rows(t.name)
        if len(old_rows) != len(new_rows):
            continue
        for c in t.columns:
            if c.compare != "timing" or machine_model(c.name) or profiled(c.name, t.name):
                continue  # a column the gate does not compare: nothing to leave the value to
            for i, (ro, rn) in enumerate(zip(old_rows, new_rows, strict=True)):
                a, b = _float(ro.get(c.name)), _float(rn.get(c.name))
                if a is not None and b is not None:
                    cells.setdefault((a, b), f"{t.name} row {i} {c.name}")
    out = {}
    for v in code.values:
        old, new_value = committed.meta["values"].get(v.name), new.meta["values"].get(v.name)
        if v.compare != "timing" or old is None or new_value is None:
            continue
        a, b = _float(old.get("value")), _float(new_value.get("value"))
        if a is not None and b is not None and (a, b) in cells:
            out[v.name] = cells[(a, b)]
    return out
