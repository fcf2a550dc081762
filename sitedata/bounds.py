"""Reading the files of an experiment folder within bounds, never through a link.

A folder is opened relative to its root without following a link, and each file
relative to that folder the same way; what is not a regular file is refused before a
byte of it is read, so no message can quote a file it refused. Every size, nesting
depth and text length a page or the gate reads is bounded, each bound checked before or
while parsing (a 100,000-deep meta.json is refused, not a RecursionError). A key given
twice in one object of meta.json is refused (JSON readers disagree on which one counts),
and so is a control character in a table's text or in any text of meta.json (a NUL, an
escape sequence: nothing this project writes; tab and line ends are allowed).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sitedata.names import shown

MAX_META_BYTES = 4 << 20  # the largest meta.json written so far is under 40 kB
MAX_CSV_BYTES = 16 << 20  # the largest table so far is under 50 kB
MAX_DEPTH = 32  # meta.json nests 5 deep
MAX_TEXT = 4096  # characters in any one text of meta.json (a model's name, a note)
MAX_INT = 2**63  # a count or a byte size beyond it is not a measurement
# C0 controls but tab, line feed and carriage return (a CSV cell may hold a line end),
# DEL, and the C1 controls
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """A file or folder not read, or read and out of bounds: the reason, without its content."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


@contextmanager
def open_folder(root: Path, name: str) -> Iterator[int]:
    """A descriptor of ``root/name``, a folder that is not a link (FileNotFoundError if
    there is none)."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        st = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"is {_kind(st.st_mode)}, not a folder of its own")
        try:
            fd = os.open(name, _OPEN | os.O_DIRECTORY, dir_fd=root_fd)
        except OSError as e:  # replaced by a link since: the same refusal
            raise Refused(f"could not be opened as a folder ({e.strerror})") from None
    finally:
        os.close(root_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def entries(fd: int) -> dict[str, str]:
    """Each entry of the folder ``fd``: "file" for a regular file, else what it is."""
    out = {}
    with os.scandir(fd) as it:
        for e in it:
            mode = e.stat(follow_symlinks=False).st_mode
            out[e.name] = "file" if stat.S_ISREG(mode) else _kind(mode)
    return out


def read_text(fd: int, name: str, limit: int) -> str:
    """The UTF-8 text of the regular file ``name`` in the folder ``fd``, at most ``limit`` bytes."""
    try:
        f = os.open(name, _OPEN, dir_fd=fd)
    except OSError as e:
        raise Refused(f"could not be read ({e.strerror})") from None
    try:
        st = os.fstat(f)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"is {_kind(st.st_mode)}")
        if st.st_size > limit:
            raise Refused(f"is {st.st_size} bytes, more than the {limit} a file of site_data may hold")
        with open(f, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    finally:
        os.close(f)
    if len(data) > limit:
        raise Refused(f"is more than the {limit} bytes a file of site_data may hold")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("is not UTF-8 text") from None
    control = control_character(text)
    if control:  # a NUL, an escape sequence: the csv module would read them as text
        raise Refused(f"holds the control character {control}")
    return text


def control_character(text: str) -> str:
    """The first control character of ``text`` that no file of site_data may hold, as
    U+XXXX at its line ("" if none): named, never quoted."""
    m = _CONTROL.search(text)
    if m is None:
        return ""
    return f"U+{ord(m.group()):04X} on line {text.count(chr(10), 0, m.start()) + 1}"


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise Refused(f"holds the key {shown(twice, 60)} twice in one object")
    return out


def _no_constant(name: str) -> Any:
    raise Refused(f"holds {name}, which is not a number JSON allows")


def parse_json(text: str) -> Any:
    """``text`` parsed, refused (one line, no content) beyond the depth, text and number bounds."""
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise Refused(f"nests deeper than the {MAX_DEPTH} levels meta.json may") from None
    except ValueError as e:  # JSONDecodeError (its message names a position, not content), digits
        raise Refused(f"is not valid JSON ({str(e).splitlines()[0][:120]})") from None
    _check_bounds(data)
    return data


def _check_bounds(data: Any) -> None:
    todo: list[tuple[Any, int, str]] = [(data, 1, "")]
    while todo:
        item, depth, path = todo.pop()
        if depth > MAX_DEPTH:
            raise Refused(f"nests deeper than the {MAX_DEPTH} levels meta.json may")
        if isinstance(item, dict):
            for k, v in item.items():
                if len(k) > MAX_TEXT:
                    raise Refused(f"has a key of {len(k)} characters, more than the {MAX_TEXT} a text may have")
                if _CONTROL.search(k):
                    raise Refused(f"has a key holding the control character {control_character(k).split()[0]}")
                todo.append((v, depth + 1, f"{path}.{k}" if path else k))
        elif isinstance(item, list):
            todo.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(item))
        elif isinstance(item, str) and len(item) > MAX_TEXT:
            raise Refused(f"has {_where(path)} of {len(item)} characters, more than the {MAX_TEXT} a text may have")
        elif isinstance(item, str) and _CONTROL.search(item):
            raise Refused(f"has {_where(path)} holding the control character {control_character(item).split()[0]}")
        elif isinstance(item, float) and not math.isfinite(item):
            raise Refused(f"has {_where(path)} that is not a finite number")
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) >= MAX_INT:
            raise Refused(f"has {_where(path)}, a number beyond {MAX_INT}")


def _where(path: str) -> str:
    return shown(path, 60) if path else "a value"
