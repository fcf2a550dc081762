"""The drift gate: each cell compared where its scope says it reproduces, by its rule;
fails loudly on drift, never on hardware it cannot compare, never passes on nothing."""

import csv
import json
import shutil

import pytest

from measure.check import run_check
from sitedata.cell_compare import compare_cell
from sitedata.keys import run_key
from tests.conftest import AWAITING_MEASUREMENT, edit_table

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
    meta["key"] = run_key(meta)  # the run's key follows its machine and dtype
    (folder / "meta.json").write_text(json.dumps(meta))


def _rows(folder, table):
    with open(folder / f"{table}.csv", newline="") as f:
        return list(csv.DictReader(f))


def _drifted(report):
    return [(f["table"], f["row"], f["column"]) for f in report["findings"] if f["verdict"] == "drift"]


@pytest.mark.smoke
def test_unperturbed_data_passes_after_a_real_regeneration(committed, tmp_path):
    rc, report = _check(committed, tmp_path, regenerated=False)
    assert rc == 0 and report["passed"]
    assert report["coverage"]["compared"] > 20


@pytest.mark.smoke
def test_perturbed_exact_value_fails_and_is_named(committed, tmp_path):
    _set_cell(committed / "cache_size", "measured", 1, "measured_bytes", lambda v: str(int(v) + 2))
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert (bad["table"], bad["row"], bad["column"], bad["compare"]) == ("measured", 1, "measured_bytes", "exact")


@pytest.mark.smoke
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
    # A time moved by more than any spread the smoke run gave it: a run under load can
    # give a microsecond head step an interval ten times its median, so a fixed factor
    # could hide inside it. The move is the median and ten widths of its interval.
    row = _rows(folder, "head_step")[0]
    spread = float(row["cached_high_ms"]) - float(row["cached_low_ms"])
    _set_cell(folder, "head_step", 0, "cached_ms", lambda v: repr(2 * float(v) + 10 * spread))  # machine


ALL = ("exact", "numeric", "timing")


@pytest.mark.smoke
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


@pytest.mark.smoke
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


@pytest.mark.smoke
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


@pytest.mark.smoke
def test_a_check_that_compares_nothing_fails(committed, tmp_path, capsys):
    _move_committed_run(committed / "kv_cache", INTEL)
    rc, report = _check(committed, tmp_path, kinds=("timing",), only="kv_cache")
    assert rc == 1 and not report["passed"] and report["coverage"]["compared"] == 0
    assert "no cell could be compared here" in capsys.readouterr().out


@pytest.mark.smoke
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


@pytest.mark.smoke
def test_committed_data_that_does_not_verify_fails_with_its_reason(committed, tmp_path):
    path = committed / "cache_size" / "measured.csv"
    path.write_text(path.read_text().rsplit("\n", 2)[0] + "\n")
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "invalid"]
    assert "measured.csv" in bad["reason"] and "make measure ONLY=cache_size" in bad["reason"]


@pytest.mark.smoke
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


@pytest.mark.smoke
def test_perturbed_named_value_fails(committed, tmp_path):
    meta_path = committed / "cache_size" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["values"]["seven_b_bytes_per_token"]["value"] += 1
    meta_path.write_text(json.dumps(meta))
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    [bad] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert (bad["table"], bad["column"]) == ("values", "seven_b_bytes_per_token")


# Attacks on the gate through the data it checks: the committed meta.json edited so that a
# changed number is not compared. The gate takes every declaration from the code, so each
# ends in a failing finding naming the lie, and the changed cell is compared all the same.


def _edit_meta(folder, edit):
    path = folder / "meta.json"
    meta = json.loads(path.read_text())
    edit(meta)
    path.write_text(json.dumps(meta, indent=2))


def _column(meta, table, column):
    return next(c for c in meta["tables"][table]["columns"] if c["name"] == column)


def _failing(report):
    return [(f["verdict"], f["table"], f["column"]) for f in report["findings"] if f["verdict"] not in NOT_FAILING]


NOT_FAILING = ("ok", "not comparable", "not compared")


@pytest.mark.smoke
def test_a_column_declared_timing_in_the_data_is_compared_as_the_code_declares(committed, tmp_path):
    folder = committed / "cache_size"
    _set_cell(folder, "attention_variants", 1, "fraction_of_mha", lambda v: repr(float(v) * 1.05))
    _edit_meta(folder, lambda m: _column(m, "attention_variants", "fraction_of_mha").update(compare="timing"))
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    assert _failing(report) == [
        ("invalid", "meta", "attention_variants.fraction_of_mha"),
        ("drift", "attention_variants", "fraction_of_mha"),
    ]
    [lie] = [f for f in report["findings"] if f["verdict"] == "invalid"]
    assert lie["reason"] == (
        "committed/cache_size/meta.json declares column attention_variants.fraction_of_mha compare 'timing', "
        "the code declares 'numeric'"
    )
    [drift] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert (drift["row"], drift["compare"], drift["scope"]) == (1, "numeric", "any")


@pytest.mark.smoke
def test_a_column_declared_machine_scoped_on_another_machine_is_still_compared(committed, tmp_path):
    folder = committed / "cache_size"
    _set_cell(folder, "context_7b", 0, "cache_to_weights", lambda v: repr(float(v) * 1.5))
    _edit_meta(folder, lambda m: _column(m, "context_7b", "cache_to_weights").update(scope="machine"))
    _move_committed_run(folder, INTEL)
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    assert _failing(report) == [
        ("invalid", "meta", "context_7b.cache_to_weights"),
        ("drift", "context_7b", "cache_to_weights"),
    ]
    assert "scope 'machine', the code declares 'any'" in report["findings"][0]["reason"]
    # The machine it claims is provenance: machine-scoped cells go uncompared, nothing else.
    assert set(report["coverage"]["not_comparable_by_reason"]) <= {"reproduces on the same machine only"}


@pytest.mark.smoke
def test_a_run_parameter_changed_in_the_data_hides_no_change(committed, tmp_path):
    folder = committed / "cache_size"
    _set_cell(folder, "context_7b", 0, "cache_bytes", lambda v: str(int(v) * 3 // 2))
    _edit_meta(folder, lambda m: m["parameters"].update(variant_tokens=m["parameters"]["variant_tokens"] + 1))
    rc, report = _check(committed, tmp_path, only="cache_size,kv_cache")
    assert rc == 1
    assert _failing(report) == [("invalid", "meta", "parameters"), ("drift", "context_7b", "cache_bytes")]
    lie = report["findings"][0]
    assert lie["committed"] == {"variant_tokens": 9} and lie["new"] == {"variant_tokens": 8}
    assert "other than the code's Config gives for profile 'smoke'" in lie["reason"]
    assert report["coverage"]["not_comparable"] == 0


@pytest.mark.smoke
@pytest.mark.parametrize(
    "what, delete, subject",
    [
        ("value", lambda f, m: m["values"].pop("seven_b_bytes_per_token"), "values.seven_b_bytes_per_token"),
        ("table", lambda f, m: [m["tables"].pop("context_7b"), (f / "context_7b.csv").unlink()], "context_7b"),
    ],
)
def test_a_value_or_table_deleted_from_the_data_is_missing(committed, tmp_path, what, delete, subject):
    folder = committed / "cache_size"
    _edit_meta(folder, lambda m: delete(folder, m))
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    assert _failing(report) == [("missing", "meta", subject)]
    assert (
        f"has no {what} {subject.removeprefix('values.')}, which the code declares" in report["findings"][0]["reason"]
    )


@pytest.mark.smoke
def test_a_row_deleted_by_a_run_claiming_another_device_still_compares_its_any_scope_cells(committed, tmp_path):
    folder = committed / "cache_size"
    _move_committed_run(folder, H200, dtype="float16")
    edit_table(folder, "attention_variants", lambda rows: rows.pop())
    rc, report = _check(committed, tmp_path)
    assert rc == 1
    [missed] = [f for f in report["findings"] if f["verdict"] == "drift"]
    assert missed["table"] == "attention_variants" and missed["scope"] == "any"
    assert "stand in no committed row" in missed["reason"]


@pytest.mark.smoke
def test_a_dtype_the_code_never_measures_in_on_that_device_is_invalid(committed, tmp_path):
    _move_committed_run(committed / "cache_size", {**INTEL, "type": "cpu"}, dtype="float16")
    rc, report = _check(committed, tmp_path)
    assert rc == 1 and _failing(report) == [("invalid", "meta", "dtype")]


@pytest.mark.smoke
@pytest.mark.parametrize("where", ["/proc/x.json", "{tmp}", "{tmp}/a_file/report.json"])
def test_a_report_that_cannot_be_written_is_one_line_before_any_regeneration(
    committed, tmp_path, monkeypatch, capsys, where
):
    from measure import runner
    from measure.__main__ import main

    (tmp_path / "a_file").write_text("")
    monkeypatch.setattr(
        runner, "run_experiments", lambda **kw: pytest.fail("regenerated before the report was checked")
    )
    rc = main(["check", "--only", "cache_size", "--committed", str(committed), "--report", where.format(tmp=tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: --report")


@pytest.mark.smoke
def test_a_model_described_otherwise_than_its_spec_loads_is_drift(committed, tmp_path):
    _edit_meta(committed / "cache_size", lambda m: m["model"].update(parameters=m["model"]["parameters"] * 10))
    rc, report = _check(committed, tmp_path)
    assert rc == 1 and _failing(report) == [("drift", "meta", "model")]
    assert list(report["findings"][0]["committed"]) == ["parameters"]


def test_the_committed_data_states_what_its_code_declares():
    """No regeneration: every experiment of site_data/ declares its tables, values,
    parameters and dtype as the code that produced it does."""
    from measure import registry
    from measure.check import declared
    from sitedata import read_experiment
    from sitedata.declared import Declared, declaration_findings
    from tests.conftest import REPO

    for name in registry.EXPERIMENTS:
        exp = read_experiment(REPO / "site_data", name)
        code = declared(exp)
        assert isinstance(code, Declared), code
        if name in AWAITING_MEASUREMENT:
            assert declaration_findings(exp, code) != [], f"{name} is measured again: drop it from AWAITING_MEASUREMENT"
        else:
            assert declaration_findings(exp, code) == [], name


@pytest.mark.smoke
def test_the_page_cross_check_judges_only_the_experiments_checked(committed, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    tables = ("measured", "bytes_per_token", "attention_variants", "context_7b")
    uses = " ".join(f"{{{{ table('cache_size.{t}') }}}}" for t in tables)
    (docs / "p.md").write_text(f"{uses} {{{{ table('kv_cache.head_step') }}}}\n")
    rc = run_check(
        only="cache_size",
        committed=committed,
        kinds=("exact",),
        report=None,
        docs=docs,
        regenerated=committed,
        quiet=True,
    )
    assert rc == 0  # kv_cache.head_step is judged when kv_cache is checked, not here
