"""Bad input to the command line: one line of error, a non-zero exit, no traceback."""

import subprocess
import sys

import pytest

from tests.conftest import REPO


def run_cli(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "measure", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(REPO / ".pytest_cache" / "home")},
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--only", "no_such_experiment"], "unknown experiment 'no_such_experiment'"),
        (
            ["run", "--model", "no-such-org/no-such-model", "--only", "kv_cache", "--out", "/tmp/x"],
            "could not load model",
        ),
        (["run", "--model", "arch:no-such-arch", "--only", "kv_cache", "--out", "/tmp/x"], "unknown architecture"),
        (["run", "--device", "cuda", "--only", "kv_cache"], "no CUDA GPU"),
        (["run", "--profile", "huge", "--model", "arch:tiny", "--out", "/tmp/x"], "unknown profile"),
    ],
)
def test_bad_input_is_one_line(args, message):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], proc.stderr[-2000:]


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
