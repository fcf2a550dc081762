"""The drift gate: regenerate, compare by column kind, fail loudly and only on drift."""

import csv
import json
import shutil

import pytest

from measure.check import run_check
from measure.compare import compare_cell


@pytest.fixture
def committed(smoke_data, tmp_path):
    """A private copy of smoke-run data standing in for the committed site_data."""
    src = smoke_data / "cache_size"
    dest = tmp_path / "committed"
    shutil.copytree(src, dest / "cache_size")
    return dest


def _check(committed, tmp_path, regenerated=None, kinds=("exact", "numeric")):
    report = tmp_path / "report.json"
    rc = run_check(
        only="cache_size",
        committed=committed,
        kinds=kinds,
        report=report,
        docs=None,
        regenerated=regenerated,
        quiet=True,
    )
    return rc, json.loads(report.read_text())


def _edit_csv(path, row, column, fn):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    rows[row][column] = fn(rows[row][column])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def test_unperturbed_data_passes_after_a_real_regeneration(committed, tmp_path):
    rc, report = _check(committed, tmp_path)
    assert rc == 0 and report["passed"]
    assert report["counts"]["ok"] > 20


def test_perturbed_exact_value_fails_and_is_named(committed, tmp_path):
    regenerated = tmp_path / "regen"
    shutil.copytree(committed, regenerated)
    _edit_csv(committed / "cache_size" / "measured.csv", 1, "measured_bytes", lambda v: str(int(v) + 2))
    rc, report = _check(committed, tmp_path, regenerated)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert (bad["table"], bad["row"], bad["column"], bad["kind"]) == ("measured", 1, "measured_bytes", "exact")


def test_numeric_within_tolerance_passes_beyond_fails(committed, tmp_path):
    regenerated = tmp_path / "regen"
    shutil.copytree(committed, regenerated)
    path = committed / "cache_size" / "attention_variants.csv"
    _edit_csv(path, 1, "fraction_of_mha", lambda v: repr(float(v) * (1 + 1e-5)))
    assert _check(committed, tmp_path, regenerated)[0] == 0
    _edit_csv(path, 1, "fraction_of_mha", lambda v: repr(float(v) * 1.01))
    rc, report = _check(committed, tmp_path, regenerated)
    assert rc == 1
    assert [f["column"] for f in report["findings"] if f["verdict"] == "drift"] == ["fraction_of_mha"]


def test_timing_from_other_hardware_is_not_comparable_not_failed(committed, tmp_path):
    regenerated = tmp_path / "regen"
    shutil.copytree(committed, regenerated)
    meta_path = committed / "cache_size" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["device"]["id"] = "cpu:Some Other CPU:64threads"
    meta_path.write_text(json.dumps(meta))
    _edit_csv(committed / "cache_size" / "measured.csv", 0, "allocator_growth_bytes", lambda v: "999")
    rc, report = _check(committed, tmp_path, regenerated, kinds=("exact", "numeric", "timing"))
    assert rc == 0
    nc = [f for f in report["findings"] if f["verdict"] == "not comparable"]
    assert nc and all(f["kind"] == "timing" and "Some Other CPU" in f["reason"] for f in nc)


def test_stale_code_hash_fails(committed, tmp_path):
    regenerated = tmp_path / "regen"
    shutil.copytree(committed, regenerated)
    meta_path = committed / "cache_size" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["code_hash"] = "0000000000000000"
    meta_path.write_text(json.dumps(meta))
    rc, report = _check(committed, tmp_path, regenerated)
    assert rc == 1 and [f["verdict"] for f in report["findings"] if f["verdict"] != "not comparable"] == ["stale"]


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
    assert {(f["table"], f["verdict"]) for f in findings if f["verdict"] != "not comparable"} == {
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
    regenerated = tmp_path / "regen"
    shutil.copytree(committed, regenerated)
    meta_path = committed / "cache_size" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["values"]["seven_b_bytes_per_token"]["value"] += 1
    meta_path.write_text(json.dumps(meta))
    rc, report = _check(committed, tmp_path, regenerated)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert (bad["table"], bad["column"]) == ("values", "seven_b_bytes_per_token")
