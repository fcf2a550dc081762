"""Every timed step of the site that carries a prediction by the roofline, read from any
experiment's tables without a list of them: a table declares, beside a timing column
``<stem>_ms``, the prediction's columns ``<stem>_predicted_ms``, ``<stem>_flops`` and
``<stem>_moved_bytes`` (``measure/lab/prediction.py``), and each of its rows whose three
counts and timing are numbers is one step. The methods page's roofline places them, each
on the roofline of the run that measured it (the experiment's ``run.id``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SUFFIX = "_predicted_ms"


@dataclass(frozen=True)
class TimedStep:
    experiment: str
    table: str
    stem: str
    run: str | None  # the run whose calibration gives its roofline
    flops: float
    moved_bytes: float
    ms: float  # measured (the median)
    predicted_ms: float

    @property
    def intensity(self) -> float:
        """FLOPs per byte moved: where the step stands on the roofline's x axis."""
        return self.flops / self.moved_bytes

    @property
    def achieved_flop_s(self) -> float:
        """FLOPs over the measured time: how high it stands."""
        return self.flops / (self.ms / 1e3)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) and v > 0 else None


def stems(columns: list[str]) -> list[str]:
    """The stems of the predictions a table's columns declare, with what placing them needs."""
    names = set(columns)
    found = []
    for c in columns:
        if c.endswith(SUFFIX) and len(c) > len(SUFFIX):
            stem = c[: -len(SUFFIX)]
            if {f"{stem}_flops", f"{stem}_moved_bytes", f"{stem}_ms"} <= names:
                found.append(stem)
    return found


def timed_steps(data) -> list[TimedStep]:
    """Every row of every table with a prediction, as a step (rows with a count or a
    timing missing, a setting the machine could not run, are left out)."""
    found = []
    for exp in data.experiments:
        meta = data.meta(exp)
        run = meta.get("run") if isinstance(meta.get("run"), dict) else {}
        for name, table in meta["tables"].items():
            for stem in stems([c["name"] for c in table["columns"]]):
                frame = data.table(f"{exp}.{name}").frame
                for _, row in frame.iterrows():
                    cells = [_number(row[f"{stem}{s}"]) for s in ("_flops", "_moved_bytes", "_ms", SUFFIX)]
                    if None in cells:
                        continue
                    flops, moved, ms, predicted = cells
                    found.append(TimedStep(exp, name, stem, run.get("id"), flops, moved, ms, predicted))
    return found
