"""Names that may become paths, and paths that must stay inside site_data.

An experiment, table, value or column name is a short snake_case word: it can never
hold a separator, a dot or ``..``. Every path built from data goes through ``inside``,
which refuses anything outside the root and any symbolic link below it. ``shown``
writes a name read from disk into a message: on one line, and short.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_PLAIN = re.compile(r"[\w.,+@%=~/-]{1,80}", re.ASCII)


class BadName(ValueError):
    """A name that is not a plain snake_case word, or a path that leaves its root."""


def check_name(what: str, name: object) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise BadName(f"{what} {shown(name)} is not a snake_case name (a-z, 0-9, _; at most 64 characters)")
    return name


def shown(name: object, limit: int = 80) -> str:
    """``name`` quoted for a one-line message: its repr, cut to ``limit`` characters."""
    text = repr(name)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def plain(name: str) -> str:
    """A file name as it is when it is an ordinary one, else quoted (``shown``)."""
    return name if _PLAIN.fullmatch(name) else shown(name)


def inside(root: Path, *parts: str) -> Path:
    """``root / parts``, refused unless it lies inside ``root`` with no symbolic link on
    the way (the root itself may be one)."""
    base = Path(root).resolve()
    path = base
    for part in parts:
        if part in ("", ".", "..") or "/" in part or "\0" in part:
            raise BadName(f"{shown('/'.join(parts))} leads outside {base}")
        path = path / part
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                raise BadName(f"{shown('/'.join(parts))} is a symbolic link; site_data holds no links")
        except FileNotFoundError:
            pass
    return path
