"""Reading an experiment's folder, verified against its own meta.json.

Every reader (the pages, the drift gate, the tests) comes through ``read_experiment``:
the format version is checked, meta.json's shape is checked, and every table file is
held against its recorded checksum, row count and columns. Anything wrong is one
``DataError`` line naming the file and the fix.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from sitedata.names import NAME, BadName, check_name, inside
from sitedata.schema import COMPARE, LENGTHS, SCOPES
from sitedata.store import META, SCHEMA_VERSION, sha256

# meta.json keys a page or the gate reads, with the type each must have.
_REQUIRED = {
    "schema_version": int,
    "experiment": str,
    "title": str,
    "code_hash": str,
    "git_commit": str,
    "date": str,
    "duration_s": (int, float),
    "model": dict,
    "device": dict,
    "dtype": str,
    "libraries": dict,
    "profile": str,
    "parameters": dict,
    "tables": dict,
    "values": dict,
}
_REQUIRED_IN = {"model": ("name", "spec", "parameters", "weights"), "device": ("id", "type")}
_COLUMN_KEYS = ("name", "unit", "label", "compare", "scope", "description")


class DataError(Exception):
    """site_data holds something that does not match its metadata: one line, with the fix."""


def _fix(experiment: str) -> str:
    return f"re-measure it: make measure ONLY={experiment}"


@dataclass(frozen=True)
class Experiment:
    """One verified experiment folder: its meta.json and the text of each table."""

    name: str
    folder: Path
    meta: dict[str, Any]
    texts: dict[str, str]  # table name -> CSV text, verified

    def columns(self, table: str) -> list[dict[str, str]]:
        return self.meta["tables"][table]["columns"]

    @cached_property
    def _rows(self) -> dict[str, list[dict[str, str]]]:
        return {t: list(csv.DictReader(io.StringIO(text))) for t, text in self.texts.items()}

    def rows(self, table: str) -> list[dict[str, str]]:
        """The table's rows as written (strings), in file order."""
        return self._rows[table]


def experiment_names(root: Path) -> list[str]:
    """Experiment folders under ``root`` (hidden and non-name entries are not experiments)."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and NAME.fullmatch(p.name) and (p / META).is_file())


def read_experiment(root: Path, experiment: str) -> Experiment:
    try:
        check_name("experiment", experiment)
        folder = inside(root, experiment)
    except BadName as e:
        raise DataError(str(e)) from None
    meta_path = folder / META
    where = f"{Path(root).name}/{experiment}/{META}"
    if not meta_path.is_file():
        raise DataError(f"{where} is missing: no data for experiment {experiment!r}; {_fix(experiment)}")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{where} is not valid JSON ({e}); {_fix(experiment)}") from None
    _check_meta(meta, where, experiment)
    texts = {}
    listed = {META}
    for table, tmeta in meta["tables"].items():
        file = f"{table}.csv"
        listed.add(file)
        path = folder / file
        fwhere = f"{Path(root).name}/{experiment}/{file}"
        if not path.is_file():
            raise DataError(f"{fwhere} is missing but listed in meta.json; {_fix(experiment)}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{fwhere} is not UTF-8 text; {_fix(experiment)}") from None
        _check_table(text, tmeta, fwhere, experiment)
        texts[table] = text
    # Hidden files are a stopped write's leftovers (cleaned by the next run, never read).
    unlisted = sorted(p.name for p in folder.iterdir() if p.name not in listed and not p.name.startswith("."))
    if unlisted:
        files = ", ".join(unlisted)
        raise DataError(f"{Path(root).name}/{experiment}/ holds {files}, not listed in meta.json; {_fix(experiment)}")
    return Experiment(experiment, folder, meta, texts)


def _check_meta(meta: Any, where: str, experiment: str) -> None:
    def bad(what: str) -> DataError:
        return DataError(f"{where}: {what}; {_fix(experiment)}")

    if not isinstance(meta, dict):
        raise bad("not a JSON object")
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:
        raise bad(f"format version {version!r}, this code reads version {SCHEMA_VERSION}")
    for key, typ in _REQUIRED.items():
        if not isinstance(meta.get(key), typ) or isinstance(meta.get(key), bool):
            raise bad(f"{key!r} is missing or not a {getattr(typ, '__name__', 'number')}")
    for key, inner in _REQUIRED_IN.items():
        for k in inner:
            if k not in meta[key]:
                raise bad(f"{key}.{k} is missing")
    if meta["experiment"] != experiment:
        raise bad(f"describes experiment {meta['experiment']!r}, not {experiment!r}")
    for table, t in meta["tables"].items():
        try:
            check_name("table", table)
        except BadName as e:
            raise bad(str(e)) from None
        if not isinstance(t, dict) or t.get("file") != f"{table}.csv":
            raise bad(f"table {table}: its file must be {table}.csv")
        if (
            not isinstance(t.get("rows"), int)
            or not isinstance(t.get("sha256"), str)
            or not isinstance(t.get("title"), str)
        ):
            raise bad(f"table {table}: rows, sha256 or title missing")
        if t.get("length", "fixed") not in LENGTHS:
            raise bad(f"table {table}: length must be one of {', '.join(LENGTHS)}")
        cols = t.get("columns")
        if not isinstance(cols, list) or not cols:
            raise bad(f"table {table}: no columns")
        for c in cols:
            if not isinstance(c, dict) or any(not isinstance(c.get(k), str) for k in _COLUMN_KEYS):
                raise bad(f"table {table}: a column lacks one of {', '.join(_COLUMN_KEYS)}")
            if not NAME.fullmatch(c["name"]) or c["compare"] not in COMPARE or c["scope"] not in SCOPES:
                raise bad(f"table {table}: column {c['name']!r} has a bad name, compare or scope")
    for name, v in meta["values"].items():
        if not NAME.fullmatch(name) or not isinstance(v, dict) or "value" not in v:
            raise bad(f"value {name!r} is malformed")
        if v.get("compare") not in COMPARE or v.get("scope") not in SCOPES or not isinstance(v.get("unit"), str):
            raise bad(f"value {name!r} has a bad unit, compare or scope")


def _check_table(text: str, tmeta: dict, where: str, experiment: str) -> None:
    def bad(what: str) -> DataError:
        return DataError(f"{where}: {what}; {_fix(experiment)}")

    if sha256(text) != tmeta["sha256"]:
        # Say what differs where it can be seen, then fall back to the checksum.
        rows = list(csv.reader(io.StringIO(text)))
        declared = [c["name"] for c in tmeta["columns"]]
        if not rows or rows[0] != declared:
            raise bad(f"columns {rows[0] if rows else []} differ from meta.json's {declared}")
        if len(rows) - 1 != tmeta["rows"]:
            raise bad(f"{len(rows) - 1} rows, meta.json says {tmeta['rows']}")
        short = [i for i, r in enumerate(rows[1:]) if len(r) != len(declared)]
        if short:
            raise bad(f"row {short[0]} has {len(rows[short[0] + 1])} fields, not {len(declared)}")
        raise bad("content differs from the checksum in meta.json (edited or cut short)")
