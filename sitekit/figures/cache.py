"""Drawn figures kept between builds, by edition and by what each was drawn from: five
editions draw over a hundred figures, and an unchanged one is read, not drawn again.

What a figure was drawn from is what it read while it drew (recorded, not declared): the
experiments it asked SiteData for and the catalog entries it asked i18n for, kept beside
it in a small record under its code's key. The same code reads the same again while
those hold the same, so its next build looks up the figure by the record's experiments'
data and entries' translations as they are now. A new experiment, a change to another
one, or a message added to the catalog draws none of it again; a figure that asked for
the list of experiments (pagedata.EVERY) depends on all of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

from sitekit.figures import layout
from sitekit.language import formatting, i18n
from sitekit.rendering import escape

# SITEKIT_FIGURE_CACHE moves it (the tests' builds of copies of the project share the repository's)
CACHE = Path(os.environ.get("SITEKIT_FIGURE_CACHE") or Path(__file__).resolve().parents[2] / ".cache" / "figures")


def kept(draw: Callable, name: str, data, language: str, narrow: bool) -> Path | None:
    """Where the figure drawn from this data would be kept; None if its code never drew."""
    try:
        reads = json.loads(_reads_file(draw, name, language, narrow).read_text(encoding="utf-8"))
        key = _key(draw, data, language, reads)
    except (OSError, ValueError, TypeError, KeyError):  # never drawn, or a record cut short: draw it
        return None
    return _stem(name, language, narrow).with_name(f"{_stem(name, language, narrow).name}.{key}.svg")


def keep(draw: Callable, name: str, data, language: str, narrow: bool, svg: str, read: dict[str, set]) -> None:
    """Keep ``svg`` and the record of what it ``read`` (its experiments and messages)."""
    reads = {"experiments": sorted(read["experiments"]), "messages": sorted(read["messages"], key=repr)}
    stem = _stem(name, language, narrow)
    _write(stem.with_name(f"{stem.name}.{_key(draw, data, language, reads)}.svg"), svg)
    _write(_reads_file(draw, name, language, narrow), json.dumps(reads))  # after the figure it names


def code_key(draw: Callable) -> str:
    """The code that draws and formats a figure, and matplotlib's version."""
    h = hashlib.sha256(matplotlib.__version__.encode())
    drawing = Path(sys.modules[draw.__module__].__file__)
    for path in (drawing, Path(__file__).with_name("__init__.py"), Path(__file__), Path(layout.__file__)):
        h.update(path.read_bytes())
    for module in (formatting, escape, i18n):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()[:16]


def _key(draw: Callable, data, language: str, reads: dict) -> str:
    """The figure's code, the experiments it read, each by its meta.json (which holds its
    tables' checksums), and the catalog entries it asked for, each by its translation."""
    h = hashlib.sha256(code_key(draw).encode())
    h.update(json.dumps(reads).encode())
    h.update(data.hash_of(set(reads["experiments"])).encode())
    entries = {} if language == i18n.DEFAULT else i18n.translations(language)
    h.update(json.dumps([entries.get(tuple(m)) for m in reads["messages"]]).encode())
    return h.hexdigest()[:16]


def _stem(name: str, language: str, narrow: bool) -> Path:
    return CACHE / language / f"{name}{'.narrow' if narrow else ''}"


def _reads_file(draw: Callable, name: str, language: str, narrow: bool) -> Path:
    stem = _stem(name, language, narrow)
    return stem.with_name(f"{stem.name}.{code_key(draw)}.reads.json")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # whole or absent, even if two builds race
