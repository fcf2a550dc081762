"""Writing an experiment's folder: whole, or not at all.

All files of a run are written into a hidden sibling folder ``.<experiment>.new-*``,
each fsynced, and only then swapped with the committed folder in one step (Linux
``renameat2(RENAME_EXCHANGE)``; elsewhere two renames, the old folder first moved to
``.<experiment>.old-*``). A stop at any point leaves either the previous folder or the
new one, never a mix; ``recover`` (run before every write and every run) removes what a
killed run left and puts back a folder a kill caught between the two renames. Hidden
entries are ignored by readers and by git (``site_data/.gitignore``).

CSV conventions: snake_case columns in declared order, rows in produced order, floats
as their shortest exact repr, no timestamps (dates live in meta.json), so a re-run
produces a clean diff.
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import ctypes.util
import hashlib
import io
import json
import os
import shutil
import signal
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sitedata.names import check_name
from sitedata.schema import Result, Table, Value, check

SCHEMA_VERSION = 2
META = "meta.json"
# Where a stop can fall, in order; tests stop a write at each one (SITEDATA_FAULT).
WRITE_POINTS = ("first_file", "all_files", "moved_aside", "swapped")
_FAULT_ENV = "SITEDATA_FAULT"  # "<point>:interrupt" or "<point>:kill", for tests only


def _fault(point: str) -> None:
    spec = os.environ.get(_FAULT_ENV, "")
    if spec.partition(":")[0] != point:
        return
    if spec.endswith(":kill"):
        os.kill(os.getpid(), signal.SIGKILL)
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


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
            "columns": [c.as_meta() for c in t.columns],
            **({"length": t.length} if t.length != "fixed" else {}),
        }
    meta = {
        "schema_version": SCHEMA_VERSION,
        "experiment": experiment,
        **provenance,
        "tables": table_meta,
        "values": {
            v.name: {
                "value": result.values[v.name],
                "unit": v.unit,
                "compare": v.compare,
                "scope": v.scope,
                "description": v.description,
            }
            for v in values
        },
        "notes": dict(result.notes),
    }
    files[META] = json.dumps(meta, indent=2, default=str, ensure_ascii=False) + "\n"
    return files


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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


def _swap_in(new: Path, target: Path, experiment: str) -> None:
    """Put ``new`` where ``target`` is; the previous folder is deleted afterwards."""
    if not target.exists():
        _fault("moved_aside")
        os.rename(new, target)
        _fault("swapped")
        return
    if _exchange(new, target):  # ``new`` now holds the previous folder
        _fault("swapped")
        shutil.rmtree(new)
        return
    old = target.with_name(f".{experiment}.old-{uuid.uuid4().hex[:8]}")
    os.rename(target, old)
    _fault("moved_aside")
    os.rename(new, target)
    _fault("swapped")
    shutil.rmtree(old)


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
    return _replace_folder(Path(root), experiment, files)


def install_experiment(source: Path, root: Path, experiment: str) -> Path:
    """Put a verified experiment folder written elsewhere (a GPU machine's output) into
    ``root`` as it is, provenance included, by the same whole-folder swap."""
    check_name("experiment", experiment)
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(source).iterdir()) if p.is_file()}
    return _replace_folder(Path(root), experiment, files)


def _replace_folder(root: Path, experiment: str, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    recover(root)
    target = root / experiment
    new = root / f".{experiment}.new-{uuid.uuid4().hex[:8]}"
    new.mkdir()
    try:
        for i, (name, text) in enumerate(files.items()):
            _write_file(new / name, text)
            if i == 0:
                _fault("first_file")
        _fsync_dir(new)
        _fault("all_files")
        _swap_in(new, target, experiment)
        _fsync_dir(root)
    except BaseException as e:
        # Ctrl-C included: the committed folder is untouched or already whole; drop the rest.
        with contextlib.suppress(OSError):
            recover(root)
        written = _is_written(target, files[META])
        if isinstance(e, KeyboardInterrupt):
            raise WriteStopped(written) from None
        raise
    return target


class WriteStopped(KeyboardInterrupt):
    """A stop during a write; ``written`` says whether the new folder is the one in place."""

    def __init__(self, written: bool) -> None:
        super().__init__("written" if written else "not written")
        self.written = written


def _is_written(target: Path, meta_text: str) -> bool:
    try:
        return (target / META).read_text(encoding="utf-8") == meta_text
    except OSError:
        return False


def recover(root: Path) -> list[str]:
    """Remove what a stopped write left in ``root`` and restore a folder moved aside;
    returns what it did, one line each."""
    root = Path(root)
    done = []
    if not root.is_dir():
        return done
    for entry in sorted(root.iterdir()):
        name = entry.name
        if entry.is_dir() and not name.startswith("."):
            for tmp in entry.glob(".*.tmp"):  # per-file temp files of the format before version 2
                tmp.unlink(missing_ok=True)
                done.append(f"removed {name}/{tmp.name}, left by an interrupted write")
            continue
        if not name.startswith(".") or ".new-" not in name and ".old-" not in name:
            continue
        experiment = name[1:].split(".", 1)[0]
        target = root / experiment
        if ".old-" in name and not target.exists():
            os.rename(entry, target)
            done.append(f"restored {experiment} from an interrupted write")
        else:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:  # not made by a write, but in the way of one all the same
                entry.unlink(missing_ok=True)
            done.append(f"removed {name}, left by an interrupted write")
    return done
