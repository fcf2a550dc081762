"""The roofline's tables of ``site_data/calibration/`` (``measure/calibration_folder.py``):

* ``roofline``: each run's probes of its machine's roofline (``measure/lab/roofline.py``),
  one row per probe at the run's start and at its end, kept and dropped with the run's row;
* ``machine`` and ``ceilings``: the model those probes give at each run's start, the one
  every prediction of the run is made with, as the methods page shows it: the memory
  ceiling (copy bandwidth, the read bandwidth beside it), the fixed cost of an operator
  (and of a trivial one), and for each dtype and row count the compute ceiling with the
  intensity at which it meets the memory ceiling (the balance point). Worked out from the
  ``roofline`` rows whenever the folder is written, never measured twice."""

from __future__ import annotations

from typing import Any

from measure.lab.calibration import Calibration
from sitedata import Column, Table
from sitedata.policies import TIMING
from sitedata.schema import derived_columns, interval_columns, interval_names

ROOFLINE = Table(
    "roofline",
    "The probes of each run's roofline",
    (
        Column("run", description="<UTC date and time>-<8 hex>"),
        Column("moment", description="start or end of the run"),
        Column("probe", description="copy, read, dispatch, operator or matmul"),
        Column("dtype", description="the matmul's dtype (empty for the others)"),
        Column("rows", "", "rows of the matmul's input (empty for the others)"),
        Column(
            "work",
            "",
            "per call: FLOPs of a matmul, bytes moved by a copy or read, 1 for an operator (its time is per operator)",
        ),
        *interval_columns("time_ms", "ms", "time per call"),
        Column("rate", "", "work per second: FLOP/s, bytes/s, or operators/s", policy=TIMING),
    ),
    description=(
        "One row per probe of each run's calibration, at its start and at its end: the copy and a streaming read "
        "of a buffer larger than every cache (bytes moved per second), matrix multiplies of the model's projection "
        "shape at each row count in each dtype timed (FLOPs per second, the weights in cache), a trivial "
        "operator and an operator in eager module code (operators per second): the roofline every timing is set "
        "against."
    ),
)
ROOFLINE_COLUMNS = ROOFLINE.column_names

MACHINE = Table(
    "machine",
    "The machine's roofline at the start of each run",
    (
        Column("run", description="<UTC date and time>-<8 hex>"),
        *derived_columns("copy_gb_s", "GB/s", "memory ceiling: copy bandwidth"),
        *derived_columns("read_gb_s", "GB/s", "read bandwidth"),
        *derived_columns("operator_us", "µs", "fixed cost per operator (eager module code)"),
        *derived_columns("trivial_us", "µs", "a trivial operator"),
    ),
    description=(
        "The model every prediction of a run is made with, from the probes at its start: the memory ceiling (a "
        "copy's bytes moved per second) with the read bandwidth beside it, and the fixed cost of one operator in "
        "eager module code with a trivial operator's beside it, each with the 95 % range its probe's interval gives."
    ),
)
CEILINGS = Table(
    "ceilings",
    "Compute ceilings at the start of each run, by dtype and rows",
    (
        Column("run", description="<UTC date and time>-<8 hex>"),
        Column("dtype"),
        Column("rows", "rows", "rows of input"),
        *derived_columns("ceiling_gflops", "GFLOP/s", "compute ceiling"),
        *derived_columns("balance_flops_per_byte", "FLOP/byte", "balance point: ceiling / copy bandwidth"),
    ),
    description=(
        "For each dtype and row count probed at a run's start: the FLOP/s a multiply of the model's projection "
        "shape reached with its weights in cache, and that ceiling over the copy bandwidth, the FLOPs per byte "
        "moved at which a step of that many rows stops waiting on memory, each with the 95 % range its probes' "
        "intervals give."
    ),
)


def probe_rows(cal: Calibration) -> list[dict[str, Any]]:
    """The ``roofline`` rows of one calibration (none for one measured without probes)."""
    from measure.lab.machine_probes import matmul_flops

    if cal.read is None:
        return []
    probes = [("copy", "", "", cal.moved_bytes, cal.copy), ("read", "", "", cal.copy_bytes, cal.read)]
    probes.append(("dispatch", "", "", 1, cal.dispatch))
    if cal.operator is not None:
        probes.append(("operator", "", "", 1, cal.operator))
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


def _rate(probe: dict[str, Any], scale: float = 1.0) -> tuple[float, float, float]:
    """Work per second of a probe row (median, low, high), times ``scale``."""
    low, high, _ = interval_names("time_ms")
    work = float(probe["work"]) * scale * 1e3  # per ms -> per s
    return work / float(probe["time_ms"]), work / float(probe[high]), work / float(probe[low])


def _seconds(probe: dict[str, Any], scale: float) -> tuple[float, float, float]:
    low, high, _ = interval_names("time_ms")
    return tuple(float(probe[k]) * scale for k in ("time_ms", low, high))


def _cells(name: str, triple) -> dict[str, float | None]:
    low, high, _ = interval_names(name)
    return dict(zip((name, low, high), triple, strict=True)) if triple else dict.fromkeys((name, low, high))


def model_rows(probes: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``machine`` and ``ceilings`` rows of the runs in ``probes`` (their start)."""
    machine, ceilings = [], []
    for run in dict.fromkeys(p["run"] for p in probes):
        start = [p for p in probes if p["run"] == run and p["moment"] == "start"]
        by = {p["probe"]: p for p in start if p["probe"] != "matmul"}
        if "copy" not in by:
            continue
        copy = _rate(by["copy"])
        per_op = {k: _seconds(by[k], 1e3) if k in by else None for k in ("operator", "dispatch")}  # ms -> µs
        machine.append(
            {
                "run": run,
                **_cells("copy_gb_s", tuple(x / 1e9 for x in copy)),
                **_cells("read_gb_s", tuple(x / 1e9 for x in _rate(by["read"])) if "read" in by else None),
                **_cells("operator_us", per_op["operator"]),
                **_cells("trivial_us", per_op["dispatch"]),
            }
        )
        for p in sorted((p for p in start if p["probe"] == "matmul"), key=lambda p: (p["dtype"], int(p["rows"]))):
            flops = _rate(p)
            # the balance's range: the low ceiling over the high bandwidth, and the reverse
            balance = (flops[0] / copy[0], flops[1] / copy[2], flops[2] / copy[1])
            ceilings.append(
                {
                    "run": run,
                    "dtype": p["dtype"],
                    "rows": int(p["rows"]),
                    **_cells("ceiling_gflops", tuple(x / 1e9 for x in flops)),
                    **_cells("balance_flops_per_byte", balance),
                }
            )
    return machine, ceilings
