"""Reading an experiment's folder, verified against its own meta.json.

Every reader (the pages, the drift gate, a merge, the tests) comes through
``read_experiment``: the folder and every file in it are read without following a link
(a link, a subfolder or anything but a regular file is refused), within the bounds of
``sitedata.bounds``; an older format version is migrated in memory (``sitedata.migrate``),
meta.json's shape is checked, and every table file is held against its recorded columns,
row count and checksum, all three, even when the checksum matches. Anything wrong is one
``DataError`` line naming the file and the fix; it never quotes a file's content beyond
the names meta.json declares.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from sitedata.bounds import MAX_CSV_BYTES, MAX_META_BYTES, Refused, entries, open_folder, parse_json, read_text
from sitedata.format import META, SCHEMA_VERSION, sha256
from sitedata.keys import run_key
from sitedata.migrate import OLDEST, migrated, renamed_columns, renamed_header
from sitedata.names import NAME, BadName, check_name, plain, shown
from sitedata.schema import COMPARE, LENGTHS, SCOPES

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
    "key": str,
    "parameters": dict,
    "tables": dict,
    "values": dict,
}
_REQUIRED_IN = {"model": ("name", "spec", "parameters", "weights"), "device": ("id", "type")}
_COLUMN_KEYS = ("name", "unit", "label", "compare", "scope", "description")  # each a text
NOISE = ("spread", "interval", "samples")  # kinds of a timing's noise a column may name (sitedata.schema.Column)


class DataError(Exception):
    """site_data holds something that does not match its metadata: one line, with the fix."""


def _fix(experiment: str) -> str:
    return f"re-measure it: make measure ONLY={experiment}"


@dataclass(frozen=True)
class Experiment:
    """One verified experiment folder: its meta.json (in the current format, migrated
    from the one it was written in) and the text of each table."""

    name: str
    folder: Path
    meta: dict[str, Any]
    texts: dict[str, str]  # table name -> CSV text, verified, its header in the current format's names
    meta_text: str = field(default="", repr=False)  # meta.json as read, byte for byte
    written_version: int = SCHEMA_VERSION  # the format meta.json was written in
    # table name -> its text byte for byte, where a later format renamed its header's columns
    as_written: dict[str, str] = field(default_factory=dict, repr=False)

    def files(self) -> dict[str, str]:
        """Every file of the folder as written and verified (name -> text), meta.json last."""
        texts = {**self.texts, **self.as_written}
        return {**{f"{t}.csv": text for t, text in texts.items()}, META: self.meta_text}

    def columns(self, table: str) -> list[dict[str, str]]:
        return self.meta["tables"][table]["columns"]

    @cached_property
    def _rows(self) -> dict[str, list[dict[str, str]]]:
        return {t: list(csv.DictReader(io.StringIO(text))) for t, text in self.texts.items()}

    def rows(self, table: str) -> list[dict[str, str]]:
        """The table's rows as written (strings), in file order."""
        return self._rows[table]


def experiment_names(root: Path) -> list[str]:
    """Experiment folders under ``root`` (hidden and non-name entries are not experiments).
    A link named like one is listed, so that reading it refuses it aloud."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if NAME.fullmatch(p.name) and _has_meta(p))


def _has_meta(folder: Path) -> bool:
    try:
        return folder.is_dir() and (folder / META).is_file()
    except OSError:  # unreadable: listed, and reading it says why
        return True


def read_experiment(root: Path, experiment: str, *, strict: bool = False) -> Experiment:
    """``root/experiment`` read and verified. A link is refused wherever it is; hidden
    entries are otherwise passed over (a desktop's .DS_Store), unless ``strict`` (a
    merge), which refuses anything meta.json does not list."""
    try:
        check_name("experiment", experiment)
    except BadName as e:
        raise DataError(str(e)) from None
    where = f"{Path(root).name}/{experiment}"

    def bad(path: str, what: str) -> DataError:
        return DataError(f"{where}{path} {what}; {_fix(experiment)}")

    try:
        with open_folder(Path(root), experiment) as fd:
            found = entries(fd)
            for name, kind in sorted(found.items()):
                passed_over = name.startswith(".") and not strict and kind != "a symbolic link"
                if kind != "file" and not passed_over:
                    raise bad(f"/{plain(name)}", f"is {kind}; an experiment's folder holds regular files only")
            if META not in found:
                raise bad(f"/{META}", f"is missing: no data for experiment {experiment!r}")
            try:
                meta_text = read_text(fd, META, MAX_META_BYTES)
                meta = parse_json(meta_text)
            except Refused as e:
                raise bad(f"/{META}", str(e)) from None
            written = meta.get("schema_version") if isinstance(meta, dict) else None
            meta = migrated(meta, SCHEMA_VERSION)
            _check_meta(meta, f"{where}/{META}", experiment)
            texts, as_written = {}, {}
            for table, tmeta in meta["tables"].items():
                file = f"{table}.csv"
                if file not in found:
                    raise bad(f"/{file}", "is missing but listed in meta.json")
                try:
                    text = read_text(fd, file, MAX_CSV_BYTES)
                except Refused as e:
                    raise bad(f"/{file}", str(e)) from None
                renamed = renamed_columns(experiment, table, written)
                _check_table(text, tmeta, f"{where}/{file}", experiment, renamed)
                texts[table] = renamed_header(text, renamed) if renamed else text
                if renamed:
                    as_written[table] = text
    except FileNotFoundError:
        raise bad(f"/{META}", f"is missing: no data for experiment {experiment!r}") from None
    except Refused as e:
        raise bad("", str(e)) from None
    except OSError as e:
        raise bad("", f"could not be read ({e.strerror or e})") from None
    listed = {META, *(f"{t}.csv" for t in texts)}
    unlisted = sorted(plain(n) for n in found if n not in listed and (strict or not n.startswith(".")))
    if unlisted:
        raise bad("/", f"holds {', '.join(unlisted[:5])}, not listed in meta.json")
    return Experiment(experiment, Path(root) / experiment, meta, texts, meta_text, written, as_written)


def _check_meta(meta: Any, where: str, experiment: str) -> None:
    def bad(what: str) -> DataError:
        return DataError(f"{where}: {what}; {_fix(experiment)}")

    if not isinstance(meta, dict):
        raise bad("not a JSON object")
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:  # an older one than OLDEST, or a newer one
        raise bad(f"format version {shown(version)}, this code reads versions {OLDEST} to {SCHEMA_VERSION}")
    for key, typ in _REQUIRED.items():
        if not isinstance(meta.get(key), typ) or isinstance(meta.get(key), bool):
            raise bad(f"{key!r} is missing or not a {getattr(typ, '__name__', 'number')}")
    for key, inner in _REQUIRED_IN.items():
        for k in inner:
            if k not in meta[key]:
                raise bad(f"{key}.{k} is missing")
    if meta["key"] != run_key(meta):
        raise bad(f"names the run {shown(meta['key'])}, but its machine, model, dtype and profile make {run_key(meta)}")
    if meta["experiment"] != experiment:
        raise bad(f"describes experiment {shown(meta['experiment'])}, not {experiment!r}")
    for table, t in meta["tables"].items():
        try:
            check_name("table", table)
        except BadName as e:
            raise bad(str(e)) from None
        if not isinstance(t, dict) or t.get("file") != f"{table}.csv":
            raise bad(f"table {table}: its file must be {table}.csv")
        if not isinstance(t.get("rows"), int) or not all(isinstance(t.get(k), str) for k in ("sha256", "title")):
            raise bad(f"table {table}: rows, sha256 or title missing")
        if not isinstance(t.get("description"), str):
            raise bad(f"table {table}: its description is missing or not a text")
        if t.get("length", "fixed") not in LENGTHS:
            raise bad(f"table {table}: length must be one of {', '.join(LENGTHS)}")
        cols = t.get("columns")
        if not isinstance(cols, list) or not cols:
            raise bad(f"table {table}: no columns")
        names = [c.get("name") for c in cols if isinstance(c, dict)]
        for c in cols:
            if not isinstance(c, dict) or any(not isinstance(c.get(k), str) for k in _COLUMN_KEYS):
                raise bad(f"table {table}: a column lacks one of {', '.join(_COLUMN_KEYS)}")
            if not NAME.fullmatch(c["name"]) or c["compare"] not in COMPARE or c["scope"] not in SCOPES:
                raise bad(f"table {table}: column {shown(c['name'])} has a bad name, compare or scope")
            noise = c.get("noise")
            if not isinstance(c.get("words"), bool) or not isinstance(noise, dict):
                raise bad(f"table {table}: column {c['name']} lacks its words (true or false) or noise (an object)")
            named = [(k, n) for k, v in noise.items() for n in (v if k == "interval" and isinstance(v, list) else [v])]
            if any(k not in NOISE or n not in names or n == c["name"] for k, n in named) or (
                "interval" in noise and (not isinstance(noise["interval"], list) or len(noise["interval"]) != 2)
            ):
                raise bad(f"table {table}: column {c['name']}'s noise names no other column of it by a known kind")
    for name, v in meta["values"].items():
        if not NAME.fullmatch(name) or not isinstance(v, dict) or "value" not in v:
            raise bad(f"value {shown(name)} is malformed")
        if v.get("compare") not in COMPARE or v.get("scope") not in SCOPES or not isinstance(v.get("unit"), str):
            raise bad(f"value {shown(name)} has a bad unit, compare or scope")
        if not isinstance(v.get("words"), bool):
            raise bad(f"value {name} lacks its words (true or false)")


def _check_table(text: str, tmeta: dict, where: str, experiment: str, renamed: dict[str, str]) -> None:
    """Columns (as written: ``renamed`` gives the names a later format calls them by), row
    count and every row's width, then the checksum: a file whose checksum was edited to
    match still has to have the columns and rows meta.json declares."""

    def bad(what: str) -> DataError:
        return DataError(f"{where}: {what}; {_fix(experiment)}")

    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:  # a cell beyond the csv module's limit, a NUL: the reason, not the text
        raise bad(f"not a readable CSV ({str(e)[:120]})") from None
    as_written = {new: old for old, new in renamed.items()}
    declared = [as_written.get(c["name"], c["name"]) for c in tmeta["columns"]]
    if not rows:
        raise bad(f"empty, where meta.json declares the columns {', '.join(declared)}")
    header, names = rows[0], ", ".join(declared)
    if header != declared:
        if len(header) != len(declared):
            raise bad(f"its header has {len(header)} columns, meta.json declares {len(declared)}: {names}")
        i = next(i for i, (a, b) in enumerate(zip(header, declared, strict=True)) if a != b)
        raise bad(f"its column {i + 1} is not {declared[i]}, as meta.json declares: {names}")
    if len(rows) - 1 != tmeta["rows"]:
        raise bad(f"{len(rows) - 1} rows, meta.json says {tmeta['rows']}")
    short = [i for i, r in enumerate(rows[1:]) if len(r) != len(declared)]
    if short:
        raise bad(f"row {short[0]} has {len(rows[short[0] + 1])} fields, not {len(declared)}")
    if sha256(text) != tmeta["sha256"]:
        raise bad("content differs from the checksum in meta.json (edited or cut short)")
