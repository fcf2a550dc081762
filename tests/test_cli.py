"""Bad input to the command line: one line of error, a non-zero exit, no traceback."""

import json
import shutil
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO


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
            "HOME": str(REPO / ".pytest_cache" / "home"),
            **env,
        },
    )


def _one_error(proc) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr[-2000:]
    return errors[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--only", "no_such_experiment"], "unknown experiment 'no_such_experiment'"),
        (
            ["run", "--model", "no-such-org/no-such-model", "--only", "kv_cache", "--out", "/tmp/x"],
            "not in the local Hugging Face cache and the hub cannot be reached",
        ),
        (["run", "--model", "arch:no-such-arch", "--only", "kv_cache", "--out", "/tmp/x"], "unknown architecture"),
        (["run", "--device", "cuda", "--only", "kv_cache"], "no CUDA GPU"),
        (["run", "--profile", "huge", "--model", "arch:tiny", "--out", "/tmp/x"], "unknown profile"),
        (["run", "--only", " , "], "names no experiment"),
        (
            ["run", "--model", "arch:tiny", "--out", "/no/such/parent/out"],
            "parent folder /no/such/parent does not exist",
        ),
        (["run", "--model", "arch:tiny", "--out", "/proc/site_data"], "cannot write there"),
        (["run", "--model", "arch:tiny", "--out", "/etc/hostname"], "is a file, not a folder"),
        (["run", "--model", "not a model name"], "neither a local folder nor a Hugging Face id"),
        (["run", "--model", "a/b/c/../..", "--out", "/tmp/x"], "model 'a/b/c/../..' is neither a local folder"),
        (["run", "--model", "a" * 2000, "--out", "/tmp/x"], "model name of 2000 characters, more than 1024"),
    ],
)
def test_bad_input_is_one_line(args, message):
    assert message in _one_error(run_cli(*args))


def test_an_unknown_hub_id_fails_fast_without_network_even_when_not_told_offline():
    started = time.perf_counter()
    line = _one_error(run_cli("run", "--model", "no-such-org/no-such-model", "--out", "/tmp/x", offline=False))
    assert "hub cannot be reached" in line
    assert time.perf_counter() - started < 15  # the hub client's own retries took about 27 s


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


def test_a_second_run_with_nothing_changed_skips_and_says_so(tmp_path):
    args = ("run", "--model", "arch:tiny", "--profile", "smoke", "--only", "cache_size", "--out", str(tmp_path))
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr[-2000:]
    before = (tmp_path / "cache_size" / "meta.json").read_bytes()
    second = run_cli(*args)
    assert second.returncode == 0
    assert "cache_size: up to date" in second.stderr and "loading model" not in second.stderr
    assert (tmp_path / "cache_size" / "meta.json").read_bytes() == before
    forced = run_cli(*args, "--force")
    assert "loading model" in forced.stderr and (tmp_path / "cache_size" / "meta.json").read_bytes() != before


def test_a_stopped_run_says_what_it_wrote_and_keeps_the_rest(tmp_path):
    args = ("run", "--model", "arch:tiny", "--profile", "smoke", "--out", str(tmp_path), "--force")
    assert run_cli(*args, "--only", "cache_size,kv_cache").returncode == 0
    before = {p: p.read_bytes() for p in sorted((tmp_path / "kv_cache").iterdir())}
    # A Ctrl-C while kv_cache's files are written, after cache_size was written whole.
    proc = run_cli(*args, "--only", "cache_size,kv_cache", SITEDATA_FAULT="all_files:interrupt")
    assert proc.returncode == 130
    assert "Traceback" not in proc.stderr
    assert "interrupted; cache_size was not written" in proc.stderr  # the fault hits the first write
    proc = run_cli(*args, "--only", "kv_cache", SITEDATA_FAULT="swapped:interrupt")
    assert proc.returncode == 130 and "kv_cache was not written" not in proc.stderr
    assert {p: p.read_bytes() for p in sorted((tmp_path / "kv_cache").iterdir())} != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache_size", "kv_cache"]


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
