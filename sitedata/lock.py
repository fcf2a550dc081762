"""One writer at a time in a data folder: an advisory lock, held for a whole run or merge.

Every write into a data folder (``sitedata.store.write_files``), every recovery, and a
run or a merge of ``measure`` for its whole length holds the folder's lock: ``flock`` on
the file ``.sitedata.lock`` inside it, taken without waiting. A second writer is refused
with one line naming the holder (its pid, command and start, which the holder writes into
that file) before it touches anything. The kernel releases a lock when its process ends,
however it ends, so a killed writer never leaves the folder locked.

Holding the lock is what makes recovery safe: while it is held no other process writes
into the folder, so every staging folder in it is a stopped write's leftover, and only
its holder removes them (``sitedata.folder.recover``). Within one process the lock is
taken again freely (a run holds it and each of its writes takes it again): ``flock``
belongs to an open file, and a second one opened by the same process would wait for it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

LOCK = ".sitedata.lock"
_OPEN = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_held: dict[tuple[int, int], list[int]] = {}  # (device, inode) of a folder -> [lock file descriptor, depth]


class FolderBusy(Exception):
    """Another process holds the folder's lock: one line naming it."""


def holder_line(command: str = "") -> str:
    """What a holder writes into the lock file: who it is, for the one refused."""
    what = command or " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    return f"pid {os.getpid()}, {what[:200]}, since {since}"


def _open(path: Path) -> int:
    try:
        fd = os.open(path, _OPEN, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise FolderBusy(f"{path} is a symbolic link, not this project's lock file; remove it") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FolderBusy(f"{path} is not a regular file, not this project's lock file; remove it")
    return fd


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 512, 0).decode("utf-8", "replace").split("\n", 1)[0]
    except OSError:
        text = ""
    return "".join(c if c.isprintable() else "?" for c in text) or "a process that has not said which yet"


def _acquire(path: Path, root: Path, command: str) -> int:
    """A descriptor of the lock file ``path``, locked by this process."""
    while True:
        fd = _open(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise FolderBusy(
                f"{root} is being written by another process ({holder}); wait until it ends, "
                "or write into another folder"
            ) from None
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a file its last holder removed while this one waited to lock it
            os.ftruncate(fd, 0)
            os.pwrite(fd, (holder_line(command) + "\n").encode("utf-8"), 0)
            return fd
        os.close(fd)


@contextmanager
def held(root: Path, command: str = "") -> Iterator[None]:
    """The lock of the data folder ``root`` (which exists), held until the block ends;
    FolderBusy, before anything is touched, if another process holds it. The lock file
    is removed when it is released, so the folder holds only its data afterwards."""
    st = os.stat(root)
    key = (st.st_dev, st.st_ino)
    if key in _held:  # this process holds it already
        _held[key][1] += 1
        try:
            yield
        finally:
            _held[key][1] -= 1
        return
    path = Path(root) / LOCK
    fd = _acquire(path, Path(root), command)
    _held[key] = [fd, 1]
    try:
        yield
    finally:
        del _held[key]
        try:
            os.unlink(path)  # still locked: one that opens it meanwhile sees it gone, and opens anew
        except OSError:
            pass
        os.close(fd)


def is_held(root: Path) -> bool:
    """Whether this process holds ``root``'s lock."""
    try:
        st = os.stat(root)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) in _held


WAIT_POLL_S = 1.0


@contextmanager
def waited(
    root: Path,
    *,
    log: Callable[[str], None],
    command: str = "a build reading it",
    poll_s: float = WAIT_POLL_S,
    timeout_s: float | None = None,
) -> Iterator[None]:
    """The lock of ``root`` for a reader that must see one whole state of the folder (a
    build renders, hashes and publishes one reading of it): while a writer holds it, wait,
    saying once who it waits for, then hold it for the reading. A folder where no lock
    file can be made (a read-only checkout) has no writer to wait for: it is read as it
    is. FolderBusy after ``timeout_s`` (None: no limit)."""
    start, said, stack = time.monotonic(), False, ExitStack()
    while True:
        try:
            stack.enter_context(held(root, command))
            break
        except FolderBusy as busy:
            if timeout_s is not None and time.monotonic() - start >= timeout_s:
                raise
            if not said:
                log(f"{str(busy).split('; ')[0]}; waiting until it ends, so that the site shows one run's data")
                said = True
            time.sleep(poll_s)
        except OSError as e:
            if e.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            break  # read-only: nobody writes here
    with stack:
        yield
