"""The forge's workflows: valid for actionlint (pinned, from PyPI), and each doing its
one job: the tests on every push and pull request, the site deployed from main, and a
hand-started GPU measurement that proposes its data with the drift gate's report."""

from __future__ import annotations

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


def test_the_gpu_measurement_proposes_its_data_with_the_gate_report():
    wf = load("measure.yml")
    assert list(wf[True]) == ["workflow_dispatch"]
    job = wf["jobs"]["measure"]
    assert job["runs-on"] == ["self-hosted", "gpu"]
    script = runs(wf)
    order = [script.index(s) for s in ("make measure", "measure check --regenerated", "make merge")]
    assert order == sorted(order), "measure, then the gate, then bring the data in"
    pr = next(s for s in steps(wf) if s.get("uses", "").startswith("peter-evans/create-pull-request"))
    assert pr["with"]["add-paths"] == "site_data" and "body.md" in pr["with"]["body-path"]
