"""The forge's workflows: valid for actionlint (pinned, from PyPI), and each doing its
one job: the tests on every push and pull request, the site deployed from main, and a
hand-started measurement on a fleet of runners that proposes its data with each runner's
drift gate report (played here step by step, with a make that only records its calls)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"
ACTIONLINT = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def steps(workflow: dict) -> list[dict]:
    return [s for job in workflow["jobs"].values() for s in job.get("steps", [])]


def runs(workflow: dict) -> str:
    return "\n".join(s.get("run", "") for s in steps(workflow))


def uses(workflow: dict) -> list[str]:
    return [s["uses"].split("@")[0] for s in steps(workflow) if "uses" in s]


def lint(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [ACTIONLINT, "-config-file", str(REPO / ".github" / "actionlint.yaml"), "-no-color"],
        cwd=folder,
        capture_output=True,
        text=True,
    )


needs_actionlint = pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is not installed (make env)")


@needs_actionlint
def test_every_workflow_passes_actionlint():
    out = lint(REPO)
    assert out.returncode == 0, out.stdout + out.stderr


@needs_actionlint
def test_actionlint_catches_a_broken_workflow(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # actionlint looks for the repository
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    broken = (WORKFLOWS / "measure.yml").read_text(encoding="utf-8").replace("inputs.model", "inputs.modle", 1)
    (tmp_path / ".github" / "workflows" / "measure.yml").write_text(broken, encoding="utf-8")
    out = lint(tmp_path)
    assert out.returncode != 0 and "modle" in out.stdout


def test_the_tests_run_on_every_push_and_pull_request():
    wf = load("tests.yml")
    triggers = wf[True]  # YAML reads the key `on` as true
    assert "push" in triggers and "pull_request" in triggers
    assert "bash .ci/run" in runs(wf)


def test_the_site_is_built_strictly_and_deployed_from_main():
    wf = load("pages.yml")
    assert wf[True]["push"]["branches"] == ["main"]
    assert "make site" in runs(wf)
    assert "actions/upload-pages-artifact" in uses(wf) and "actions/deploy-pages" in uses(wf)
    assert "--strict" in (REPO / "Makefile").read_text(encoding="utf-8").split("site: $(PROJECT)")[1].split("\n\n")[0]


def test_the_measurement_is_a_matrix_over_runner_labels():
    wf = load("measure.yml")
    assert list(wf[True]) == ["workflow_dispatch"]
    inputs = wf[True]["workflow_dispatch"]["inputs"]
    assert json.loads(inputs["runners"]["default"]) == ["gpu", "cpu"]
    assert "JSON list" in inputs["runners"]["description"]
    job = wf["jobs"]["measure"]
    assert job["strategy"]["fail-fast"] is False, "one machine's failure must not cancel the others"
    assert job["strategy"]["matrix"]["label"] == "${{ fromJSON(inputs.runners) }}"
    assert job["runs-on"] == ["self-hosted", "${{ matrix.label }}"]


def test_each_label_measures_gates_its_own_run_and_uploads_both():
    job = load("measure.yml")["jobs"]["measure"]
    script = "\n".join(s.get("run", "") for s in job["steps"])
    order = [script.index(s) for s in ("make measure OUT=", "check RUN=")]
    assert order == sorted(order), "measure, then the gate on that run"
    assert "make merge" not in script and "create-pull-request" not in str(job)
    (upload,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert job["steps"][-1] is upload and "${{ matrix.label }}" in upload["with"]["name"]
    assert upload["with"]["include-hidden-files"] is True, "the run folder's marker, .sitedata, is hidden"


def test_one_job_merges_every_run_and_opens_one_pull_request():
    job = load("measure.yml")["jobs"]["propose"]
    assert job["needs"] == "measure" and "!cancelled()" in job["if"]
    assert job["runs-on"] == ["self-hosted", "cpu"]
    (download,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
    assert download["with"]["pattern"] and not download["with"].get("merge-multiple", False)
    assert "make merge FROM=" in "\n".join(s.get("run", "") for s in job["steps"])
    (pr,) = [s for s in job["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    assert pr["with"]["add-paths"] == "site_data" and "body.md" in pr["with"]["body-path"]


# The dry run: every step of measure.yml played here, as the runners would, with a `make`
# that only records its arguments and the artifact actions emulated by copying folders.
FAKE_MAKE = """#!{python}
import json, os, pathlib, sys
args = sys.argv[1:]
with open(os.environ["MAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\\n")
target = next(a for a in args if not a.startswith("-") and "=" not in a)
var = dict(a.split("=", 1) for a in args if "=" in a)
if target == "measure":
    if os.environ.get("FAKE_MEASURE_FAILS"):
        sys.exit("make: *** [Makefile:1: measure] Error 1")
    out = pathlib.Path(var["OUT"])
    (out / "kv_cache").mkdir(parents=True)
    (out / ".sitedata").write_text("")
    (out / "kv_cache" / "meta.json").write_text("{{}}")
elif target == "check":
    print("gate report for " + var["RUN"])
    sys.exit(0 if (pathlib.Path(var["RUN"]) / "kv_cache").is_dir() and not os.environ.get("FAKE_DRIFT") else 2)
elif target == "merge":
    source = pathlib.Path(var["FROM"])
    if not (source / ".sitedata").is_file() or os.environ.get("FAKE_REFUSE", "//") in str(source):
        print("nothing merged: refused " + str(source))
        sys.exit(2)
"""

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
DRY_INPUTS = {"model": "arch:qwen2-tiny", "only": "kv_cache", "runners": '["gpu", "cpu", "tpu"]'}


def expand(text, values: dict) -> str:
    """A `${{ ... }}` expression replaced by the test's value for it; an unknown one fails."""
    if not isinstance(text, str):
        return text
    return EXPRESSION.sub(lambda m: values[m.group(1)], text)


def play(job: dict, values: dict, env: dict, temp: Path, artifacts: Path) -> list[dict]:
    """The job's steps in order until one fails (as `if: success()` skips the rest), each
    `run:` in bash -e as a runner's default shell; what each step did, returned."""
    workspace = temp.parent / ("workspace-" + temp.name)
    workspace.mkdir()
    temp.mkdir()
    done = []
    for step in job["steps"]:
        action = step.get("uses", "").split("@")[0]
        with_ = {k: expand(v, values) for k, v in step.get("with", {}).items()}
        if "run" in step:
            script = temp.parent / "step.sh"
            script.write_text(expand(step["run"], values), encoding="utf-8")
            output, summary = temp / "output", temp / "summary"
            step_env = {k: expand(v, values) for k, v in {**job.get("env", {}), **step.get("env", {})}.items()}
            runner = {"RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
            out = subprocess.run(
                ["bash", "-e", str(script)],
                cwd=workspace,
                env=env | step_env | runner,
                capture_output=True,
                text=True,
                timeout=60,
            )
            done.append({"run": step["run"], "rc": out.returncode, "log": out.stdout + out.stderr})
            if out.returncode != 0:
                break
            continue
        if action == "actions/upload-artifact":
            hidden = with_.get("include-hidden-files") is True
            ignore = None if hidden else shutil.ignore_patterns(".*")
            shutil.copytree(with_["path"], artifacts / with_["name"], ignore=ignore)
        elif action == "actions/download-artifact":
            assert not with_.get("merge-multiple"), "each artifact in a folder of its own name"
            for artifact in sorted(artifacts.iterdir()):
                if fnmatch.fnmatch(artifact.name, with_["pattern"]):
                    shutil.copytree(artifact, Path(with_["path"]) / artifact.name)
        else:
            assert action in ("actions/checkout", "peter-evans/create-pull-request"), f"no stand-in for {action}"
        done.append({"uses": action, "with": with_})
    return done


def make_calls(log: Path) -> list[tuple[str, dict]]:
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
    return [
        (next(a for a in c if not a.startswith("-") and "=" not in a), dict(a.split("=", 1) for a in c if "=" in a))
        for c in calls
    ]


def dry_run(tmp_path: Path, *, fails=(), drifts=(), refused=()) -> dict:
    """The workflow on labels gpu, cpu and tpu: a label in `fails` has make measure fail,
    one in `drifts` has the gate find drift, one in `refused` has its merge refused."""
    wf = load("measure.yml")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "make").write_text(FAKE_MAKE.format(python=sys.executable), encoding="utf-8")
    (bin_ / "make").chmod(0o755)
    base = {"PATH": f"{bin_}:{os.environ['PATH']}", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    inputs = {f"inputs.{k}": v for k, v in DRY_INPUTS.items()}
    labels = json.loads(DRY_INPUTS["runners"])
    jobs = {}
    for label in labels:
        temp = tmp_path / f"runner-{label}" / "temp"
        temp.parent.mkdir()
        env = base | {"MAKE_LOG": str(temp.parent / "make.log")}
        env |= {"FAKE_MEASURE_FAILS": "1"} if label in fails else {}
        env |= {"FAKE_DRIFT": "1"} if label in drifts else {}
        values = inputs | {"matrix.label": label, "runner.temp": str(temp)}
        steps = play(wf["jobs"]["measure"], values, env, temp, artifacts)
        jobs[label] = {"steps": steps, "make": make_calls(temp.parent / "make.log"), "temp": temp}
    temp = tmp_path / "runner-propose" / "temp"
    temp.parent.mkdir()
    env = base | {"MAKE_LOG": str(temp.parent / "make.log")}
    env |= {"FAKE_REFUSE": f"measured-{next(iter(refused))}/"} if refused else {}
    values = inputs | {"runner.temp": str(temp), "join(fromJSON(inputs.runners), ' ')": " ".join(labels)}
    values |= {"github.run_id": "7", "steps.fleet.outputs.measured": "(the step's output)"}
    steps = play(wf["jobs"]["propose"], values, env, temp, artifacts)
    jobs["propose"] = {"steps": steps, "make": make_calls(temp.parent / "make.log"), "temp": temp}
    return jobs


def test_dry_run_each_label_measures_then_gates_that_run(tmp_path):
    jobs = dry_run(tmp_path, fails={"tpu"}, drifts={"cpu"})
    for label in ("gpu", "cpu"):
        (measure, run), (check, gate) = jobs[label]["make"]
        assert (measure, check) == ("measure", "check")
        assert gate["RUN"] == run["OUT"] and (jobs[label]["temp"] / "measured") in Path(run["OUT"]).parents
        assert (run["MODEL"], run["ONLY"], gate["ONLY"]) == ("arch:qwen2-tiny", "kv_cache", "kv_cache")
        assert gate["KINDS"] == "exact,numeric,timing" and gate["BRIEF"] and gate["REPORT"]
        assert all(s.get("rc", 0) == 0 for s in jobs[label]["steps"]), "drift does not fail the job"
        assert {"uses": "actions/upload-artifact"}.items() <= jobs[label]["steps"][-1].items()
    assert [target for target, _ in jobs["tpu"]["make"]] == ["measure"]
    assert jobs["tpu"]["steps"][-1]["rc"] != 0 and not (tmp_path / "artifacts" / "measured-tpu").exists()


def test_dry_run_one_pull_request_merges_every_run_that_came_back(tmp_path):
    jobs = dry_run(tmp_path, fails={"tpu"}, drifts={"cpu"})
    propose = jobs["propose"]
    fleet = propose["temp"] / "fleet"
    assert propose["make"] == [
        ("merge", {"FROM": str(fleet / "measured-gpu" / "run"), "ONLY": "kv_cache"}),
        ("merge", {"FROM": str(fleet / "measured-cpu" / "run"), "ONLY": "kv_cache"}),
    ]
    assert all(s.get("rc", 0) == 0 for s in propose["steps"])
    (pr,) = [s for s in propose["steps"] if s.get("uses") == "peter-evans/create-pull-request"]
    body = Path(pr["with"]["body-path"]).read_text(encoding="utf-8")
    assert body.splitlines()[0] == "Measured on: gpu, cpu. Not measured: tpu."
    for label in ("gpu", "cpu"):
        run = jobs[label]["make"][0][1]["OUT"]
        section = body.split(f"## {label}\n", 1)[1].split("\n## ", 1)[0]
        assert f"````text\ngate report for {run}\n````" in section
    assert "The drift gate passed." in body.split("## gpu")[1].split("## cpu")[0]
    assert "The drift gate did not pass (exit 2)." in body.split("## cpu")[1]
    assert "No run came back" in body.split("## tpu")[1] and "did not bring" not in body
    assert "measured=gpu, cpu" in (propose["temp"] / "output").read_text(encoding="utf-8")


def test_dry_run_a_refused_merge_is_reported_and_the_others_go_in(tmp_path):
    jobs = dry_run(tmp_path, refused={"gpu"})
    propose = jobs["propose"]
    merged = [Path(args["FROM"]).parent.name for _, args in propose["make"]]
    assert merged == ["measured-gpu", "measured-cpu", "measured-tpu"], "a refused merge stops no other"
    (pr,) = [s for s in propose["steps"] if s.get("uses") == "peter-evans/create-pull-request"]
    body = Path(pr["with"]["body-path"]).read_text(encoding="utf-8")
    assert body.splitlines()[0] == "Measured on: gpu, cpu, tpu. Not measured: none."
    assert "did not bring this run in (exit 2)" in body.split("## gpu")[1].split("## cpu")[0]
    assert "did not bring" not in body.split("## cpu")[1]


def test_dry_run_without_any_run_fails_and_says_so(tmp_path):
    jobs = dry_run(tmp_path, fails={"gpu", "cpu", "tpu"})
    propose = jobs["propose"]
    assert propose["make"] == [] and propose["steps"][-1]["rc"] != 0
    assert "no runner label produced a run" in propose["steps"][-1]["log"]
    summary = (propose["temp"] / "summary").read_text(encoding="utf-8")
    assert summary.splitlines()[0] == "Measured on: none. Not measured: gpu, cpu, tpu."
