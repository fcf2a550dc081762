"""The calibration of every run (measure/lab/calibration.py) and its folder
(measure/calibration_folder.py): one row per run that an experiment names, kept while
one does; the runner's, the merge's, the drift gate's and the home page's use of it.
One real smoke run on the tiny model; every other calibration here is made up."""

import json
import shutil

import pytest
import torch

from measure import calibration_folder as folder
from measure import registry
from measure.calibration_record import RunRecord
from measure.check import _pages_findings
from measure.errors import UserError
from measure.lab import calibration
from measure.lab.calibration import DRIFT_LIMIT, Calibration, drift
from measure.lab.medians import Estimate
from measure.lab.provenance import code_hash
from measure.merge import merge
from sitedata import read_experiment
from tests.conftest import PROVENANCE, write_data


def _cal(run_id: str, *, copy_s: float = 0.01, step_s: float = 0.05, moment: str = "start") -> Calibration:
    spread = (0.99, 1.0, 1.0, 1.0, 1.01, 1.02)
    return Calibration(
        run_id=run_id,
        moment=moment,
        copy_bytes=1 << 28,
        copy=Estimate.of([copy_s * f for f in spread], 0.03),
        step=Estimate.of([step_s * f for f in spread], 0.03),
        sweep={"missed": []},
        seconds=2.0,
    )


def _experiment(root, name: str, run_id: str | None, **provenance):
    run = {"run": _cal(run_id).provenance()} if run_id else {}
    return write_data(root, name, {"t": [{"n": 1}]}, **run, **provenance)


def _runs(root) -> list[dict]:
    return read_experiment(root, "calibration").rows("runs")


def test_the_buffer_exceeds_the_last_level_cache(tmp_path, monkeypatch):
    for index, (level, size) in enumerate([(1, "32K"), (2, "512K"), (3, "96M")]):
        (tmp_path / f"index{index}").mkdir()
        (tmp_path / f"index{index}" / "level").write_text(f"{level}\n")
        (tmp_path / f"index{index}" / "size").write_text(f"{size}\n")
    assert calibration.last_level_cache_bytes(tmp_path) == 96 << 20
    assert calibration.last_level_cache_bytes(tmp_path / "absent") is None
    cpu = torch.device("cpu")
    monkeypatch.setattr(calibration, "last_level_cache_bytes", lambda: 96 << 20)
    assert calibration.plan("cpu", cpu).copy_bytes == 384 << 20
    monkeypatch.setattr(calibration, "last_level_cache_bytes", lambda: None)
    assert calibration.plan("full", cpu).copy_bytes == 256 << 20  # unreadable: 256 MiB
    assert calibration.plan("smoke", cpu).budget_s < calibration.plan("cpu", cpu).budget_s


def test_the_provenance_of_a_run_and_its_drift():
    start, end = _cal("r1"), _cal("r1", copy_s=0.0125, step_s=0.06, moment="end")
    run = start.provenance()
    assert run["id"] == "r1" and run["bandwidth_gb_s"] == pytest.approx(2 * (1 << 28) / 0.01 / 1e9)
    assert run["bandwidth_low_gb_s"] < run["bandwidth_gb_s"] < run["bandwidth_high_gb_s"]  # a slower copy is lower
    assert run["reference_step_low_ms"] <= run["reference_step_ms"] == 50.0 <= run["reference_step_high_ms"]
    d = drift(start, end)
    assert d["step_drift"] == pytest.approx(0.2) and d["bandwidth_drift"] == pytest.approx(-0.2) and d["drifted"]
    assert not drift(start, _cal("r1", step_s=0.05 * (1 + DRIFT_LIMIT / 2), moment="end"))["drifted"]
    assert drift(start, None) == {"step_drift": None, "bandwidth_drift": None, "drifted": None}
    assert calibration.new_run_id()[:2] == "20" and len(calibration.new_run_id().split("-")[1]) == 8


def test_rows_are_kept_while_an_experiment_names_their_run(tmp_path):
    _experiment(tmp_path, "kv_cache", "r1")
    _experiment(tmp_path, "cache_size", "r1")
    folder.record(tmp_path, _cal("r1"), _cal("r1", moment="end"), PROVENANCE)
    _experiment(tmp_path, "kv_cache", "r2")  # re-measured by run r2, which stopped before its end
    folder.record(tmp_path, _cal("r2"), None, PROVENANCE)
    rows = _runs(tmp_path)
    assert [r["run"] for r in rows] == ["r1", "r2"]
    assert rows[1]["end_step_ms"] == rows[1]["step_drift"] == rows[1]["drifted"] == ""  # not measured
    assert float(rows[0]["end_step_ms"]) == 50.0 and rows[0]["drifted"] == "false"
    _experiment(tmp_path, "cache_size", "r3")  # nothing names r1 any more
    folder.record(tmp_path, _cal("r3"), _cal("r3", moment="end"), PROVENANCE)
    assert [r["run"] for r in _runs(tmp_path)] == ["r2", "r3"]
    assert read_experiment(tmp_path, "calibration").meta["values"]["drift_limit"]["value"] == DRIFT_LIMIT


def test_a_run_that_wrote_nothing_leaves_the_folder_as_it_was(tmp_path):
    _experiment(tmp_path, "kv_cache", "r1")
    folder.record(tmp_path, _cal("r1"), None, PROVENANCE)
    before = (tmp_path / "calibration" / "meta.json").read_bytes()
    record = RunRecord(tmp_path, _cal("r2"), model=None, machine={}, dtype="", profile="", plan=None, log=print)
    record.stopped()
    assert (tmp_path / "calibration" / "meta.json").read_bytes() == before


def test_a_merge_keeps_the_runs_of_both(tmp_path):
    """A run of the same key written elsewhere brings its calibration; the target's rows
    stay for the experiments the merge did not replace, and a row nothing names any more
    goes. (A run of another key goes beside them, under runs/: tests/test_runs.py.)"""
    other, site = tmp_path / "other", tmp_path / "site_data"
    for name in ("kv_cache", "batching"):
        _experiment(other, name, "new1", code_hash=code_hash(name))
    folder.record(other, _cal("new1"), _cal("new1", moment="end"), PROVENANCE)
    _experiment(site, "kv_cache", "cpu1")
    _experiment(site, "quality", "cpu2")
    folder.record(site, _cal("cpu1"), None, PROVENANCE)
    folder.record(site, _cal("cpu2"), _cal("cpu2", moment="end"), PROVENANCE)
    lines = merge(source=other, into=site)
    assert lines[-1] == f"calibration: 2 runs kept, 1 of them from {other}"
    rows = {r["run"]: r for r in _runs(site)}
    assert sorted(rows) == ["cpu2", "new1"]  # cpu1: kv_cache replaced
    assert not (site / "runs").exists()


def test_a_damaged_calibration_refuses_the_whole_merge(tmp_path):
    gpu, site = tmp_path / "gpu", tmp_path / "site_data"
    _experiment(gpu, "kv_cache", "gpu1", code_hash=code_hash("kv_cache"))
    folder.record(gpu, _cal("gpu1"), None, PROVENANCE)
    _experiment(site, "kv_cache", "cpu1")
    before = (site / "kv_cache" / "meta.json").read_bytes()
    runs = gpu / "calibration" / "runs.csv"
    runs.write_text(runs.read_text().replace("gpu1", "gpu2"))
    damaged = "nothing merged: gpu/calibration/runs.csv: content differs .*; measure that run again$"
    with pytest.raises(UserError, match=damaged):
        merge(source=gpu, into=site)
    assert (site / "kv_cache" / "meta.json").read_bytes() == before and not (site / "calibration").exists()


def test_the_gate_and_the_home_page_know_the_calibration_is_no_experiment(tmp_path):
    from sitekit.rendering.markers import PageContext
    from sitekit.rendering.pagedata import SiteData
    from sitekit.sources.provenance import experiments

    assert "calibration" not in registry.EXPERIMENTS
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "methods.md").write_text("{{ table('calibration.runs') }}\n{{ table('calibration.nothing') }}\n")
    found = {(f.experiment, f.table): f.verdict for f in _pages_findings(["cache_size"], docs)}
    assert found.get(("calibration", "runs")) is None and found[("calibration", "nothing")] == "unknown"
    (docs / "methods.md").write_text("")
    assert not [f for f in _pages_findings(["cache_size"], docs) if f.experiment == "calibration"]

    _experiment(tmp_path / "data", "kv_cache", "r1")
    folder.record(tmp_path / "data", _cal("r1"), None, PROVENANCE)
    html = experiments(PageContext(data=SiteData(tmp_path / "data"), page="index.md", url_prefix=""))
    # the name may break at its underscore on a phone, never inside a word
    assert html.count("<tr><td><code>") == 1 and "<code>kv&#95;<wbr>cache</code>" in html and "calibration" not in html


@pytest.mark.smoke
def test_a_smoke_run_calibrates_and_an_unchanged_rerun_does_not(smoke_data, tmp_path, monkeypatch):
    """The one real calibration: two smoke runs (cache_size and kv_cache, each its own run)."""
    smoke_data / "cache_size", smoke_data / "kv_cache"
    root, copy = smoke_data.root, tmp_path / "copy"
    with smoke_data.locked():  # another worker may be writing its smoke run there
        shutil.copytree(root, copy)
    runs = {r["run"]: r for r in _runs(copy)}
    for name in ("cache_size", "kv_cache"):
        run = read_experiment(copy, name).meta["run"]
        row = runs[run["id"]]
        assert float(row["start_bandwidth_gb_s"]) == pytest.approx(run["bandwidth_gb_s"])
        assert float(row["start_step_ms"]) == pytest.approx(run["reference_step_ms"]) and row["end_step_ms"]
        assert int(row["start_step_samples"]) >= 6 and row["model"] == "arch:tiny" and row["profile"] == "smoke"
    meta = read_experiment(copy, "calibration").meta
    assert meta["code_hash"] and meta["parameters"]["copy_bytes"] == calibration.SMOKE_COPY_BYTES

    from measure import runner

    before = (copy / "calibration" / "meta.json").read_bytes()
    monkeypatch.setattr(calibration, "measure", lambda *a, **k: pytest.fail("an unchanged re-run calibrated"))
    outcomes = runner.run_experiments(
        names=["cache_size"], model="arch:tiny", device="cpu", profile="smoke", out=copy, quiet=True, force=False
    )
    assert [o.status for o in outcomes] == ["up to date"]
    assert (copy / "calibration" / "meta.json").read_bytes() == before
    assert json.loads(before)["experiment"] == "calibration"


def test_a_floor_is_the_time_its_bytes_take_at_the_runs_bandwidth():
    """Moving the probe's own bytes takes what its copies took: the median copy, and the
    fastest and slowest of the interval (six samples: the interval is their extremes)."""
    cal = _cal("r", copy_s=0.01)
    floor, low, high = cal.floor_s(cal.moved_bytes)
    assert floor == pytest.approx(0.01) and low == pytest.approx(0.0099) and high == pytest.approx(0.0102)
    assert cal.floor_s(3 * cal.moved_bytes) == pytest.approx((0.03, 0.0297, 0.0306))


def _probed(run_id: str, moment: str = "start") -> Calibration:
    """A made-up calibration with the roofline's probes: a 1 ms read of its 256 MiB, a 5 µs
    operator, and multiplies of a 2 x 3 projection at 1 and 4 rows."""
    spread = (0.99, 1.0, 1.0, 1.0, 1.01, 1.02)
    est = lambda s: Estimate.of([s * f for f in spread], 0.03)  # noqa: E731
    base = _cal(run_id, moment=moment)
    return Calibration(
        **{k: getattr(base, k) for k in ("run_id", "moment", "copy_bytes", "copy", "step", "sweep", "seconds")},
        read=est(1e-3),
        dispatch=est(5e-6),
        matmuls={("float32", 1): est(1e-6), ("float32", 4): est(2e-6)},
        shape=(2, 3),
    )


def test_the_probes_give_the_roofline_and_their_rows():
    cal = _probed("20260101T000000Z-00000001")
    roof = cal.roofline()
    assert roof.bandwidth.value == pytest.approx(2 * (1 << 28) / 0.01)  # a copy moves its bytes twice
    assert roof.read_bandwidth.value == pytest.approx((1 << 28) / 1e-3)
    assert roof.dispatch.value == pytest.approx(5e-6)
    # 2 x rows x 2 x 3 FLOPs: 12 in 1 µs at one row, 48 in 2 µs at four
    assert [(r, c.value) for r, c in roof.ceilings["float32"]] == [(1, pytest.approx(12e6)), (4, pytest.approx(24e6))]
    rows = folder.probe_rows(cal)
    assert [(r["probe"], r["dtype"], r["rows"], r["work"]) for r in rows] == [
        ("copy", "", "", 2 * (1 << 28)),
        ("read", "", "", 1 << 28),
        ("dispatch", "", "", 1),
        ("matmul", "float32", 1, 12),
        ("matmul", "float32", 4, 48),
    ]
    assert folder.probe_rows(_cal("20260101T000000Z-00000002")) == []  # a run measured before the probes


def test_a_runs_probes_are_kept_and_dropped_with_its_row(tmp_path):
    one, two = "20260101T000000Z-00000001", "20260102T000000Z-00000002"
    _experiment(tmp_path, "kv_cache", one)
    folder.record(tmp_path, _probed(one), _probed(one, "end"), PROVENANCE)
    probes = read_experiment(tmp_path, "calibration").rows("roofline")
    assert {(r["run"], r["moment"]) for r in probes} == {(one, "start"), (one, "end")} and len(probes) == 10
    _experiment(tmp_path, "kv_cache", two)  # the experiment now names the second run only
    folder.record(tmp_path, _probed(two), None, PROVENANCE)
    probes = read_experiment(tmp_path, "calibration").rows("roofline")
    assert {(r["run"], r["moment"]) for r in probes} == {(two, "start")}


def test_an_operator_in_module_code_is_the_fixed_cost_the_roofline_charges():
    """With the operator probe, the roofline charges its cost per operator and keeps the
    trivial operator beside it as the floor; its row is per operator (work 1)."""
    base = _probed("20260101T000000Z-00000001")
    spread = (0.99, 1.0, 1.0, 1.0, 1.01, 1.02)
    cal = Calibration(
        **{k: getattr(base, k) for k in Calibration.__dataclass_fields__ if k != "operator"},
        operator=Estimate.of([8e-6 * f for f in spread], 0.03),
    )
    roof = cal.roofline()
    assert roof.dispatch.value == pytest.approx(8e-6) and roof.trivial.value == pytest.approx(5e-6)
    rows = {r["probe"]: r for r in folder.probe_rows(cal)}
    assert rows["operator"]["work"] == 1 and float(rows["operator"]["time_ms"]) == pytest.approx(8e-3)


def test_the_operator_probe_counts_what_it_dispatches():
    from measure.lab.machine_probes import operators
    from measure.lab.op_counting import count_ops

    call, ops = operators(hidden=64, heads=4, device=torch.device("cpu"), dtype=torch.float32, layers=2)
    one, _ = operators(hidden=64, heads=4, device=torch.device("cpu"), dtype=torch.float32, layers=1)
    assert ops == count_ops(call) == 2 * count_ops(one) > 10  # each layer's operators, counted exactly
    call()
    assert calibration.plan("smoke", torch.device("cpu")).operator_layers == 1
    # the settings' other dtype is probed beside the run's: bfloat16 on a CPU, float32 beside float16
    from measure.lab.machine_probes import probed_dtypes

    assert probed_dtypes(torch.float32) == (torch.float32, torch.bfloat16)
    assert probed_dtypes(torch.float16) == (torch.float16, torch.float32)
