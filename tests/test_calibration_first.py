"""A run's calibration row is written before the first experiment that names its run, and
a merge's rows before its experiments (measure/calibration_folder.py): a stop or an
error anywhere can leave a row no experiment names yet, never an experiment naming a run
without a row; and a failed end calibration is told by what the folder holds."""

import errno
from types import SimpleNamespace

import pytest
import torch

from measure import calibration_folder as folder
from measure import merge as merging
from measure.calibration_record import RunRecord
from measure.errors import UserError
from measure.lab import calibration
from measure.lab.provenance import code_hash
from sitedata import read_experiment
from tests.conftest import PROVENANCE
from tests.test_calibration import _cal, _experiment, _runs
from tests.test_cli import SMOKE, run_cli


def _record(root, run_id: str) -> RunRecord:
    model = SimpleNamespace(describe=lambda: PROVENANCE["model"])
    plan = calibration.plan("smoke", torch.device("cpu"))
    machine = PROVENANCE["device"]
    return RunRecord(
        root, _cal(run_id), model=model, machine=machine, dtype="float32", profile="smoke", plan=plan, log=print
    )


def _named_without_row(root) -> set[str]:
    return folder.runs_named(root) - {r["run"] for r in folder.rows_in(root)}


def test_the_row_comes_before_the_first_experiment_and_stays_after_a_stop(tmp_path):
    _experiment(tmp_path, "quality", "r1")
    folder.record(tmp_path, _cal("r1"), _cal("r1", moment="end"), PROVENANCE)
    record = _record(tmp_path, "r2")
    record.before_first_experiment()
    rows = {r["run"]: r for r in _runs(tmp_path)}
    assert sorted(rows) == ["r1", "r2"] and rows["r2"]["end_step_ms"] == ""  # though nothing names r2 yet
    _experiment(tmp_path, "kv_cache", "r2")
    assert _named_without_row(tmp_path) == set()
    record.stopped()
    assert [r["run"] for r in _runs(tmp_path)] == ["r1", "r2"]


def test_a_row_written_first_for_a_run_that_then_wrote_nothing_goes_at_its_stop(tmp_path):
    _experiment(tmp_path, "quality", "r1")
    folder.record(tmp_path, _cal("r1"), None, PROVENANCE)
    record = _record(tmp_path, "r2")
    record.before_first_experiment()
    record.stopped()  # stopped before its experiment was swapped in
    assert [r["run"] for r in _runs(tmp_path)] == ["r1"]


def test_an_end_calibration_that_cannot_be_written_is_told_by_what_is_on_disk(tmp_path, monkeypatch):
    record = _record(tmp_path, "r2")
    record.before_first_experiment()
    _experiment(tmp_path, "kv_cache", "r2")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(folder, "write_experiment", full)
    with pytest.raises(UserError) as e:
        record.finished(_cal("r2", moment="end"))
    assert str(e.value) == (
        f"the end calibration of run r2 could not be written to {tmp_path} ([Errno 28] No space left on device); "
        f"the experiments written are whole, its row in {tmp_path}/calibration holds the start calibration only "
        "(its end columns are empty)"
    )


def test_a_merge_stopped_between_its_experiments_leaves_no_run_without_a_row(tmp_path, monkeypatch):
    gpu, site = tmp_path / "gpu", tmp_path / "site_data"
    for name in ("batching", "kv_cache"):
        _experiment(gpu, name, "gpu1", code_hash=code_hash(name))
    folder.record(gpu, _cal("gpu1"), _cal("gpu1", moment="end"), PROVENANCE)
    _experiment(site, "kv_cache", "cpu1")
    folder.record(site, _cal("cpu1"), None, PROVENANCE)
    calls = []

    def second_fails(root, name, files):
        calls.append(name)
        if name == "kv_cache":
            raise OSError(errno.EIO, "Input/output error")
        return write_files(root, name, files)

    write_files = merging.write_files
    monkeypatch.setattr(merging, "write_files", second_fails)
    with pytest.raises(UserError, match="merging kv_cache into .* failed"):
        merging.merge(source=gpu, into=site)
    assert calls == ["batching", "kv_cache"]
    assert read_experiment(site, "batching").meta["run"]["id"] == "gpu1"
    assert _named_without_row(site) == set()
    assert sorted(r["run"] for r in _runs(site)) == ["cpu1", "gpu1"]


@pytest.mark.smoke
def test_a_run_killed_after_its_first_experiment_has_its_calibration_row(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("run", "--out", str(out), *SMOKE, SITEDATA_FAULT="returned:kill")
    assert proc.returncode == -9, proc.stderr[-2000:]
    run = read_experiment(out, "chapter").meta["run"]["id"]
    [row] = _runs(out)
    assert row["run"] == run and row["start_step_ms"] and row["end_step_ms"] == ""
