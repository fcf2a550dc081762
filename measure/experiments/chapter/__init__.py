"""The source chapter's own figures, written beside the measurements so that each page
can set them against this run's: facts typed from measure/reference/chapter.py, with
the section that states each, not measured; and what the roofline predicts for the
chapter's model on its laptop GPU and on two data-centre GPUs, from their datasheets
(``predictions.py``, ``measure/reference/gpus.py``): predictions, labelled as such on every
page that shows them, until a GPU run sets a measurement beside them.

Writes ``site_data/chapter/``. Alone: ``python -m measure run --only chapter``.
"""

from __future__ import annotations

from dataclasses import dataclass

from measure.experiments.chapter import predictions
from measure.experiments.chapter.tables import PREDICTION_TABLES, PREDICTION_VALUES
from measure.lab.context import Context
from measure.reference.chapter import FIGURES, SOURCE
from sitedata.schema import Column, Result, Table, Value

TITLE = "The chapter's own figures"
# The one figure written for a reader (a device described in words); the others are names as given.
_WORDS = ("device",)

TABLES = (
    Table(
        "figures",
        "The figures the source chapter reported on its own hardware",
        (
            Column("section", label="page"),
            Column("name"),
            Column("what", words=True, description="what the figure is, in the chapter's words"),
            Column("value", description="the figure when it is a number, as the chapter gives it, in unit"),
            Column("text", description="the figure when it is a name (a model, a device, a matrix, a token)"),
            Column("unit", description="the unit of value, as the chapter gives it (empty: a pure number)"),
            Column("where", label="stated in", words=True, description="the section of the chapter that states it"),
        ),
        description=(
            "The figures the source chapter reported on its own hardware, each with the section that states "
            "it: facts typed from measure/reference/chapter.py, not measured."
        ),
    ),
    *PREDICTION_TABLES,
)
VALUES = (
    Value("source", description="where the figures come from"),
    *(Value(f.name, f.unit, description=f"{f.what} ({f.where})", words=f.name in _WORDS) for f in FIGURES),
    *PREDICTION_VALUES,
)


@dataclass(frozen=True, kw_only=True)
class Config:
    @classmethod
    def for_profile(cls, profile: str) -> Config:
        return cls()


def run(cfg: Config, ctx: Context) -> Result:
    rows = [
        {
            "section": f.section,
            "name": f.name,
            "what": f.what,
            "value": None if isinstance(f.value, str) else f.value,
            "text": f.value if isinstance(f.value, str) else None,
            "unit": f.unit,
            "where": f.where,
        }
        for f in FIGURES
    ]
    figures = {"source": SOURCE, **{f.name: f.value for f in FIGURES}}
    return Result(tables={"figures": rows, **predictions.tables()}, values={**figures, **predictions.values()})
