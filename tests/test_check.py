"""The drift gate: each cell compared where its scope says it reproduces, by its rule;
fails loudly on drift, never on hardware it cannot compare, never passes on nothing."""

import json
import shutil

import pytest

from measure.check import run_check
from sitedata.compare import compare_cell
from tests.conftest import edit_table

INTEL = {"id": "cpu:Intel(R) Xeon(R) Platinum 8488C:2threads", "type": "cpu", "cpu": "Intel Xeon", "torch_threads": 2}
H200 = {"id": "cuda:NVIDIA H200", "type": "cuda", "gpu": "NVIDIA H200"}


@pytest.fixture
def committed(smoke_data, tmp_path):
    """Private copies of smoke-run data: one standing in for the committed site_data, one
    for a regeneration on this machine (identical until a test changes one of them)."""
    for name in ("cache_size", "kv_cache"):
        shutil.copytree(smoke_data / name, tmp_path / "committed" / name)
        shutil.copytree(smoke_data / name, tmp_path / "regen" / name)
    return tmp_path / "committed"


def _check(committed, tmp_path, regenerated=True, kinds=("exact", "numeric"), only="cache_size"):
    report = tmp_path / "report.json"
    rc = run_check(
        only=only,
        committed=committed,
        kinds=kinds,
        report=report,
        docs=None,
        regenerated=tmp_path / "regen" if regenerated else None,
        quiet=True,
    )
    return rc, json.loads(report.read_text())


def _set_cell(folder, table, row, column, value):
    def edit(rows):
        rows[row + 1][rows[0].index(column)] = value(rows[row + 1][rows[0].index(column)])

    edit_table(folder, table, edit)


def _move_committed_run(folder, device, dtype="float32"):
    meta = json.loads((folder / "meta.json").read_text())
    meta["device"], meta["dtype"] = device, dtype
    (folder / "meta.json").write_text(json.dumps(meta))


def _drifted(report):
    return [(f["table"], f["row"], f["column"]) for f in report["findings"] if f["verdict"] == "drift"]


def test_unperturbed_data_passes_after_a_real_regeneration(committed, tmp_path):
    rc, report = _check(committed, tmp_path, regenerated=False)
    assert rc == 0 and report["passed"]
    assert report["coverage"]["compared"] > 20


def test_perturbed_exact_value_fails_and_is_named(committed, tmp_path):
    _set_cell(committed / "cache_size", "measured", 1, "measured_bytes", lambda v: str(int(v) + 2))
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert (bad["table"], bad["row"], bad["column"], bad["compare"]) == ("measured", 1, "measured_bytes", "exact")


def test_numeric_within_tolerance_passes_beyond_fails(committed, tmp_path):
    folder = committed / "cache_size"
    _set_cell(folder, "attention_variants", 1, "fraction_of_mha", lambda v: repr(float(v) * (1 + 1e-5)))
    assert _check(committed, tmp_path)[0] == 0
    _set_cell(folder, "attention_variants", 1, "fraction_of_mha", lambda v: repr(float(v) * 1.01))
    rc, report = _check(committed, tmp_path)
    assert rc == 1 and _drifted(report) == [("attention_variants", 1, "fraction_of_mha")]


def _plant_one_change_per_scope(folder):
    """kv_cache holds all three scopes: bytes (any), token ids (device), times (machine)."""
    _set_cell(folder, "head_step", 0, "recompute_scores_bytes", lambda v: str(int(v) + 4))  # any
    _set_cell(folder, "generated_tokens", 0, "cached_id", lambda v: str(int(v) + 1))  # device
    _set_cell(folder, "head_step", 0, "cached_ms", lambda v: repr(float(v) * 50))  # machine


ALL = ("exact", "numeric", "timing")


def test_on_the_same_machine_every_scope_is_compared_and_caught(committed, tmp_path):
    _plant_one_change_per_scope(committed / "kv_cache")
    rc, report = _check(committed, tmp_path, kinds=ALL, only="kv_cache")
    assert rc == 1
    assert _drifted(report) == [
        ("generated_tokens", 0, "cached_id"),
        ("head_step", 0, "cached_ms"),
        ("head_step", 0, "recompute_scores_bytes"),
    ]
    assert report["coverage"]["not_comparable"] == 0


def test_committed_on_another_cpu_model_compares_all_but_machine_cells(committed, tmp_path):
    _move_committed_run(committed / "kv_cache", INTEL)
    rc, report = _check(committed, tmp_path, kinds=ALL, only="kv_cache")
    assert rc == 0, report["findings"][:3]
    cov = report["coverage"]
    assert cov["compared_by_scope"].keys() == {"any", "device"}
    assert cov["not_comparable"] > 0 and list(cov["not_comparable_by_reason"]) == [
        "reproduces on the same machine only"
    ]
    nc = [f for f in report["findings"] if f["verdict"] == "not comparable"]
    assert all(f["scope"] == "machine" and "Intel" in f["reason"] for f in nc)
    # A change in each scope: the machine one is not ours to judge, the others are caught.
    _plant_one_change_per_scope(committed / "kv_cache")
    rc, report = _check(committed, tmp_path, kinds=ALL, only="kv_cache")
    assert rc == 1
    assert _drifted(report) == [("generated_tokens", 0, "cached_id"), ("head_step", 0, "recompute_scores_bytes")]


def test_committed_on_a_gpu_still_compares_every_any_machine_cell(committed, tmp_path):
    _move_committed_run(committed / "kv_cache", H200, dtype="float16")
    rc, report = _check(committed, tmp_path, kinds=ALL, only="kv_cache")
    assert rc == 0
    cov = report["coverage"]
    assert cov["compared_by_scope"].keys() == {"any"} and cov["compared"] > 10
    assert set(cov["not_comparable_by_reason"]) == {
        "reproduces on the same device type and dtype only",
        "reproduces on the same machine only",
    }
    _plant_one_change_per_scope(committed / "kv_cache")
    rc, report = _check(committed, tmp_path, kinds=ALL, only="kv_cache")
    assert rc == 1 and _drifted(report) == [("head_step", 0, "recompute_scores_bytes")]


def test_a_check_that_compares_nothing_fails(committed, tmp_path, capsys):
    _move_committed_run(committed / "kv_cache", INTEL)
    rc, report = _check(committed, tmp_path, kinds=("timing",), only="kv_cache")
    assert rc == 1 and not report["passed"] and report["coverage"]["compared"] == 0
    assert "no cell could be compared here" in capsys.readouterr().out


def test_stale_code_hash_fails(committed, tmp_path):
    meta_path = committed / "cache_size" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["code_hash"] = "0000000000000000"
    meta_path.write_text(json.dumps(meta))
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    assert [f["verdict"] for f in report["findings"] if f["verdict"] not in ("not comparable", "not compared")] == [
        "stale"
    ]


def test_committed_data_that_does_not_verify_fails_with_its_reason(committed, tmp_path):
    path = committed / "cache_size" / "measured.csv"
    path.write_text(path.read_text().rsplit("\n", 2)[0] + "\n")
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "invalid"]
    assert "measured.csv" in bad["reason"] and "make measure ONLY=cache_size" in bad["reason"]


def test_page_table_cross_check(committed, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "p.md").write_text("{{ table('cache_size.measured') }} {{ table('cache_size.nowhere') }}\n")
    report = tmp_path / "r.json"
    rc = run_check(
        only="cache_size",
        committed=committed,
        kinds=("exact",),
        report=report,
        docs=docs,
        regenerated=committed,
        quiet=True,
    )
    findings = json.loads(report.read_text())["findings"]
    assert rc == 1
    assert {(f["table"], f["verdict"]) for f in findings if f["verdict"] in ("unknown", "unused")} == {
        ("nowhere", "unknown"),
        ("bytes_per_token", "unused"),
        ("attention_variants", "unused"),
        ("context_7b", "unused"),
    }


def test_timing_tolerance_follows_the_measured_spread():
    # committed 10 ms with spread 1 ms: allowed 3 x 1 + 10% x 10 = 4 ms
    assert compare_cell("timing", "10", "13.9", spread_old=1.0, spread_new=0.5)[0]
    assert not compare_cell("timing", "10", "14.1", spread_old=1.0, spread_new=0.5)[0]
    # noisier new run widens it: 3 x 2 + 1 = 7 ms
    assert compare_cell("timing", "10", "16.9", spread_old=1.0, spread_new=2.0)[0]
    # no spread of its own: the table's relative noise, at least 10%
    assert compare_cell("timing", "100", "109", table_rel_noise=0.01)[0]
    assert not compare_cell("timing", "100", "111", table_rel_noise=0.01)[0]
    assert compare_cell("timing", "100", "129", table_rel_noise=0.1)[0]


def test_perturbed_named_value_fails(committed, tmp_path):
    meta_path = committed / "cache_size" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["values"]["seven_b_bytes_per_token"]["value"] += 1
    meta_path.write_text(json.dumps(meta))
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert (bad["table"], bad["column"]) == ("values", "seven_b_bytes_per_token")
