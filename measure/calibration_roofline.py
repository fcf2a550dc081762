"""The ``roofline`` table of ``site_data/calibration/`` (``measure/calibration_folder.py``):
each run's probes of its machine's roofline (``measure/lab/roofline.py``), one row per
probe at the run's start and at its end, kept and dropped with the run's row."""

from __future__ import annotations

from typing import Any

from measure.lab.calibration import Calibration
from sitedata import Column, Table
from sitedata.policies import TIMING
from sitedata.schema import interval_columns

ROOFLINE = Table(
    "roofline",
    "The probes of each run's roofline",
    (
        Column("run", description="<UTC date and time>-<8 hex>"),
        Column("moment", description="start or end of the run"),
        Column("probe", description="copy, read, dispatch or matmul"),
        Column("dtype", description="the matmul's dtype (empty for the others)"),
        Column("rows", "", "rows of the matmul's input (empty for the others)"),
        Column("work", "", "per call: FLOPs of a matmul, bytes moved by a copy or read, 1 for an operator"),
        *interval_columns("time_ms", "ms", "time per call"),
        Column("rate", "", "work per second: FLOP/s, bytes/s, or operators/s", policy=TIMING),
    ),
    description=(
        "One row per probe of each run's calibration, at its start and at its end: the copy and a streaming read "
        "of a buffer larger than every cache (bytes moved per second), matrix multiplies of the model's projection "
        "shape at each row count in each dtype timed (FLOPs per second, the weights in cache), and a trivial "
        "operator (operators per second): the roofline every timing is set against."
    ),
)
ROOFLINE_COLUMNS = ROOFLINE.column_names


def probe_rows(cal: Calibration) -> list[dict[str, Any]]:
    """The ``roofline`` rows of one calibration (none for one measured without probes)."""
    from measure.lab.machine_probes import matmul_flops

    if cal.read is None:
        return []
    probes = [("copy", "", "", cal.moved_bytes, cal.copy), ("read", "", "", cal.copy_bytes, cal.read)]
    probes.append(("dispatch", "", "", 1, cal.dispatch))
    for (dtype, rows), est in sorted(cal.matmuls.items()):
        probes.append(("matmul", dtype, rows, matmul_flops(rows, cal.shape), est))
    return [
        {
            "run": cal.run_id,
            "moment": cal.moment,
            "probe": probe,
            "dtype": dtype,
            "rows": rows,
            "work": work,
            **est.columns("time_ms"),
            "rate": work / est.median_s,
        }
        for probe, dtype, rows, work, est in probes
    ]


def probes_of(rows: list[dict[str, Any]], *probe_lists: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The probe rows of the runs in ``rows``: a later list's rows of a run replace an
    earlier list's; by run, then moment and probe as measured."""
    runs, by_run = [r["run"] for r in rows], {}
    for probes in probe_lists:
        for run in {p["run"] for p in probes}:
            by_run[run] = [p for p in probes if p["run"] == run]
    return [p for run in runs for p in by_run.get(run, [])]
