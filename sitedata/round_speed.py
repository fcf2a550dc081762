"""The machine's speed while one sweep ran, from the probes timed in that sweep's rounds.

A run's calibration probes its machine at its start and its end, minutes away from most
sweeps; on a shared machine the copy bandwidth and an operator's cost move by 10 to 30 %
in that time. A sweep that times the roofline's probes in its own rounds
(``measure/lab/roofline_in_rounds.py``) predicts each of its steps from those probes. The
same counted work predicted in two runs then differs only by the machine's terms in each
sweep's rounds, so the ratio of the two predictions is that sweep's speed while it timed
that row: what the gate divides out of the row's times instead of the run's. A row whose
prediction is made of the probed terms alone (a step bound by memory; or by arithmetic,
where the sweep also timed a multiply in its rounds) is not widened for a run that
drifted: its probes moved with it.

A table qualifies where its experiment recorded probes in its rounds (a value
``<stem>_round_gb_s``) and it holds predictions (``<stem>_predicted_ms`` with its
bounds); a row's ratio counts only where both runs counted the same work (FLOPs and
bytes moved). Torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sitedata.cell_compare import _float
from sitedata.machine_speed import Factor
from sitedata.schema import Table
from sitedata.timing_compare import relative_half_width

PREDICTED = "_predicted_ms"
WORK = ("_flops", "_moved_bytes")  # the counted work a prediction is made from
ROUND_PROBE = "_round_gb_s"
ROUND_COMPUTE = "_round_gflop_s"
# A step's prediction is max(memory, compute) + fixed (``measure.lab.prediction``); a sweep
# probes the bandwidth and the cost per operator in its own rounds (``roofline_in_rounds``),
# so a memory-bound step's whole prediction comes from them; a compute-bound one's too
# where the sweep also timed a multiply in its rounds (data measured before it did not).
MEMORY_BOUND = frozenset({"memory"})
ANY_BOUND = frozenset({"memory", "compute"})


def probed_in_rounds(values: dict) -> bool:
    """An experiment whose sweeps timed the roofline's probes in their own rounds."""
    return any(name.endswith(ROUND_PROBE) for name in values)


def computed_in_rounds(values: dict) -> bool:
    """An experiment whose sweeps timed a multiply in their rounds too."""
    return any(name.endswith(ROUND_COMPUTE) for name in values)


def _relative_half_width(row: dict, stem: str) -> float | None:
    value, low, high = (
        _float(row.get(f"{stem}{part}")) for part in (PREDICTED, "_predicted_low_ms", "_predicted_high_ms")
    )
    return None if value is None else relative_half_width(value, low, high)


@dataclass(frozen=True)
class SweepSpeed:
    """One row's sweep against the committed one's: the factor, and whether the terms
    that bound its step were all probed in the sweep's rounds (a compute-bound step's
    ceiling is the calibration's, probed minutes away)."""

    factor: Factor
    in_rounds: bool


def row_speeds(table: Table, ro: dict, rn: dict, *, compute: bool = False) -> dict[str, SweepSpeed]:
    """Prediction stem -> the sweep's speed, for each prediction of the same work (FLOPs and
    bytes moved) that both rows hold: the ratio of the two runs' predictions (above 1: the
    regenerated sweep ran faster), its half-width the two predictions' in quadrature.
    ``compute``: both runs timed a multiply in their rounds, so a compute-bound step's
    prediction came from the rounds too."""
    in_rounds_bounds = ANY_BOUND if compute else MEMORY_BOUND
    out = {}
    for c in table.columns:
        if not c.name.endswith(PREDICTED):
            continue
        stem = c.name.removesuffix(PREDICTED)
        if any(ro.get(stem + w) != rn.get(stem + w) for w in WORK):
            continue  # other work: its prediction's change is not the machine's
        old, new = _float(ro.get(c.name)), _float(rn.get(c.name))
        w_old, w_new = _relative_half_width(ro, stem), _relative_half_width(rn, stem)
        if old is None or new is None or old <= 0 or new <= 0 or w_old is None or w_new is None:
            continue
        in_rounds = {ro.get(stem + "_bound"), rn.get(stem + "_bound")} <= in_rounds_bounds
        out[stem] = SweepSpeed(Factor(old / new, math.hypot(w_old, w_new)), in_rounds)
    return out


def speed_of(column: str, speeds: dict[str, SweepSpeed]) -> SweepSpeed | None:
    """The speed that applies to ``column``: its own prediction's (``compiled_ms`` and
    ``compiled_*`` take ``compiled``'s), else the table's first (``tokens_per_s`` is the
    step's), else None."""
    if not speeds:
        return None
    own = [stem for stem in speeds if column == f"{stem}_ms" or column.startswith(f"{stem}_")]
    return speeds[max(own, key=len)] if own else next(iter(speeds.values()))
