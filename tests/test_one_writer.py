"""One writer at a time in a data folder (sitedata/lock.py): a second writer, a recovery,
a merge or a run into a folder another process is writing is refused in one line that
names the holder, and the first one's staging folder is never removed under it. The
first writer here is a real process, paused in the middle of its write by a hook."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from sitedata import read_experiment, recover
from sitedata.lock import LOCK, FolderBusy, held
from tests.conftest import PROVENANCE, REPO, write_data
from tests.test_cli import _one_error, run_main

# A writer of experiment "exp" (one table t, one column n) into argv[1], with n = argv[2],
# that stops at the write point argv[3] (sitedata.store.WRITE_POINTS) until told to go on.
WRITER = textwrap.dedent(
    """
    import json, sys
    from sitedata import Column, Result, Table, store

    def pause(point):
        if point == sys.argv[3]:
            print("paused", flush=True)
            sys.stdin.readline()

    store.fault = pause
    store.write_experiment(
        sys.argv[1], "exp", Result(tables={"t": [{"n": int(sys.argv[2])}]}, values={}),
        tables=(Table("t", "T", (Column("n"),)),), values=(), provenance=json.loads(sys.argv[4]),
    )
    print("written", flush=True)
    """
)


def _paused_writer(root, n: int, point: str = "all_files") -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(n), point, json.dumps({**PROVENANCE, "title": "exp"})],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "paused\n", proc.stderr.read()
    return proc


def _go_on(proc) -> str:
    out, err = proc.communicate("\n", timeout=30)
    assert proc.returncode == 0, err
    return out


def _staging(root) -> list[str]:
    return sorted(n for n in os.listdir(root) if n.startswith(".exp.new-"))


@pytest.fixture
def paused(tmp_path):
    """A data folder whose exp holds n = 1, and a process paused while it writes n = 2."""
    write_data(tmp_path, "exp", {"t": [{"n": 1}]})
    proc = _paused_writer(tmp_path, 2)
    yield tmp_path, proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_a_second_writer_and_a_recovery_are_refused_and_the_first_write_ends_whole(paused):
    root, proc = paused
    staging = _staging(root)
    assert len(staging) == 1  # the paused write's, with its files
    with pytest.raises(FolderBusy, match=rf"^{root} is being written by another process \(pid {proc.pid}, "):
        write_data(root, "exp", {"t": [{"n": 3}]})
    with pytest.raises(FolderBusy, match=f"pid {proc.pid}"):
        recover(root)
    assert _staging(root) == staging and read_experiment(root, "exp").rows("t") == [{"n": "1"}]
    assert _go_on(proc) == "written\n"
    assert read_experiment(root, "exp").rows("t") == [{"n": "2"}]  # the first writer's, whole
    assert sorted(os.listdir(root)) == [".sitedata", "exp"]  # no staging folder, no lock file left


def test_a_merge_into_a_folder_being_written_is_one_line_and_touches_nothing(paused, tmp_path, monkeypatch, capsys):
    root, proc = paused
    from measure.lab.provenance import code_hash

    source = tmp_path / "gpu"
    write_data(source, "kv_cache", {"t": [{"n": 9}]}, code_hash=code_hash("kv_cache"))
    staging = _staging(root)
    line = _one_error(run_main(monkeypatch, capsys, "merge", str(source), "--into", str(root)))
    assert line.startswith(f"error: nothing merged: {root} is being written by another process (pid {proc.pid}, ")
    assert line.endswith("wait until it ends, or write into another folder")
    assert _staging(root) == staging and not (root / "kv_cache").exists()
    assert _go_on(proc) == "written\n"


def test_a_run_into_a_folder_being_written_is_one_line(paused, monkeypatch, capsys):
    root, proc = paused
    args = ("run", "--model", "arch:tiny", "--profile", "smoke", "--only", "chapter", "--out", str(root))
    line = _one_error(run_main(monkeypatch, capsys, *args))
    assert line.startswith(f"error: --out {root} is being written by another process (pid {proc.pid}, ")
    assert not (root / "chapter").exists()
    assert _go_on(proc) == "written\n"


def test_the_lock_is_taken_again_within_one_process_and_released_by_its_end(tmp_path):
    write_data(tmp_path, "exp", {"t": [{"n": 1}]})
    with held(tmp_path, "a test"):
        assert (tmp_path / LOCK).read_text().startswith(f"pid {os.getpid()}, a test, since ")
        write_data(tmp_path, "exp", {"t": [{"n": 2}]})  # the same process: taken again
        assert (tmp_path / LOCK).exists()
    assert not (tmp_path / LOCK).exists()
    # A holder killed (SIGKILL) leaves its lock file; the kernel has released its lock.
    proc = _paused_writer(tmp_path, 3)
    proc.kill()
    proc.wait()
    [left] = _staging(tmp_path)
    assert (tmp_path / LOCK).exists()
    assert recover(tmp_path) == [f"removed {left}, left by an interrupted write"]
    assert read_experiment(tmp_path, "exp").rows("t") == [{"n": "2"}]


def test_a_lock_file_that_is_a_link_is_refused_not_followed(tmp_path):
    write_data(tmp_path, "exp", {"t": [{"n": 1}]})
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.write_text("keep\n")
    (tmp_path / LOCK).symlink_to(elsewhere)
    with pytest.raises(FolderBusy, match="is a symbolic link, not this project's lock file"):
        write_data(tmp_path, "exp", {"t": [{"n": 2}]})
    assert elsewhere.read_text() == "keep\n"
