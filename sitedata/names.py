"""Names that may become paths, and paths that must stay inside site_data.

An experiment, table, value or column name is a short snake_case word: it can never
hold a separator, a dot or ``..``. Every path built from data goes through ``inside``,
which resolves it and refuses anything outside the root (a symlink included).
"""

from __future__ import annotations

import re
from pathlib import Path

NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


class BadName(ValueError):
    """A name that is not a plain snake_case word, or a path that leaves its root."""


def check_name(what: str, name: object) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise BadName(f"{what} {name!r} is not a snake_case name (a-z, 0-9, _; at most 64 characters)")
    return name


def inside(root: Path, *parts: str) -> Path:
    """``root / parts`` resolved, refused unless it lies inside ``root``."""
    base = Path(root).resolve()
    path = base.joinpath(*parts).resolve()
    if path != base and base not in path.parents:
        raise BadName(f"{'/'.join(parts)!r} leads outside {base}")
    return path
