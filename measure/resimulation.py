"""The drift gate's check of a simulation: its tables are worked out again from the
committed run's own recorded costs and held to the committed rows.

A simulated table (``Table(simulated=True)``) follows the measured costs it was fed:
which slot a request took and when its tokens were done move with every timing, so
comparing them cell by cell between two runs would report the machine's noise many times
over. What can change without the costs changing is the simulation's arithmetic. An
experiment that simulates exposes ``resimulate(cfg, rows)``: given its profile's Config
and a reader of the run's tables, the simulated tables worked out again. Every cell the
resimulation gives must equal the committed one (floats to 1e-9 relative: the costs are
read back from their milliseconds), on any machine, since it is arithmetic only.
"""

from __future__ import annotations

import csv
import io

from measure import registry
from sitedata import Experiment
from sitedata.findings import Finding
from sitedata.store import csv_text

RTOL = 1e-9  # a cost read back from its milliseconds may differ from the one used in its last bit


def _same(stored: str, again: str) -> bool:
    try:
        a, b = float(stored), float(again)
    except ValueError:
        return stored == again
    return abs(a - b) <= RTOL * max(abs(a), abs(b)) or (a != a and b != b)


def held(experiment: str, table: str, stored: list[dict[str, str]], again: list[dict]) -> Finding:
    """One finding for the table: ok, or drift at the first cell (or row count) that differs."""
    columns = list(again[0]) if again else []
    # written as the run writes a table, then read back: the text the committed file holds
    text = list(csv.DictReader(io.StringIO(csv_text(columns, again))))
    if len(text) != len(stored):
        return Finding(
            experiment=experiment,
            table=table,
            verdict="drift",
            committed=f"{len(stored)} rows",
            new=f"{len(text)} rows",
            reason="the simulation run again on the committed costs gives another number of rows",
        )
    for i, (old, new) in enumerate(zip(stored, text, strict=True)):
        for c in columns:
            if c not in old or not _same(old[c], new[c]):
                return Finding(
                    experiment=experiment,
                    table=table,
                    row=i,
                    column=c,
                    compare="simulated",
                    committed=old.get(c, "absent"),
                    new=new[c],
                    verdict="drift",
                    reason="the simulation run again on the committed run's own costs gives another value: "
                    "its arithmetic changed since the run",
                )
    return Finding(
        experiment=experiment,
        table=table,
        compare="simulated",
        verdict="ok",
        tolerance=f"rel {RTOL:g}",
        reason=f"the simulation run again on the committed costs gives all {len(text) * len(columns)} cells",
    )


def resimulation_findings(exp: Experiment) -> list[Finding]:
    """The committed run's simulated tables against their resimulation (none where the
    experiment simulates nothing)."""
    mod = registry.load(exp.name)
    if mod.resimulate is None:
        return []
    cfg = mod.Config.for_profile(exp.meta["profile"])
    simulated = {t.name for t in mod.TABLES if t.simulated}
    again = mod.resimulate(cfg, exp.rows)
    return [held(exp.name, name, exp.rows(name), rows) for name, rows in sorted(again.items()) if name in simulated]
