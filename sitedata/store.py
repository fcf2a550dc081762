"""Writing an experiment's folder: whole, or not at all, and only into a folder of its own.

The root must be a data folder of this project (``sitedata.folder``: new, empty or
marked). All files of a run are written into a hidden staging folder beside the
experiment's, ``.<experiment>.new-<8 hex>/data/``, each fsynced, and only then swapped
with the committed folder in one step (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere
two renames, the old folder first moved into the staging folder). A stop at any point
leaves either the previous folder or the new one, never a mix; ``recover`` (run before
every write and every run) removes what a killed write left and puts back a folder a
kill caught between the two renames. Hidden entries are ignored by readers and by git
(``site_data/.gitignore``).

CSV conventions: snake_case columns in declared order, rows in produced order, floats
as their shortest exact repr, no timestamps (dates live in meta.json), so a re-run
produces a clean diff. No number that is not finite is ever written (``schema.check``).
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import ctypes.util
import errno
import io
import json
import os
import shutil
import signal
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sitedata.folder import (
    DATA,
    OLD,
    FolderError,
    claim,
    fsync_dir,
    recover,  # noqa: F401  (sitedata.store.recover, as before)
    recover_staging,
    staging_text,
    target_problem,
    write_marker,
)
from sitedata.format import META, SCHEMA_VERSION, sha256
from sitedata.keys import run_key
from sitedata.lock import held
from sitedata.names import check_name
from sitedata.read import read_experiment
from sitedata.schema import Result, SchemaError, Table, Value, check

# Where a stop can fall, in order; tests stop a write at each one (SITEDATA_FAULT).
WRITE_POINTS = ("first_file", "all_files", "moved_aside", "swapped")
_FAULT_ENV = "SITEDATA_FAULT"  # "<point>[@<n>]:<action>", for tests only
_passed: dict[str, int] = {}


def fault(point: str) -> None:
    """For tests: a stop or an error where ``SITEDATA_FAULT`` names ``point`` (every time,
    or at its n-th passage in this process with ``@n``). ``interrupt`` raises
    KeyboardInterrupt, ``sigint`` sends this process a real SIGINT, ``kill`` a SIGKILL,
    ``oserror`` raises an I/O error."""
    where, _, action = os.environ.get(_FAULT_ENV, "").partition(":")
    name, _, nth = where.partition("@")
    if name != point:
        return
    _passed[point] = _passed.get(point, 0) + 1
    if nth and _passed[point] != int(nth):
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "sigint":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises KeyboardInterrupt here, as it would anywhere
    if action == "oserror":
        raise OSError(errno.EIO, f"Input/output error (injected at {point})")
    raise KeyboardInterrupt(f"fault injected at {point}")


def _cell(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)  # shortest exact round-trip, stable across runs
    return v


def csv_text(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for row in rows:
        w.writerow([_cell(row[c]) for c in columns])
    return buf.getvalue()


def render_files(
    experiment: str,
    result: Result,
    *,
    tables: Sequence[Table],
    values: Sequence[Value],
    provenance: Mapping[str, Any],
) -> dict[str, str]:
    """Every file of the experiment's folder as text, meta.json last."""
    rows = check(result, tables, values)
    fill = {**provenance.get("parameters", {}), **result.values}
    files: dict[str, str] = {}
    table_meta = {}
    for t in tables:
        text = csv_text(t.column_names, rows[t.name])
        files[f"{t.name}.csv"] = text
        table_meta[t.name] = {
            "title": t.title.format_map(fill),
            "file": f"{t.name}.csv",
            "rows": len(rows[t.name]),
            "sha256": sha256(text),
            **t.as_meta(),
        }
    meta = {
        "schema_version": SCHEMA_VERSION,
        "experiment": experiment,
        **provenance,
        "key": run_key(provenance),
        "tables": table_meta,
        "values": {v.name: {"value": result.values[v.name], **v.as_meta()} for v in values},
        "notes": dict(result.notes),
    }
    try:
        files[META] = json.dumps(meta, indent=2, default=str, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError as e:  # a number that is not finite in the provenance or the notes
        raise SchemaError(f"meta.json of {experiment}: {e}") from None
    return files


def _write_file(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically; False where the system cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def _swap_in(staging: Path, target: Path) -> None:
    """Put ``staging/data`` where ``target`` is; the previous folder stays in ``staging``."""
    new = staging / DATA
    if not os.path.lexists(target):
        fault("moved_aside")
        os.rename(new, target)
        fault("swapped")
        return
    if _exchange(new, target):  # ``new`` now holds the previous folder
        fault("swapped")
        return
    os.rename(target, staging / OLD)
    fault("moved_aside")
    os.rename(new, target)
    fault("swapped")


def write_experiment(
    root: Path,
    experiment: str,
    result: Result,
    *,
    tables: Sequence[Table],
    values: Sequence[Value],
    provenance: Mapping[str, Any],
) -> Path:
    """Replace ``root/experiment`` whole with this result; returns the folder."""
    check_name("experiment", experiment)
    files = render_files(experiment, result, tables=tables, values=values, provenance=provenance)
    return write_files(Path(root), experiment, files)


def install_experiment(source: Path, root: Path, experiment: str) -> Path:
    """Put a verified experiment folder written elsewhere (a GPU machine's output) into
    ``root`` as it is, provenance included, by the same whole-folder swap: the files
    installed are the ones verified, read once (``read_experiment(strict=True)``)."""
    check_name("experiment", experiment)
    source = Path(source)
    exp = read_experiment(source.parent, source.name, strict=True)
    if exp.name != experiment:
        raise FolderError(f"{source} holds experiment {exp.name}, not {experiment}")
    return write_files(Path(root), experiment, exp.files())


def write_files(root: Path, experiment: str, files: dict[str, str]) -> Path:
    """Replace ``root/experiment`` whole with ``files`` (name -> text, meta.json last).
    Refuses (FolderError) a root that is not a data folder, or an experiment folder that
    is a link, before touching anything."""
    check_name("experiment", experiment)
    root = Path(root)
    claim(root)
    problem = target_problem(root, experiment)
    if problem:
        raise FolderError(problem)
    with held(root):  # refused (FolderBusy) while another process writes into root
        return _swap_files(root, experiment, files)


def _swap_files(root: Path, experiment: str, files: dict[str, str]) -> Path:
    """``write_files`` with the folder's lock held: every staging folder is a stopped write's."""
    recover(root)
    target = root / experiment
    staging = root / f".{experiment}.new-{uuid.uuid4().hex[:8]}"
    made = False
    try:
        os.mkdir(staging)
        made = True
        write_marker(staging, staging_text(experiment))
        os.mkdir(staging / DATA)
        for i, (name, text) in enumerate(files.items()):
            check_name("file", name.removesuffix(".csv").removesuffix(".json"))
            _write_file(staging / DATA / name, text)
            if i == 0:
                fault("first_file")
        fsync_dir(staging / DATA)
        fsync_dir(staging)
        fault("all_files")
        _swap_in(staging, target)
        fsync_dir(root)
        shutil.rmtree(staging)
    except BaseException as e:
        # Ctrl-C included: the committed folder is untouched or already whole; drop the rest.
        if made:
            with contextlib.suppress(OSError):
                recover_staging(root, staging.name, experiment)
        written = is_written(target, files[META])
        if isinstance(e, KeyboardInterrupt):
            raise WriteStopped(written) from None
        raise
    return target


class WriteStopped(KeyboardInterrupt):
    """A stop during a write; ``written`` says whether the new folder is the one in place."""

    def __init__(self, written: bool) -> None:
        super().__init__("written" if written else "not written")
        self.written = written


def meta_bytes(folder: Path) -> bytes | None:
    """The meta.json of ``folder`` as it is on disk, never through a link (None if none),
    and never more than its first 16 MiB (a meta.json is kilobytes; a file that never
    ends, such as a device node, must not hold a write up)."""
    try:
        fd = os.open(Path(folder) / META, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with open(fd, "rb", closefd=False) as f:
            return f.read(16 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)


def is_written(target: Path, meta_text: str) -> bool:
    """Whether the folder in place at ``target`` is the one whose meta.json is ``meta_text``."""
    return meta_bytes(target) == meta_text.encode("utf-8")
