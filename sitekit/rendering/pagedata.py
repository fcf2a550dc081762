"""What pages read: site_data through the ``sitedata`` package, verified, as pandas
frames; every name a page gives is checked before it touches a path."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from sitedata import DataError, Experiment, experiment_names, hashes, read_experiment, wording
from sitedata.lock import waited
from sitedata.names import NAME
from sitedata.runs import Run, runs
from sitekit.language import typed_numbers
from sitekit.language.formatting import NOT_A_NUMBER

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_NON_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)
# noted by SiteData.reads where what was read may depend on every experiment: their list
EVERY = "*"


class SiteDataError(Exception):
    """A page asked for something site_data/ does not hold, or holds wrongly: fails the build."""


@dataclass(frozen=True)
class TableRef:
    experiment: str
    name: str
    meta: dict  # the experiment's meta.json
    frame: pd.DataFrame
    # the rows of each ``where`` already asked: five editions ask the same cells (never changed by a caller)
    selected: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def columns(self) -> list[dict]:
        return self.meta["tables"][self.name]["columns"]

    @property
    def title(self) -> str:
        return self.meta["tables"][self.name]["title"]

    def rows(self, where: dict[str, Any] | None = None) -> pd.DataFrame:
        """The rows whose every ``where`` column equals its value (all rows without one)."""
        try:
            key = tuple(sorted((where or {}).items()))
            return self.selected[key]
        except (KeyError, TypeError):  # not asked yet, or a value that cannot be a key
            pass
        frame = self.frame
        for k, v in (where or {}).items():
            self.column(k)
            frame = frame[frame[k] == v]
        try:
            self.selected[key] = frame
        except TypeError:
            pass
        return frame

    def column(self, name: str) -> dict:
        for c in self.columns:
            if c["name"] == name:
                return c
        raise SiteDataError(
            f"table {self.experiment}.{self.name} has no column {name!r}; "
            f"it has {', '.join(c['name'] for c in self.columns)}"
        )


class SiteData:
    def __init__(self, root: Path, log=None) -> None:
        self.root = Path(root)
        self.log = log or (lambda line: None)
        self._read: dict[str, Experiment] = {}
        self._frames: dict[tuple[str, str], pd.DataFrame] = {}
        self._selected: dict[tuple[str, str], dict] = {}
        self._reading: list[set[str]] = []  # the sets of the open ``reads`` blocks

    @contextmanager
    def reads(self) -> Iterator[set[str]]:
        """The experiments asked for while the block runs, found or not, and EVERY if it
        asked for their list: what it made from the data depends on these alone (a figure
        drawn again only when one of them changes, figures.render_figure)."""
        found: set[str] = set()
        self._reading.append(found)
        try:
            yield found
        finally:
            self._reading.remove(found)

    def _note(self, name: str) -> None:
        for found in self._reading:
            found.add(name)

    @property
    def experiments(self) -> list[str]:
        self._note(EVERY)
        return self._names

    @cached_property
    def _names(self) -> list[str]:
        return experiment_names(self.root)

    @cached_property
    def runs(self) -> list[tuple[Run, SiteData]]:
        """Every run in the folder (sitedata.runs), the primary first, each with its data:
        this one for the primary, a reader of its own for a run under runs/<key>/."""
        try:
            found = runs(self.root)
        except DataError as e:
            raise SiteDataError(str(e)) from None
        return [(run, self if run.primary else SiteData(run.root, self.log)) for run in found]

    @cached_property
    def data_hash(self) -> str:
        """The data's hash (sitedata/hashes.py), of the meta.json texts this build read."""
        return hashes.metas_hash({e: self.experiment(e).meta_text.encode("utf-8") for e in self.experiments})

    def hash_of(self, names: set[str]) -> str:
        """The hash of only these experiments (as ``reads`` noted them; EVERY: data_hash),
        one that is absent or cannot be read hashed as what its reading said."""
        if EVERY in names:
            return self.data_hash
        metas = {}
        for name in names:
            try:
                metas[name] = self.experiment(name).meta_text.encode("utf-8")
            except SiteDataError as e:
                metas[name] = f"unread: {e}".encode()
        return hashes.metas_hash(metas)

    def snapshot(self) -> None:
        """Every experiment read and verified now, once, under the folder's lock: what the
        build renders, hashes and publishes (``published``) is this one reading, whatever
        a run writes into the folder afterwards. SiteDataError naming the file otherwise."""
        with waited(self.root, log=self.log):
            for exp in self.experiments:
                self.experiment(exp)
            self.data_hash  # noqa: B018  (computed within the lock)
            others = [data for run, data in self.runs if not run.primary]
        for data in others:  # each run beside the primary under its own folder's lock
            data.snapshot()

    def published(self) -> dict[str, dict[str, str]]:
        """experiment -> file name -> text, as read and verified: the files the build copies
        into the site, from memory (a file replaced on disk since, by a link or by a run,
        is never read again)."""
        return {exp: self.experiment(exp).files() for exp in self.experiments}

    def experiment(self, name: str) -> Experiment:
        """One experiment, read and verified once (the reader refuses a name that is not one)."""
        self._note(name)
        if name not in self._read:
            try:
                self._read[name] = read_experiment(self.root, name)
            except DataError as e:
                raise SiteDataError(str(e)) from None
        return self._read[name]

    def meta(self, experiment: str) -> dict:
        return self.experiment(experiment).meta

    @staticmethod
    def split(ref: Any) -> tuple[str, str]:
        parts = ref.split(".") if isinstance(ref, str) else []
        if len(parts) != 2 or not all(NAME.fullmatch(p) for p in parts):
            raise SiteDataError(f"{ref!r} is not of the form 'experiment.name'")
        return parts[0], parts[1]

    def table(self, ref: str) -> TableRef:
        exp, name = self.split(ref)
        data = self.experiment(exp)
        if name not in data.meta["tables"]:
            raise SiteDataError(f"experiment {exp!r} has no table {name!r}; it has {', '.join(data.meta['tables'])}")
        key = (exp, name)
        if key not in self._frames:
            self._frames[key] = _frame(data.texts[name], data.meta["tables"][name]["columns"])
        return TableRef(exp, name, data.meta, self._frames[key], self._selected.setdefault(key, {}))

    def value(self, ref: str) -> dict:
        exp, name = self.split(ref)
        values = self.meta(exp)["values"]
        if name not in values:
            raise SiteDataError(f"experiment {exp!r} has no value {name!r}; it has {', '.join(values)}")
        v = values[name]
        if isinstance(v["value"], float) and math.isnan(v["value"]):  # NaN in meta.json: written, not missing
            return {**v, "value": NOT_A_NUMBER}
        return v

    def cell(self, ref: str, column: str, where: dict[str, Any] | None = None) -> tuple[Any, dict]:
        """One cell: the row matching every ``where`` pair (exactly one must match)."""
        t = self.table(ref)
        col = t.column(column)
        frame = t.rows(where)
        if len(frame) != 1:
            raise SiteDataError(f"{ref} where {where}: {len(frame)} rows match, exactly one needed")
        return frame.iloc[0][column], col

    def words(self) -> set[str]:
        """Every distinct text of every column and value that meta.json declares words for
        a reader: what the catalogs must know, whichever of them a page shows."""
        found = set()
        for exp in self.experiments:
            meta = self.meta(exp)
            for name, t in meta["tables"].items():
                frame = self.table(f"{exp}.{name}").frame
                found.update(v for c in t["columns"] if c["words"] for v in frame[c["name"]].tolist())
            found.update(v["value"] for v in meta["values"].values() if v["words"] and isinstance(v["value"], str))
        # a sentence written with a template is known to the catalogs as its template (recorded.recorded_text)
        return {_message(w) for w in found if isinstance(w, str) and w.strip()}

    def files(self) -> list[tuple[str, str]]:
        """(experiment, file name) of every verified file, for publishing."""
        out = []
        for exp in self.experiments:
            data = self.experiment(exp)
            out += [(exp, "meta.json")] + [(exp, f"{t}.csv") for t in data.texts]
        return out


def _message(text: str) -> str:
    """A data text as the catalogs know it: its template, or itself with its English-written
    numbers lifted out (i18n._ asks for it so)."""
    found = wording.parse(text)
    return typed_numbers.lift(text)[0] if found is None else found[0]


def _frame(text: str, columns: list[dict]) -> pd.DataFrame:
    """A table as pandas reads it, but for a column of numbers holding a "nan" or an "inf"
    (a timing that could not be taken), which pandas leaves as text, and every number in
    it with it: it is read as numbers, "nan" as NOT_A_NUMBER (shown "not a number"; an
    empty cell stays NaN, shown "–"), so that the other cells keep their formatting."""
    frame = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    measured = {c["name"] for c in columns if c["compare"] != "exact"}
    for name in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[name]):
            continue
        cells = frame[name].tolist()
        written = [c for c in cells if isinstance(c, str)]
        numbers = [c for c in written if _NUMBER.fullmatch(c)]
        if (numbers or name in measured) and all(_NUMBER.fullmatch(c) or _NON_FINITE.fullmatch(c) for c in written):
            frame[name] = pd.Series([_number(c) for c in cells], index=frame.index, dtype=object)
    return frame


def _number(cell: object) -> object:
    if not isinstance(cell, str):
        return cell  # an empty cell, NaN
    if cell.lower().lstrip("+-") == "nan":
        return NOT_A_NUMBER
    if re.fullmatch(r"[+-]?\d{1,4000}", cell):
        return int(cell)
    return float(cell)  # "1e400" and a longer integer as inf
