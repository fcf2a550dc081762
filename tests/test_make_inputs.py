"""What a person or a workflow passes to make is data, never code: a model name, an
experiment list or a folder that carries shell or make syntax is refused in one line before
any recipe runs, and what is accepted reaches the command line as one quoted word."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from tests.conftest import REPO

# Each tries to create the file `pwn` in the test's folder: through the shell (a quote that
# closes make's quoting, a command substitution) or through make itself ($(shell ...),
# which make would run while expanding the value).
ATTACKS = [
    ("MODEL", "x' ; touch {pwn} ; echo '"),
    ("MODEL", "$(shell touch {pwn})"),
    ("MODEL", "${{shell touch {pwn}}}"),
    ("MODEL", "`touch {pwn}`"),
    ("ONLY", "kv_cache$(shell touch {pwn})"),
    ("ONLY", "kv_cache; touch {pwn}"),
    ("OUT", '/tmp/x"; touch {pwn}; "'),
    ("FROM", "$$(touch {pwn})"),
    ("A", "a' && touch {pwn} && '"),
    ("PAGES", "kv-cache.md' ; touch {pwn} #"),
    ("WORKERS", "3 ; touch {pwn}"),
    ("FORCE", "$(shell touch {pwn})"),
    ("RUN", "/tmp/run' ; touch {pwn} ; echo '"),
    ("REPORT", "$(shell touch {pwn})"),
    ("BRIEF", "1 `touch {pwn}`"),
    ("MODEL", "x\ntouch {pwn}"),
]
TARGETS = {
    "A": "verdicts",
    "FROM": "merge",
    "PAGES": "editions",
    "WORKERS": "test-fast",
    "RUN": "check",
    "REPORT": "check",
    "BRIEF": "check",
}


def _make(tmp_path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    # `-n` prints the recipes instead of running them, but make still expands every value it
    # would run, so a $(shell ...) in one would run here; a stamp that exists keeps make from
    # building the virtual environment first.
    stamp = tmp_path / "stamp"
    stamp.touch()
    return subprocess.run(
        ["make", "-n", "--no-print-directory", f"STAMP={stamp}", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


@pytest.mark.parametrize("name,value", ATTACKS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ATTACKS)])
def test_an_injection_through_a_make_variable_is_refused_in_one_line(tmp_path, name, value):
    pwn = tmp_path / "pwn"
    out = _make(tmp_path, TARGETS.get(name, "measure"), f"{name}={value.format(pwn=pwn)}")
    assert out.returncode != 0 and not pwn.exists()
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("Makefile:") and f"*** {name} may" in line, out.stderr


def test_an_injection_through_the_environment_is_refused_too(tmp_path):
    """The measure workflow hands its inputs to make through the environment."""
    pwn = tmp_path / "pwn"
    out = _make(tmp_path, "measure", env={"MODEL": f"$(shell touch {pwn})", "ONLY": "kv_cache"})
    assert out.returncode != 0 and not pwn.exists()
    assert "MODEL may hold only" in out.stderr


def test_what_is_accepted_reaches_the_command_as_one_quoted_word(tmp_path):
    out = _make(
        tmp_path,
        "measure",
        "MODEL=Qwen/Qwen2.5-0.5B-Instruct",
        "ONLY=kv_cache, cache_size",
        "OUT=/tmp/a folder/run-1",
        "FORCE=1",
    )
    assert out.returncode == 0, out.stderr
    run = next(line for line in out.stdout.splitlines() if " -m measure run " in line)
    assert "--model 'Qwen/Qwen2.5-0.5B-Instruct'" in run
    assert "--only 'kv_cache, cache_size'" in run and "--out '/tmp/a folder/run-1'" in run and "--force" in run


def test_check_compares_a_run_already_measured_when_given_one(tmp_path):
    """The measure workflow measures on each runner first, then gates that very run."""
    out = _make(tmp_path, "check", "RUN=/tmp/x", "BRIEF=1", "REPORT=/tmp/r.json", "KINDS=exact")
    assert out.returncode == 0, out.stderr
    gate = " ".join(out.stdout.split("-m measure check", 1)[1].replace("\\\n", " ").split())
    assert "--regenerated '/tmp/x'" in gate and "--report '/tmp/r.json'" in gate and "--brief" in gate
    assert "--kinds 'exact'" in gate


def test_check_without_a_run_regenerates_as_before(tmp_path):
    out = _make(tmp_path, "check")
    assert out.returncode == 0, out.stderr
    gate = out.stdout.split("-m measure check", 1)[1]
    assert "--kinds 'exact,numeric,timing'" in gate
    assert "--regenerated" not in gate and "--report" not in gate and "--brief" not in gate


def test_the_defaults_still_measure_into_site_data_and_run_the_notebooks(tmp_path):
    out = _make(tmp_path, "measure")
    assert out.returncode == 0, out.stderr
    assert "--model 'default' --device 'auto' --out 'site_data'" in out.stdout
    assert "-m measure notebooks" in out.stdout


@pytest.mark.parametrize("target", ["test", "test-fast"])
def test_the_suite_runs_on_three_processes_unless_told(tmp_path, target):
    """`unexport` defines a variable it names: a default given after it would never apply,
    and pytest would be handed `-n ''`."""
    assert " -n '3'" in _make(tmp_path, target).stdout
    assert " -n '2'" in _make(tmp_path, target, "WORKERS=2").stdout


def test_no_workflow_writes_an_input_into_a_shell_line():
    """A workflow's inputs, and what a pull request's author writes, reach a shell line only
    through the environment, where the shell reads them as data."""
    untrusted = ("${{ inputs.", "${{ github.event.", "${{ github.head_ref")
    for path in sorted((REPO / ".github" / "workflows").glob("*.yml")):
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                run = step.get("run", "")
                assert not any(u in run for u in untrusted), f"{path.name}: {step.get('name')}: {run[:80]}"


def test_the_injection_test_can_fail(tmp_path):
    """The check above reads make's own verdict: against a Makefile that passes a value
    unquoted, the same attack does run."""
    pwn = tmp_path / "pwn"
    makefile = tmp_path / "Makefile"
    makefile.write_text("MODEL ?= default\nmeasure:\n\t@echo --model '$(MODEL)'\n", encoding="utf-8")
    subprocess.run(
        ["make", "-s", "-f", str(makefile), "measure", f"MODEL=$(shell touch {pwn})"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert pwn.exists()
