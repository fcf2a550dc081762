"""Read-only access to site_data/, with errors that name what is missing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd


class SiteDataError(Exception):
    """A page asked for something site_data/ does not hold: fails the build."""


@dataclass(frozen=True)
class TableRef:
    experiment: str
    name: str
    meta: dict  # the experiment's meta.json
    frame: pd.DataFrame

    @property
    def columns(self) -> list[dict]:
        return self.meta["tables"][self.name]["columns"]

    @property
    def title(self) -> str:
        return self.meta["tables"][self.name]["title"]

    def rows(self, where: dict[str, Any] | None = None) -> pd.DataFrame:
        """The rows whose every ``where`` column equals its value (all rows without one)."""
        frame = self.frame
        for k, v in (where or {}).items():
            self.column(k)
            frame = frame[frame[k] == v]
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
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._frames: dict[tuple[str, str], pd.DataFrame] = {}
        self.used_tables: set[str] = set()

    @cached_property
    def experiments(self) -> list[str]:
        return sorted(p.parent.name for p in self.root.glob("*/meta.json"))

    def meta(self, experiment: str) -> dict:
        path = self.root / experiment / "meta.json"
        if not path.is_file():
            raise SiteDataError(
                f"no data for experiment {experiment!r} ({path} missing); run `make measure ONLY={experiment}`"
            )
        return _read_json(path)

    @staticmethod
    def split(ref: str) -> tuple[str, str]:
        if ref.count(".") != 1:
            raise SiteDataError(f"{ref!r} is not of the form 'experiment.name'")
        exp, name = ref.split(".")
        return exp, name

    def table(self, ref: str) -> TableRef:
        exp, name = self.split(ref)
        meta = self.meta(exp)
        if name not in meta["tables"]:
            raise SiteDataError(f"experiment {exp!r} has no table {name!r}; it has {', '.join(meta['tables'])}")
        key = (exp, name)
        if key not in self._frames:
            path = self.root / exp / meta["tables"][name]["file"]
            if not path.is_file():
                raise SiteDataError(f"table file {path} is missing")
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
            declared = [c["name"] for c in meta["tables"][name]["columns"]]
            if list(frame.columns) != declared:
                raise SiteDataError(f"{path}: columns {list(frame.columns)} differ from meta.json {declared}")
            self._frames[key] = frame
        self.used_tables.add(ref)
        return TableRef(exp, name, meta, self._frames[key])

    def value(self, ref: str) -> dict:
        exp, name = self.split(ref)
        values = self.meta(exp)["values"]
        if name not in values:
            raise SiteDataError(f"experiment {exp!r} has no value {name!r}; it has {', '.join(values)}")
        return values[name]

    def cell(self, ref: str, column: str, where: dict[str, Any] | None = None) -> tuple[Any, dict]:
        """One cell: the row matching every ``where`` pair (exactly one must match)."""
        t = self.table(ref)
        col = t.column(column)
        frame = t.rows(where)
        if len(frame) != 1:
            raise SiteDataError(f"{ref} where {where}: {len(frame)} rows match, exactly one needed")
        return frame.iloc[0][column], col

    def all_tables(self) -> list[str]:
        return [f"{e}.{t}" for e in self.experiments for t in self.meta(e)["tables"]]


_JSON_CACHE: dict[Path, tuple[float, dict]] = {}


def _read_json(path: Path) -> dict:
    mtime = path.stat().st_mtime
    hit = _JSON_CACHE.get(path)
    if hit and hit[0] == mtime:
        return hit[1]
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    _JSON_CACHE[path] = (mtime, data)
    return data
