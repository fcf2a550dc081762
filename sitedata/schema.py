"""Declarations: an experiment's tables and values, each column and value saying its
unit, its label, how a regenerated run is compared with it and where it reproduces (a
named policy, ``sitedata.policies``), whether its text is words written for a reader,
and, for a timing, which column holds its spread.

An experiment module declares ``TABLES`` and ``VALUES`` once at its top; its ``run``
returns a ``Result`` of plain rows and values that ``check`` holds against them.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from sitedata.names import BadName, check_name
from sitedata.policies import COMPARE, EXACT, POLICIES, SCOPES, TIMING, Policy

__all__ = ["COMPARE", "LENGTHS", "SCOPES", "Column", "Result", "SchemaError", "Table", "Value", "check"]

LENGTHS = ("fixed", "timing")


class SchemaError(ValueError):
    """An experiment produced something its declarations do not allow (a bug, not a user error)."""


def _checked(what: str, name: str, policy: Any) -> None:
    try:
        check_name(what, name)
    except BadName as e:
        raise SchemaError(str(e)) from None
    if not isinstance(policy, Policy) or policy not in POLICIES:
        raise SchemaError(f"{what} {name}: policy {policy!r} is none of sitedata.policies' named ones")


@dataclass(frozen=True)
class Column:
    """One column of a table. ``label`` is the header a page shows (the name when left
    out); ``policy`` how a rerun is compared with it and where it reproduces;
    ``description`` a line a header's tooltip shows.

    ``words=True``: its cells are words written for a reader (a method's or a policy's
    name, a verdict, a scheme's label, a reason), shown in the page's language through
    the catalogs; any other text (what a model wrote, tokens, a matrix's name) is shown
    as measured. A timing names the columns of the same table that hold its noise, the
    drift gate's tolerance: ``interval=("step_low_ms", "step_high_ms")``, the 95 %
    confidence interval of its median, with ``samples="step_samples"``, how many samples
    it rests on (``interval_columns`` declares the four at once); or, in data measured
    before intervals, ``spread="spread_ms"``, the interquartile range of its samples."""

    name: str
    unit: str = ""
    label: str = ""
    _: KW_ONLY
    policy: Policy = EXACT
    description: str = ""
    words: bool = False
    spread: str = ""
    interval: tuple[str, str] | tuple[()] = ()
    samples: str = ""

    def __post_init__(self) -> None:
        _checked("column", self.name, self.policy)
        if self.label == self.name:
            raise SchemaError(f"column {self.name}: its label repeats its name; leave it out (it defaults to the name)")
        named = [self.spread, *self.interval, self.samples]
        if not all(isinstance(n, str) for n in named) or len(self.interval) not in (0, 2):
            raise SchemaError(f"column {self.name}: interval is a pair of column names, spread and samples a name")
        if any(named) and (self.name in named or self.compare != "timing"):
            raise SchemaError(f"column {self.name}: only a timing has noise, and in other columns")
        if self.spread and self.interval or self.samples and not self.interval:
            raise SchemaError(f"column {self.name}: a spread or an interval with its samples, not both")

    @property
    def compare(self) -> str:
        return self.policy.compare

    @property
    def scope(self) -> str:
        return self.policy.scope

    @property
    def noise(self) -> dict[str, Any]:
        """The columns that hold this timing's noise, by kind, as meta.json records them:
        ``{"interval": ["step_low_ms", "step_high_ms"], "samples": "step_samples"}`` or
        ``{"spread": "spread_ms"}``."""
        if self.interval:
            return {"interval": list(self.interval), **({"samples": self.samples} if self.samples else {})}
        return {"spread": self.spread} if self.spread else {}

    @property
    def noise_columns(self) -> list[str]:
        """Every column this one names as its noise."""
        return [self.spread, *self.interval, self.samples] if any((self.spread, self.interval)) else []

    def as_meta(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "unit": self.unit,
            "label": self.label or self.name,
            "compare": self.compare,
            "scope": self.scope,
            "description": self.description,
            "words": self.words,
            "noise": self.noise,
        }


@dataclass(frozen=True)
class Table:
    """``title`` may name the run's values or parameters in braces (``"d = {head_dim}"``);
    ``description`` says what the table holds.
    ``length`` says what sets the number of rows: ``"fixed"``, the parameters, or
    ``"timing"``, the measurements (a sweep that stops at a knee: the gate compares the
    rows both runs have). ``simulated``: rows a simulation worked out from the measured
    costs; the gate runs it again on the committed costs instead of comparing its timing
    cells one by one (``measure/resimulation.py``)."""

    name: str
    title: str
    columns: tuple[Column, ...]
    length: str = "fixed"
    _: KW_ONLY
    description: str = ""
    simulated: bool = False

    def __post_init__(self) -> None:
        check_name("table", self.name)
        if self.length not in LENGTHS:
            raise SchemaError(f"table {self.name}: length {self.length!r} not in {LENGTHS}")
        names = [c.name for c in self.columns]
        if not names or len(set(names)) != len(names):
            raise SchemaError(f"table {self.name}: columns must be given, each once: {names}")
        timings = {c.name for c in self.columns if c.compare == "timing"}
        for c in self.columns:
            for other in c.noise_columns:
                if other and other not in timings:
                    raise SchemaError(f"table {self.name}: {c.name}'s noise {other!r} is no timing column of it")

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def as_meta(self) -> dict[str, Any]:
        """What meta.json records of the declaration (the run adds its file's facts)."""
        return {
            "description": self.description,
            "columns": [c.as_meta() for c in self.columns],
            **({"length": self.length} if self.length != "fixed" else {}),
            **({"simulated": True} if self.simulated else {}),
        }


@dataclass(frozen=True)
class Value:
    """A named scalar (or list) shown inline in the prose, e.g. ``kv_cache.speedup``;
    ``words`` as a column's."""

    name: str
    unit: str = ""
    _: KW_ONLY
    policy: Policy = EXACT
    description: str = ""
    words: bool = False

    def __post_init__(self) -> None:
        _checked("value", self.name, self.policy)

    @property
    def compare(self) -> str:
        return self.policy.compare

    @property
    def scope(self) -> str:
        return self.policy.scope

    def as_meta(self) -> dict[str, Any]:
        """What meta.json records of the declaration beside the value itself."""
        return {
            "unit": self.unit,
            "compare": self.compare,
            "scope": self.scope,
            "description": self.description,
            "words": self.words,
        }


@dataclass(frozen=True, kw_only=True)
class Result:
    """What ``run`` returns: rows per declared table, and the declared values."""

    tables: Mapping[str, Sequence[Mapping[str, Any]]]
    values: Mapping[str, Any] = field(default_factory=dict)
    notes: Mapping[str, Any] = field(default_factory=dict)


def check(result: Result, tables: Sequence[Table], values: Sequence[Value]) -> dict[str, list[dict[str, Any]]]:
    """Hold a result against its declarations; return the rows with their cells in
    declared column order. Raises SchemaError naming the first difference."""
    declared = {t.name: t for t in tables}
    if set(result.tables) != set(declared):
        missing, extra = sorted(set(declared) - set(result.tables)), sorted(set(result.tables) - set(declared))
        raise SchemaError(f"tables produced differ from declared: missing {missing}, undeclared {extra}")
    ordered = {}
    for name, spec in declared.items():
        rows = list(result.tables[name])
        if not rows:
            raise SchemaError(f"table {name}: no rows (an empty table is never published)")
        out = []
        for i, row in enumerate(rows):
            if set(row) != set(spec.column_names):
                raise SchemaError(
                    f"table {name} row {i}: columns {sorted(row)} != declared {sorted(spec.column_names)}"
                )
            for c in spec.columns:
                if _not_finite(row[c.name]):
                    raise SchemaError(f"table {name} row {i}: {c.name} is {row[c.name]}; {_NO_VALUE}")
                if c.words and not _text(row[c.name]):
                    raise SchemaError(f"table {name} row {i}: {c.name} is {row[c.name]!r}; {_WORDS}")
            out.append({c: row[c] for c in spec.column_names})
        ordered[name] = out
    names = {v.name for v in values}
    if set(result.values) != names:
        missing, extra = sorted(names - set(result.values)), sorted(set(result.values) - names)
        raise SchemaError(f"values produced differ from declared: missing {missing}, undeclared {extra}")
    for v in values:
        if v.words and not _text(result.values[v.name]):
            raise SchemaError(f"value {v.name} is {result.values[v.name]!r}; {_WORDS}")
    for what, mapping in (("value", result.values), ("note", result.notes)):
        for key, v in mapping.items():
            bad = _first_not_finite(v)
            if bad is not None:
                raise SchemaError(f"{what} {key} holds {bad}; {_NO_VALUE}")
    return ordered


_WORDS = "words for a reader are text (None says there is no value)"
_NO_VALUE = "a number that is not finite is never written (None, an empty cell, says there is no value)"


def _text(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _not_finite(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral) and not math.isfinite(v)


def _first_not_finite(v: Any) -> Any:
    """The first number that is not finite in ``v`` (lists and mappings walked), or None."""
    todo = [v]
    while todo:
        item = todo.pop()
        if _not_finite(item):
            return item
        if isinstance(item, Mapping):
            todo.extend(item.values())
        elif isinstance(item, list | tuple):
            todo.extend(item)
    return None


# A unit suffix stays last in a column's name (STYLE: ``step_ms``, ``rate_tok_s``); the
# bounds of its interval go before it: ``step_low_ms``, ``step_high_ms``.
_UNIT_SUFFIXES = ("_ms", "_us", "_s", "_gb_s", "_gflop_s", "_tok_s", "_bytes", "_flops_per_byte")


def interval_names(name: str) -> tuple[str, str, str]:
    """The names of the low bound, the high bound and the sample count of a timing
    column's interval: ``step_ms`` -> ``step_low_ms``, ``step_high_ms``, ``step_samples``."""
    for suffix in sorted(_UNIT_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(suffix):
            stem = name[: -len(suffix)]
            return f"{stem}_low{suffix}", f"{stem}_high{suffix}", f"{stem}_samples"
    return f"{name}_low", f"{name}_high", f"{name}_samples"


def interval_columns(
    name: str, unit: str, label: str = "", *, description: str = "", samples: bool = True
) -> tuple[Column, ...]:
    """A timing and its noise, declared at once: the median, the two bounds of its 95 %
    confidence interval and (``samples=False`` where another timing of the row already
    counts them) the number of samples it rests on."""
    low, high, count = interval_names(name)
    count = count if samples else ""
    median = Column(name, unit, label, policy=TIMING, description=description, interval=(low, high), samples=count)
    bounds = (
        Column(low, unit, "95 % interval, low", policy=TIMING),
        Column(high, unit, "95 % interval, high", policy=TIMING),
    )
    return (median, *bounds, *((Column(count, "samples", "timed samples", policy=TIMING),) if count else ()))


def derived_columns(name: str, unit: str, label: str = "", *, description: str = "") -> tuple[Column, ...]:
    """A quantity worked out from timed points (a ratio, a time per token): its value and the
    range its points' intervals give; the samples are counted by the timings it comes from."""
    return interval_columns(name, unit, label, description=description, samples=False)
