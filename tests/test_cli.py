"""Bad input to the command line: one line of error, a non-zero exit, no traceback."""

import atexit
import functools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

import pytest

from tests.conftest import REPO


@functools.cache
def _home() -> str:
    """The command line's home folder: a new temporary one for this test process (its
    caches land there), removed when the process ends; never the user's or a fixed one."""
    home = tempfile.mkdtemp(prefix="measure-cli-home-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return home


def run_cli(*args, timeout=300, offline=True, **env):
    return subprocess.run(
        [sys.executable, "-m", "measure", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={
            **({"HF_HUB_OFFLINE": "1"} if offline else {}),
            "PATH": "/usr/bin:/bin",
            "HOME": _home(),
            **env,
        },
    )


def run_main(monkeypatch, capsys, *args):
    """The command line called in this process, as ``python -m measure`` calls it
    (``measure.__main__.main``), where a process of its own would add only the start of
    PyTorch (seconds a case): a stop, a signal or a fault injected through the environment
    is tried in a process of its own (``run_cli``)."""
    from measure.__main__ import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HOME", _home())
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def _last(proc) -> str:
    return proc.stderr.strip().splitlines()[-1]


def _one_error(proc) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr[-2000:]
    return errors[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--only", "no_such_experiment", "--out", "{tmp}/x"], "unknown experiment 'no_such_experiment'"),
        (
            ["run", "--model", "no-such-org/no-such-model", "--only", "kv_cache", "--out", "{tmp}/x"],
            "not in the local Hugging Face cache and the hub cannot be reached",
        ),
        (["run", "--model", "arch:no-such-arch", "--only", "kv_cache", "--out", "{tmp}/x"], "unknown architecture"),
        (["run", "--device", "cuda", "--only", "kv_cache", "--out", "{tmp}/x"], "no CUDA GPU"),
        (["run", "--profile", "huge", "--model", "arch:tiny", "--out", "{tmp}/x"], "unknown profile"),
        (["run", "--only", " , ", "--out", "{tmp}/x"], "names no experiment"),
        (
            ["run", "--model", "arch:tiny", "--out", "{tmp}/no/such/out"],
            "parent folder {tmp}/no/such does not exist",
        ),
        (["run", "--model", "arch:tiny", "--out", "/proc/site_data"], "cannot write there"),
        (["run", "--model", "arch:tiny", "--out", "{tmp}/a_file"], "is a file, not a folder"),
        (["run", "--model", "not a model name", "--out", "{tmp}/x"], "neither a local folder nor a Hugging Face id"),
        (["run", "--model", "a/b/c/../..", "--out", "{tmp}/x"], "model 'a/b/c/../..' is neither a local folder"),
        (["run", "--model", "a" * 2000, "--out", "{tmp}/x"], "model name of 2000 characters, more than 1024"),
    ],
)
def test_bad_input_is_one_line(args, message, tmp_path, monkeypatch, capsys):
    (tmp_path / "a_file").write_text("")
    line = _one_error(run_main(monkeypatch, capsys, *(a.format(tmp=tmp_path) for a in args)))
    assert message.format(tmp=tmp_path) in line


@pytest.mark.slow
def test_an_unknown_hub_id_fails_fast_without_network_even_when_not_told_offline(tmp_path):
    args = ("run", "--model", "no-such-org/no-such-model", "--out", str(tmp_path / "x"))
    line = _one_error(run_cli(*args, offline=False))
    assert "hub cannot be reached" in line


def test_the_hub_check_gives_up_in_seconds_not_after_the_clients_retries(monkeypatch):
    """Timed in this process, so that a loaded machine's start of PyTorch is not counted:
    one connection with a 3 s timeout, where the hub client's own retries took about 27 s."""
    from measure.errors import UserError
    from measure.lab.models import preflight

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    started = time.perf_counter()
    with pytest.raises(UserError, match="hub cannot be reached"):
        preflight("no-such-org/no-such-model")
    assert time.perf_counter() - started < 10


@pytest.fixture(scope="module")
def tiny_model_folder(tmp_path_factory):
    """The tiny architecture saved as a local model folder, as a user would have one."""
    import torch

    from measure.lab.models import load_model

    folder = tmp_path_factory.mktemp("tiny_model")
    loaded = load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32)
    loaded.model.save_pretrained(folder)
    return folder


def _variant(src, dest, **config):
    shutil.copytree(src, dest)
    cfg = json.loads((dest / "config.json").read_text())
    cfg.update(config)
    (dest / "config.json").write_text(json.dumps(cfg))
    return dest


@pytest.mark.slow
@pytest.mark.parametrize(
    "config, message",
    [
        ({"num_hidden_layers": 4}, "weights do not match its config.json: 18 weights missing"),
        ({"num_hidden_layers": 1}, "weights do not match its config.json"),
        ({"intermediate_size": 96}, "model"),
    ],
    ids=["more-layers-declared", "fewer-layers-declared", "other-shape"],
)
def test_a_local_model_whose_config_disagrees_with_its_weights_is_refused(tiny_model_folder, tmp_path, config, message):
    folder = _variant(tiny_model_folder, tmp_path / "m", **config)
    proc = run_cli("run", "--model", str(folder), "--only", "kv_cache", "--out", str(tmp_path / "out"))
    line = _one_error(proc)
    assert message in line and str(folder) in line
    assert "LOAD REPORT" not in proc.stderr and "Traceback" not in proc.stderr  # transformers' table is not shown
    assert not (tmp_path / "out" / "kv_cache").exists()


@pytest.mark.smoke
def test_a_second_run_with_nothing_changed_skips_and_says_so(tmp_path, monkeypatch, capsys):
    args = ("run", "--model", "arch:tiny", "--profile", "smoke", "--only", "chapter", "--out", str(tmp_path))
    first = run_main(monkeypatch, capsys, *args)
    assert first.returncode == 0, first.stderr[-2000:]
    before = (tmp_path / "chapter" / "meta.json").read_bytes()
    second = run_main(monkeypatch, capsys, *args)
    assert second.returncode == 0
    assert "chapter: up to date" in second.stderr and "loading model" not in second.stderr
    assert (tmp_path / "chapter" / "meta.json").read_bytes() == before
    forced = run_main(monkeypatch, capsys, *args, "--force")
    assert "loading model" in forced.stderr and (tmp_path / "chapter" / "meta.json").read_bytes() != before


@pytest.mark.smoke
def test_a_stopped_run_says_what_it_wrote_and_keeps_the_rest(tmp_path):
    args = ("run", "--model", "arch:tiny", "--profile", "smoke", "--out", str(tmp_path), "--force")
    assert run_cli(*args, "--only", "cache_size,kv_cache").returncode == 0
    before = {p: p.read_bytes() for p in sorted((tmp_path / "kv_cache").iterdir())}
    # A Ctrl-C while kv_cache's files are written, after cache_size was written whole.
    proc = run_cli(*args, "--only", "cache_size,kv_cache", SITEDATA_FAULT="all_files:interrupt")
    assert proc.returncode == 130
    assert "Traceback" not in proc.stderr
    # the fault hits the first write
    assert _last(proc) == "interrupted; cache_size was not written, its previous data is unchanged"
    # the second swap: the first puts the run's calibration row in place, before kv_cache
    proc = run_cli(*args, "--only", "kv_cache", SITEDATA_FAULT="swapped@2:interrupt")
    assert proc.returncode == 130 and _last(proc) == "interrupted; kv_cache was written"
    assert {p: p.read_bytes() for p in sorted((tmp_path / "kv_cache").iterdir())} != before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".sitedata", "cache_size", "calibration", "kv_cache"]
    # The calibration holds the run of each experiment: the stopped one without its end.
    from sitedata import read_experiment

    runs = {r["run"]: r for r in read_experiment(tmp_path, "calibration").rows("runs")}
    named = {n: read_experiment(tmp_path, n).meta["run"]["id"] for n in ("cache_size", "kv_cache")}
    assert sorted(runs) == sorted(named.values())
    assert runs[named["cache_size"]]["end_step_ms"] and runs[named["kv_cache"]]["end_step_ms"] == ""


@pytest.mark.slow
def test_list_names_every_experiment():
    from measure.registry import EXPERIMENTS

    proc = run_cli("list")
    assert proc.returncode == 0
    assert [line.split()[0] for line in proc.stdout.splitlines()] == list(EXPERIMENTS)


def test_help_shows_options():
    proc = run_cli("run", "--help")
    assert proc.returncode == 0
    for opt in ("--model", "--device", "--only", "--profile", "--out"):
        assert opt in proc.stdout


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))}


SMOKE = ("--model", "arch:tiny", "--profile", "smoke", "--only", "chapter")


@pytest.mark.slow
def test_a_folder_of_other_files_is_never_touched(tmp_path):
    """The issue's folder: a failing run, and a run that would succeed, both refused
    before anything in it is deleted, renamed or written; the repository likewise."""
    folder = tmp_path / "V"
    (folder / ".config.new-backup").mkdir(parents=True)
    (folder / ".config.new-backup" / "settings.ini").write_text("[x]\n")
    (folder / ".bashrc.old-2023").write_text("alias ll='ls -l'\n")
    (folder / "Documents").mkdir()
    (folder / "Documents" / ".thesis.tmp").write_text("chapter 1")
    before = _tree(folder)
    line = _one_error(run_cli("run", "--out", str(folder), "--model", "arch:unknown"))
    assert "unknown architecture 'arch:unknown'" in line
    assert _tree(folder) == before
    line = _one_error(run_cli("run", "--out", str(folder), *SMOKE))
    assert line == (
        f"error: --out {folder} is not a data folder of this project: it holds .bashrc.old-2023, "
        ".config.new-backup, Documents and no .sitedata marker; give a new or an empty folder"
    )
    assert _tree(folder) == before
    repo = sorted(p.name for p in REPO.iterdir())
    line = _one_error(run_cli("run", "--out", ".", *SMOKE))
    assert line == "error: --out . is this checkout itself; give site_data or a folder of its own"
    assert sorted(p.name for p in REPO.iterdir()) == repo


@pytest.mark.smoke
def test_a_stop_or_an_error_after_the_swap_says_the_data_was_written(tmp_path):
    """A Ctrl-C (a real SIGINT) after the new folder is in place, in the runner or in
    the command line, and an I/O error after the swap: each message says it is written."""
    out = tmp_path / "out"
    meta = out / "chapter" / "meta.json"
    seen = set()
    for fault in ("returned:sigint", "finished:sigint"):
        proc = run_cli("run", "--out", str(out), *SMOKE, "--force", SITEDATA_FAULT=fault)
        assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert _last(proc) == "interrupted; chapter was written"
        seen.add(meta.read_bytes())
    # the second swap: the first is the run's calibration row's, put in place before chapter
    proc = run_cli("run", "--out", str(out), *SMOKE, "--force", SITEDATA_FAULT="swapped@2:oserror")
    line = _one_error(proc)
    assert line == (
        f"error: the write of chapter into {out} failed after its new data was in place "
        "([Errno 5] Input/output error (injected at swapped)); chapter was written"
    )
    seen.add(meta.read_bytes())
    assert len(seen) == 3  # each run's data in place
    assert sorted(p.name for p in out.iterdir()) == [".sitedata", "calibration", "chapter"]


def test_ctrl_c_while_importing_torch_is_one_line(tmp_path):
    """A real SIGINT while the command imports PyTorch (its library mapped, its import
    not done): one line, exit 130, nothing written."""
    import os
    import signal

    out = tmp_path / "out"
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": _home()}
    cmd = [sys.executable, "-m", "measure", "run", "--out", str(out), *SMOKE]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(f"/proc/{proc.pid}/maps") as maps:
            if "libtorch" in maps.read():
                break
        time.sleep(0.005)
    else:
        pytest.fail("torch was never imported")
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-2000:]
    assert stderr.strip() == f"interrupted before anything was measured; nothing was written to {out}"
    assert not out.exists()


@pytest.mark.smoke
def test_a_meta_json_nested_too_deep_is_re_measured_and_checked_without_a_crash(tmp_path, monkeypatch, capsys):
    from tests.conftest import write_data

    out = tmp_path / "out"
    write_data(out, "chapter", {"t": [{"n": 1}]})
    (out / "chapter" / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    check = run_main(
        monkeypatch,
        capsys,
        "check",
        "--only",
        "chapter",
        "--committed",
        str(out),
        "--regenerated",
        str(out),
        "--no-pages",
        "--report",
        str(tmp_path / "report.json"),
    )
    assert check.returncode == 1 and "Traceback" not in check.stderr + check.stdout
    assert "nests deeper than the 32 levels" in check.stdout + check.stderr
    proc = run_main(monkeypatch, capsys, "run", "--out", str(out), *SMOKE)  # the fix the message suggests works
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    from sitedata import read_experiment

    assert read_experiment(out, "chapter").meta["model"]["spec"] == "arch:tiny"
