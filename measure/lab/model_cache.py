"""A converted model kept in a cache folder, trusted only while its files are those written.

The embedded model is converted once into a folder outside the repository
(``measure/lab/embedded.py``) and every later run loads it from there, so a file changed
since (an edit, a copy cut short, a disk error) would be measured as the model, silently.
The folder therefore records, when it is written, every file's size and sha256 in its
``origin.json`` (written last: a folder without it is incomplete), and a run checks them
before it loads the model:

* every file's size, always (a file cut short or grown is caught by a stat);
* every file's content, by its sha256, unless the file is the very one last verified.
  Hashing the 540 MB of weights takes about 2 s on two cores, which every run would pay,
  so once a file is hashed its fingerprint is recorded in ``verified.json`` (size, mtime
  and ctime in nanoseconds, inode, device), and the hash is skipped while the
  fingerprint is unchanged. Every write to a file through the filesystem changes its
  ctime, which no call sets back (``utime`` sets mtime, and moves ctime to now), and a
  copy is a new inode: an unchanged fingerprint means the file has not been written
  since it was hashed. A change below the filesystem (a failing disk) leaves no trace in
  a stat; no check short of hashing every run would see it.

A folder that fails the check, or that records no checksums (written by older code), is
converted again, said in one line. The check and a conversion hold the cache folder's
lock (``.lock``, flock), so two runs never convert or remove at once; a cache that cannot
be written is checked without it. A cache that cannot be written where a conversion is
needed (a full disk, a read-only mount) is one line naming the folder and the way out
(``INFERENCE_CHEAP_CACHE``), never a traceback.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from measure.errors import UserError

ORIGIN = "origin.json"  # what the folder was made from, and its files' checksums; written last
VERIFIED = "verified.json"  # the fingerprint of each file when its hash last matched
LOCK = ".lock"  # in the cache folder, beside the converted folders
WAY_OUT = "make room there, or set INFERENCE_CHEAP_CACHE to a folder that can be written"


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _fingerprint(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data: object) -> None:
    """``data`` into ``path`` whole (a new file renamed into place), synced."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def record_checksums(folder: Path, origin: dict) -> None:
    """``origin`` with every file's size and sha256 into ``folder/origin.json`` (last),
    and each file's fingerprint, taken before its hash, into ``verified.json``."""
    files, fingerprints = {}, {}
    for path in sorted(Path(folder).iterdir()):
        if path.name in (ORIGIN, VERIFIED):
            continue
        st = os.lstat(path)
        fingerprints[path.name] = _fingerprint(st)
        files[path.name] = {"size": st.st_size, "sha256": sha256_file(path)}
    _write_json(Path(folder) / VERIFIED, fingerprints)
    _write_json(Path(folder) / ORIGIN, {**origin, "files": files})


def damage(folder: Path) -> str:
    """Why ``folder`` is not the model it recorded ("" if it is, and then the fingerprint
    of every file hashed is recorded, where the folder can be written)."""
    origin = _read_json(Path(folder) / ORIGIN)
    if not isinstance(origin, dict):
        return f"its {ORIGIN} is missing or unreadable"
    files = origin.get("files")
    if not isinstance(files, dict) or not files:
        return "it records no checksums of its files, converted by older code"
    verified = _read_json(Path(folder) / VERIFIED)
    verified = verified if isinstance(verified, dict) else {}
    now = {}
    for name, want in sorted(files.items()):
        if not isinstance(want, dict) or "/" in name or name in ("", ".", ".."):
            return f"its {ORIGIN} is malformed"
        try:
            st = os.lstat(Path(folder) / name)
        except FileNotFoundError:
            return f"{name} is missing"
        if not stat.S_ISREG(st.st_mode):
            return f"{name} is not a regular file"
        if st.st_size != want.get("size"):
            return f"{name} is {st.st_size:,} bytes, {want.get('size'):,} were written"
        now[name] = _fingerprint(st)  # taken before the hash: a write during it shows next time
        if verified.get(name) != now[name] and sha256_file(Path(folder) / name) != want.get("sha256"):
            return f"{name} differs from its checksum"
    if now != verified:
        with contextlib.suppress(OSError):  # a read-only cache: hashed again next time
            _write_json(Path(folder) / VERIFIED, now)
    return ""


def publish_folder(tmp: Path, target: Path) -> None:
    """Put ``tmp``, written whole, in place as ``target`` in one rename, unless another
    process put its own complete folder (one with origin.json, written last) there first:
    then that one is kept and ``tmp`` is left for the caller to remove."""
    try:
        tmp.rename(target)
    except OSError:
        if not (target / ORIGIN).is_file():
            raise


@contextlib.contextmanager
def cache_lock(root: Path, log) -> Iterator[None]:
    """The cache folder's lock, waited for (a conversion takes tens of seconds); none
    where the folder cannot be written (nothing there can change through this process)."""
    fd = None
    with contextlib.suppress(OSError):
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    if fd is None:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another process checking or converting the model in {root}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _leftovers(target: Path) -> list[Path]:
    """Folders a stopped conversion or replacement of ``target`` left beside it."""
    prefixes = (f"{target.name}.partial-", f".{target.name}.damaged-")
    try:
        names = os.listdir(target.parent)
    except OSError:
        return []
    return [target.parent / n for n in names if n.startswith(prefixes) and (target.parent / n).is_dir()]


def _discard(target: Path, why: str) -> None:
    aside = target.with_name(f".{target.name}.damaged-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(target, aside)
    except OSError as e:
        raise UserError(
            f"the converted model in {target} cannot be trusted ({why}) and cannot be replaced there "
            f"({e.strerror or e}); remove that folder, or set INFERENCE_CHEAP_CACHE to a folder that can be written"
        ) from None
    shutil.rmtree(aside, ignore_errors=True)


def cached(target: Path, build: Callable[[Path], dict], log) -> Path:
    """``target``, a converted model's folder verified against its checksums; made by
    ``build(tmp)`` (which writes the files into ``tmp`` and returns what origin.json says
    of their source) where it is missing, incomplete or damaged."""
    target = Path(target)
    with cache_lock(target.parent, log):
        if os.path.lexists(target):
            why = damage(target)
            if not why:
                return target
            log(f"the converted model in {target} cannot be trusted: {why}; converting it again")
            _discard(target, why)
        for left in _leftovers(target):  # the lock is held: no conversion is in progress
            shutil.rmtree(left, ignore_errors=True)
        try:
            _build(target, build)
        except OSError as e:
            why = e.strerror or str(e)
            raise UserError(f"the converted model could not be written to {target.parent} ({why}); {WAY_OUT}") from None
    return target


def _build(target: Path, build: Callable[[Path], dict]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{target.name}.partial-", dir=target.parent))
    try:
        origin = build(tmp)
        record_checksums(tmp, origin)
        publish_folder(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
