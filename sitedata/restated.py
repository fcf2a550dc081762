"""A named value that restates one of its experiment's table cells (the smallest context's
step, ``step_smallest_ms``, is row 0 of the decode table), or the ratio of two cells of one
column (the step's growth, ``step_growth``, is the decode table's last row over its first):
compared once, as those cells.

A value is a page's handle on a number; where the number is a timing cell too, the cell
is compared with what its row knows (its interval, and its own sweep's speed where the
sweep probed the machine in its rounds: ``sitedata.round_speed``), which the value alone
does not. The value is then reported as compared there instead of being decided twice,
and on less. A value restates a cell where it equals that cell in both runs, float for
float (both are the same number, written once to the CSV and once to meta.json); it
restates a ratio where it equals, float for float in both runs, one cell divided by
another of the same column (the division the experiment made, on the numbers it wrote).
A ratio's two cells each move within their own intervals; the ratio, held alone to the
default half-width, moved by up to the sum of both (an unchanged regeneration moved
``ttft_growth`` by -18 % while each prefill stayed within its range): its cells carry all
it says.
Torch-free.
"""

from __future__ import annotations

import itertools

from sitedata.cell_compare import _float
from sitedata.declared import Declared
from sitedata.read import Experiment
from sitedata.schema import Column, Table
from sitedata.timing_compare import machine_model, profiled


def _compared(t: Table) -> list[Column]:
    """The timing columns of ``t`` that the gate compares cell by cell (none of a simulated
    table, whose timings are simulated again instead)."""
    if t.simulated:
        return []
    bounds = {n for c in t.columns if c.interval for n in (*c.interval, c.samples) if n}
    return [
        c
        for c in t.columns
        if c.compare == "timing" and c.name not in bounds and not machine_model(c.name) and not profiled(c.name, t.name)
    ]


def _pairs(t: Table, old_rows: list[dict], new_rows: list[dict]) -> dict[str, list[tuple[int, float, float]]]:
    """Column -> (row, committed, regenerated) of each compared timing cell that holds a number in both runs."""
    out = {}
    for c in _compared(t):
        pairs = (
            (i, _float(ro.get(c.name)), _float(rn.get(c.name)))
            for i, (ro, rn) in enumerate(zip(old_rows, new_rows, strict=True))
        )
        out[c.name] = [(i, a, b) for i, a, b in pairs if a is not None and b is not None]
    return out


def _ratios(pairs: dict[str, list[tuple[int, float, float]]], table: str) -> dict[tuple[float, float], str]:
    """(committed, regenerated) -> "<table> row i <column> over row j", every ratio of two cells of one column."""
    out = {}
    for name, known in pairs.items():
        for (i, a, b), (j, x, y) in itertools.permutations(known, 2):
            if x and y:
                out.setdefault((a / x, b / y), f"{table} row {i} {name} over row {j}")
    return out


def ratio_cells(t: Table, old_rows: list[dict], new_rows: list[dict]) -> dict[tuple[int, str], str]:
    """(row, column) -> where it is compared instead, for each compared timing cell of ``t``
    that is, in both runs, one cell of another compared column over another cell of it
    (a peak's bytes over the cached peak's, ``relative_to_cached``). A cell of 1 in both
    runs is left alone: any two equal cells would match it, and it did not move."""
    if len(old_rows) != len(new_rows):
        return {}
    pairs = _pairs(t, old_rows, new_rows)
    # each column's ratios once; a cell looks in every other column's, in column order
    ratios = {name: _ratios({name: known}, t.name) for name, known in pairs.items()}
    out = {}
    for name, known in pairs.items():
        for i, a, b in known:
            if (a, b) == (1.0, 1.0):
                continue
            where = next((r[(a, b)] for n, r in ratios.items() if n != name and (a, b) in r), None)
            if where:
                out[(i, name)] = where
    return out


def restated_cells(committed: Experiment, new: Experiment, code: Declared) -> dict[str, str]:
    """Timing value name -> where it is compared instead ("decode row 0 step_ms", or
    "decode row 4 step_ms over row 0" for a ratio). A value that is a cell, or a ratio of
    two cells, of the same column in both runs but at other rows (the best of a column, a
    largest over a smallest, which the timings pick) is compared there too: "decode row 1
    compiled_speedup, then row 0"; each of those rows is compared as itself."""
    cells: dict[tuple[float, float], str] = {}
    ratios: dict[tuple[float, float], str] = {}
    # each run on its own: number -> (table, column, rows), for a value read at other rows
    alone: tuple[dict, dict] = ({}, {})
    for t in code.tables:
        if t.name not in committed.meta["tables"] or t.name not in new.meta["tables"]:
            continue
        old_rows, new_rows = committed.rows(t.name), new.rows(t.name)
        if len(old_rows) != len(new_rows):
            continue
        pairs = _pairs(t, old_rows, new_rows)
        # a cell that is itself a ratio of other cells is compared as those
        over = ratio_cells(t, old_rows, new_rows)
        for name, known in pairs.items():
            for i, a, b in known:
                cells.setdefault((a, b), over.get((i, name), f"{t.name} row {i} {name}"))
                if (i, name) not in over:
                    for run, number in zip(alone, (a, b), strict=True):
                        run.setdefault(number, (t.name, name, (i,)))
            # every ratio of two cells of the column: in both runs at once, and in each alone
            for (i, a, b), (j, x, y) in itertools.permutations(known, 2):
                both = (a / x if x else None, b / y if y else None)
                if None not in both:
                    ratios.setdefault(both, f"{t.name} row {i} {name} over row {j}")
                for run, number in zip(alone, both, strict=True):
                    if number is not None:
                        run.setdefault(number, (t.name, name, (i, j)))
    out = {}
    for v in code.values:
        old, new_value = committed.meta["values"].get(v.name), new.meta["values"].get(v.name)
        if v.compare != "timing" or old is None or new_value is None:
            continue
        a, b = _float(old.get("value")), _float(new_value.get("value"))
        if a is None or b is None:
            continue
        if where := cells.get((a, b)) or ratios.get((a, b)):
            out[v.name] = where
        elif (
            (was := alone[0].get(a)) and (now := alone[1].get(b)) and was[:2] == now[:2] and len(was[2]) == len(now[2])
        ):
            out[v.name] = f"{_rows(was)}, then {_rows(now, table=False)}"
    return out


def _rows(where: tuple[str, str, tuple[int, ...]], *, table: bool = True) -> str:
    """ "decode row 1 compiled_speedup", or "decode row 4 step_ms over row 0"; without the
    table and the column: "row 0", "row 3 over row 0"."""
    name, column, rows = where
    head = f"{name} row {rows[0]} {column}" if table else f"row {rows[0]}"
    return head + (f" over row {rows[1]}" if len(rows) == 2 else "")
