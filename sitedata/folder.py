"""Which folders and entries the data layer may touch: only what it can prove it made.

A data folder holds a marker file, ``.sitedata``, whose first line names it. The writer
marks a new or empty folder on its first write and refuses any other folder (a home
folder, a repository, a folder of someone's files), each with one line. A folder
written before the marker existed is known by its content alone: nothing but
experiment folders, each with its meta.json (and a ``.gitignore``); it is marked on its
next write.

A write stages its files in a hidden sibling ``.<experiment>.new-<8 hex>/``, whose first
entry is the same marker file naming it a staging folder; the experiment's files go in
its ``data/`` and, where the system cannot swap two folders in one step, the previous
folder is moved into its ``old/`` for the moment between two renames. ``recover`` acts
only inside a marked data folder, only on entries with exactly that name that hold that
marker (or are empty: a kill between the folder and its marker), and never follows a
link. Nothing else, hidden or not, is ever deleted or renamed. It holds the folder's
lock (``sitedata.lock``) while it does, so a write in progress in another process is
refused, never removed: under the lock every staging folder is a stopped write's.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from pathlib import Path

from sitedata.lock import held
from sitedata.names import NAME, plain

MARKER = ".sitedata"
DATA_LINE = "sitedata data folder"
STAGING_LINE = "sitedata staging folder"
DATA_TEXT = (
    f"{DATA_LINE}\n"
    "Measurements written by this project's data layer (sitedata/): one folder per experiment,\n"
    "each replaced whole. A hidden .<experiment>.new-<8 hex>/ folder holding a marker like this\n"
    "one is a write in progress, or one a stop left, removed by the next write. Keep this file.\n"
)
STAGING = re.compile(r"\.(?P<experiment>[a-z][a-z0-9_]{0,63})\.new-[0-9a-f]{8}")
DATA = "data"  # inside a staging folder: the experiment's new files
OLD = "old"  # inside a staging folder: the previous folder, between two renames
_LEGACY_EXTRA = {".gitignore"}  # the committed site_data held it before it held a marker


class FolderError(Exception):
    """A folder the data layer will not write into (not its own): one line, with the fix."""


def staging_text(experiment: str) -> str:
    return f"{STAGING_LINE}\nA write of {experiment} in progress, or one a stop left; the next write removes it.\n"


def read_marker(folder: Path) -> str:
    """The first line of ``folder``'s marker file ("" if it has none): a regular file,
    never a link, never more than a few hundred bytes."""
    try:
        fd = os.open(Path(folder) / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        head = os.read(fd, 512)
    finally:
        os.close(fd)
    return head.decode("utf-8", "replace").split("\n", 1)[0]


def is_data_folder(root: Path) -> bool:
    return read_marker(root) == DATA_LINE


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is(path: Path, kind) -> bool:
    st = _lstat(path)
    return st is not None and kind(st.st_mode)


def _is_legacy_entry(root: Path, name: str) -> bool:
    """An experiment folder with its meta.json (neither a link), or a ``.gitignore``."""
    if name in _LEGACY_EXTRA:
        return _is(root / name, stat.S_ISREG)
    return (
        bool(NAME.fullmatch(name)) and _is(root / name, stat.S_ISDIR) and _is(root / name / "meta.json", stat.S_ISREG)
    )


def folder_problem(root: Path) -> str:
    """Why ``root`` may not be written as a data folder ("" if it may): it must be new,
    empty, marked, or hold nothing but experiment folders. Touches nothing."""
    root = Path(root)
    try:
        st = os.stat(root)  # the root itself may be a link to a folder: the user named it
    except FileNotFoundError:
        return f"{root} is a link to nothing" if _lstat(root) else ""
    except OSError as e:
        return f"{root}: {e.strerror or e}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{root} is a file, not a folder"
    if is_data_folder(root):
        return ""
    try:
        entries = sorted(os.listdir(root))
    except OSError as e:
        return f"{root}: {e.strerror or e}"
    if not entries or (set(entries) - _LEGACY_EXTRA and all(_is_legacy_entry(root, e) for e in entries)):
        return ""
    names = ", ".join(plain(e) for e in entries[:3]) + (", ..." if len(entries) > 3 else "")
    return (
        f"{root} is not a data folder of this project: it holds {names} and no {MARKER} marker; "
        "give a new or an empty folder"
    )


def target_problem(root: Path, experiment: str) -> str:
    """Why ``root/experiment`` may not be replaced ("" if it may): never through a link."""
    st = _lstat(Path(root) / experiment)
    if st is None or stat.S_ISDIR(st.st_mode):
        return ""
    what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
    return f"{Path(root) / experiment} is {what}; an experiment's folder is replaced whole, never through a link"


def claim(root: Path) -> None:
    """Make ``root`` a marked data folder, or refuse it (FolderError) before touching it."""
    root = Path(root)
    problem = folder_problem(root)
    if problem:
        raise FolderError(problem)
    root.mkdir(parents=True, exist_ok=True)
    if is_data_folder(root):
        return
    try:
        write_marker(root, DATA_TEXT)
    except FileExistsError:  # another process marked the new folder a moment ago
        if is_data_folder(root):
            return
        raise
    fsync_dir(root)


def write_marker(folder: Path, text: str) -> None:
    fd = os.open(Path(folder) / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover(root: Path) -> list[str]:
    """Remove what a stopped write left in the data folder ``root`` and put back a folder
    a stop caught between two renames; returns what it did, one line each. Outside a
    marked data folder it does nothing; while another process holds the folder's lock
    it removes nothing (``sitedata.lock.FolderBusy``)."""
    root = Path(root)
    if not is_data_folder(root):
        return []
    done = []
    with held(root):
        for name in sorted(os.listdir(root)):
            m = STAGING.fullmatch(name)
            if m:
                done += recover_staging(root, name, m["experiment"])
    return done


def recover_staging(root: Path, name: str, experiment: str) -> list[str]:
    """One staging folder, if it is provably a write's own."""
    path = Path(root) / name
    st = _lstat(path)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return []
    if read_marker(path) != STAGING_LINE:
        try:  # a kill between the folder and its marker leaves it empty; anything else is not ours
            os.rmdir(path)
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return []
            raise
        return [f"removed {name}, left by an interrupted write"]
    done = []
    target = Path(root) / experiment
    if _lstat(target) is None and _is(path / OLD, stat.S_ISDIR):
        os.rename(path / OLD, target)
        fsync_dir(Path(root))
        done.append(f"restored {experiment} from an interrupted write")
    shutil.rmtree(path)
    done.append(f"removed {name}, left by an interrupted write")
    return done
