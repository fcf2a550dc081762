"""The code's declarations, held against the data that says it comes from that code.

The drift gate takes from the code, never from the meta.json it checks, which tables,
columns and values there are, how each is compared, where it reproduces, its unit and
label, and the parameters of the run's profile (the experiment module's ``TABLES``,
``VALUES`` and ``Config``): a meta.json is data, and data can be edited. The committed
data must state what the code declares; each difference is a failing finding in table
``meta`` that names it: ``invalid`` where the data states something else, ``missing``
where the code declares what the data lacks.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

from sitedata.findings import Finding
from sitedata.read import Experiment
from sitedata.schema import Table, Value

_COLUMN_KEYS = ("compare", "scope", "unit", "label", "description")
_VALUE_KEYS = ("compare", "scope", "unit", "description")
# What format 3 added. Data written in format 2 did not state it: the reader's migration
# infers it by version 2's rules, so it is held against the code only where the data
# was written in format 3 or later (the code's own declaration is what the gate uses).
_SINCE_3 = {"column": ("words", "noise"), "value": ("words",), "table": ("description",)}
ABSENT = "(absent)"


def as_stored(obj: Any) -> Any:
    """``obj`` as meta.json holds it: tuples as lists, other objects as their text."""
    return json.loads(json.dumps(obj, default=str))


@dataclass(frozen=True)
class Declared:
    """What the code declares for one experiment: its title, tables and values, the
    parameters its ``Config`` gives for the committed run's profile (as stored), and the
    dtype it measures in on the committed run's device type (None: not checked)."""

    title: str
    tables: tuple[Table, ...]
    values: tuple[Value, ...]
    parameters: dict[str, Any]
    dtype: str | None = None


def header(exp: Experiment, table: str) -> list[str]:
    """The columns a table's CSV file names in its first line."""
    return next(csv.reader(io.StringIO(exp.texts[table])), [])


class _Findings(list):
    def __init__(self, exp: Experiment) -> None:
        super().__init__()
        self.exp = exp.name
        root = exp.folder.parent.name if exp.folder is not None else "site_data"
        self.where = f"{root}/{exp.name}/meta.json"

    def add(self, verdict: str, subject: str, committed: Any, code: Any, reason: str) -> None:
        self.append(
            Finding(
                experiment=self.exp,
                table="meta",
                verdict=verdict,
                column=subject,
                committed=committed,
                new=code,
                reason=reason,
            )
        )

    def differ(self, what: str, name: str, subject: str, stated: dict, declared: dict) -> None:
        """An invalid finding for each key whose stated value is not the declared one."""
        for key, mine in declared.items():
            if stated.get(key) != mine:
                said = f"{self.where} declares {what} {name} {key} {stated.get(key)!r}"
                self.add("invalid", subject, stated.get(key), mine, f"{said}, the code declares {mine!r}")


def declaration_findings(exp: Experiment, code: Declared) -> list[Finding]:
    """Every way the committed data's own declarations differ from the code's."""
    meta, out = exp.meta, _Findings(exp)
    where = out.where
    if meta["title"] != code.title:
        out.add("invalid", "title", meta["title"], code.title, f"{where} names another title than the code's")
    params = meta["parameters"]
    keys = sorted(k for k in {*params, *code.parameters} if params.get(k, ABSENT) != code.parameters.get(k, ABSENT))
    if keys:
        out.add(
            "invalid",
            "parameters",
            {k: params.get(k, ABSENT) for k in keys},
            {k: code.parameters.get(k, ABSENT) for k in keys},
            f"{where} records {', '.join(keys)} other than the code's Config gives for profile "
            f"{meta['profile']!r}: not data of this code's sweep",
        )
    if code.dtype is not None and meta["dtype"] != code.dtype:
        said = f"{where} says it ran in {meta['dtype']} on {meta['device']['type']}"
        out.add("invalid", "dtype", meta["dtype"], code.dtype, f"{said}; the code measures in {code.dtype} there")
    for t in code.tables:
        if t.name in meta["tables"]:
            _table(exp, t, out)
        else:
            out.add("missing", t.name, ABSENT, "declared", f"{where} has no table {t.name}, which the code declares")
    for name in sorted(set(meta["tables"]) - {t.name for t in code.tables}):
        out.add("invalid", name, "present", ABSENT, f"{where} holds table {name}, which the code does not declare")
    for v in code.values:
        stated = meta["values"].get(v.name)
        if stated is None:
            out.add(
                "missing",
                f"values.{v.name}",
                ABSENT,
                "declared",
                f"{where} has no value {v.name}, which the code declares",
            )
        else:
            keys = _VALUE_KEYS + _since_3(exp, "value")
            out.differ("value", v.name, f"values.{v.name}", stated, {k: v.as_meta()[k] for k in keys})
    for name in sorted(set(meta["values"]) - {v.name for v in code.values}):
        out.add(
            "invalid",
            f"values.{name}",
            "present",
            ABSENT,
            f"{where} holds value {name}, which the code does not declare",
        )
    return list(out)


def _table(exp: Experiment, t: Table, out: _Findings) -> None:
    tm, where = exp.meta["tables"][t.name], out.where
    listed = {c["name"]: c for c in tm["columns"]}
    if list(listed) != t.column_names:
        verdict = "missing" if set(t.column_names) - set(listed) else "invalid"
        said = f"{where} lists the columns {list(listed)} for table {t.name}"
        out.add(verdict, t.name, list(listed), t.column_names, f"{said}, the code declares {t.column_names}")
    for c in t.columns:
        if c.name in listed:
            subject = f"{t.name}.{c.name}"
            keys = _COLUMN_KEYS + _since_3(exp, "column")
            out.differ("column", subject, subject, listed[c.name], {k: c.as_meta()[k] for k in keys})
    out.differ("table", t.name, t.name, tm, {k: t.as_meta()[k] for k in _since_3(exp, "table")})
    length = tm.get("length", "fixed")
    if length != t.length:
        said = f"{where} declares table {t.name} length {length!r}"
        out.add("invalid", t.name, length, t.length, f"{said}, the code declares {t.length!r}")
    if tm.get("simulated", False) != t.simulated:
        said = f"{where} declares table {t.name} {'' if tm.get('simulated') else 'not '}simulated"
        out.add("invalid", t.name, tm.get("simulated", False), t.simulated, f"{said}, the code otherwise")
    title = _title(t, exp.meta)
    if title is not None and tm["title"] != title:
        out.add("invalid", t.name, tm["title"], title, f"{where} titles table {t.name} otherwise than the code")
    file = f"{exp.name}/{t.name}.csv"
    cols, *rows = list(csv.reader(io.StringIO(exp.texts[t.name]))) or [[]]
    if cols != t.column_names:
        verdict = "missing" if set(t.column_names) - set(cols) else "invalid"
        out.add(
            verdict, t.name, cols, t.column_names, f"{file} has the columns {cols}, the code declares {t.column_names}"
        )
    if not rows:
        out.add("missing", t.name, "0 rows", "rows", f"{file} has no rows (an empty table is never published)")
    for i, row in enumerate(rows):
        if len(row) != len(cols):
            out.add(
                "missing",
                t.name,
                f"{len(row)} fields",
                f"{len(cols)} fields",
                f"{file} row {i} has {len(row)} fields, not {len(cols)}",
            )


def _since_3(exp: Experiment, what: str) -> tuple[str, ...]:
    return _SINCE_3[what] if exp.written_version >= 3 else ()


def _title(t: Table, meta: dict) -> str | None:
    """The table's title as the code writes it from the run's parameters and values."""
    fill = {**meta["parameters"], **{k: v["value"] for k, v in meta["values"].items() if isinstance(v, dict)}}
    try:
        return t.title.format_map(fill)
    except (KeyError, IndexError, ValueError, AttributeError):
        return None


def run_gap(committed: Experiment, new: Experiment, code: Declared) -> list[Finding]:
    """The regenerated run must rerun the committed one: its profile and model, with the
    parameters the code's Config gives for that profile. Otherwise it is no regeneration
    of it, and a failing finding for each difference stands in for its cells."""
    old, now = committed.meta, new.meta
    pairs = (
        ("profile", old["profile"], now["profile"], "measured another profile than the committed run"),
        ("model", old["model"]["spec"], now["model"]["spec"], "measured another model than the committed run"),
        (
            "parameters",
            code.parameters,
            now["parameters"],
            f"ran other parameters than the code's Config gives for profile {old['profile']!r}",
        ),
    )
    return [
        Finding(
            experiment=committed.name,
            table="meta",
            verdict="drift",
            column=key,
            committed=a,
            new=b,
            reason=f"the regenerated run {what}: it is no rerun of the committed data, whose cells go uncompared",
        )
        for key, a, b, what in pairs
        if a != b
    ]


def model_findings(committed: Experiment, new: Experiment) -> list[Finding]:
    """A rerun loads the model the committed run names by its spec: its name, weights and
    parameter count are what loading it says, not the committed meta.json's to state."""
    a, b = committed.meta["model"], new.meta["model"]
    keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
    if not keys:
        return []
    return [
        Finding(
            experiment=committed.name,
            table="meta",
            verdict="drift",
            column="model",
            committed={k: a.get(k) for k in keys},
            new={k: b.get(k) for k in keys},
            reason=f"the committed run describes its model ({', '.join(keys)}) otherwise than a rerun of it does",
        )
    ]
