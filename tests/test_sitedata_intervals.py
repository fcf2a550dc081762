"""A timing declared with its 95 % interval: the names of its columns, what meta.json
records of it, what a reader refuses, and how the drift gate holds a rerun to it."""

from __future__ import annotations

import json

import pytest

from sitedata import Result, SchemaError, read_experiment, write_experiment
from sitedata.compare import Declared, compare_experiment
from sitedata.policies import EXACT, TIMING
from sitedata.read import DataError
from sitedata.schema import Column, Table, interval_columns, interval_names
from tests.conftest import PROVENANCE


def test_the_bounds_go_before_the_unit():
    assert interval_names("step_ms") == ("step_low_ms", "step_high_ms", "step_samples")
    assert interval_names("start_bandwidth_gb_s") == (
        "start_bandwidth_low_gb_s",
        "start_bandwidth_high_gb_s",
        "start_bandwidth_samples",
    )
    assert interval_names("rate_tok_s") == ("rate_low_tok_s", "rate_high_tok_s", "rate_samples")
    assert interval_names("ridge_flops_per_byte")[:2] == ("ridge_low_flops_per_byte", "ridge_high_flops_per_byte")
    assert interval_names("matmul_gflop_s")[:2] == ("matmul_low_gflop_s", "matmul_high_gflop_s")
    assert interval_names("fraction_of_floor") == (
        "fraction_of_floor_low",
        "fraction_of_floor_high",
        "fraction_of_floor_samples",
    )
    assert interval_names("_ms") == ("_ms_low", "_ms_high", "_ms_samples")  # no stem: nothing to put the bounds before


def test_interval_columns_declares_a_median_its_bounds_and_its_samples():
    median, low, high, samples = interval_columns("step_ms", "ms", "decode step")
    assert (median.name, low.name, high.name, samples.name) == (
        "step_ms",
        "step_low_ms",
        "step_high_ms",
        "step_samples",
    )
    assert median.as_meta()["noise"] == {"interval": ["step_low_ms", "step_high_ms"], "samples": "step_samples"}
    assert median.label == "decode step" and low.unit == high.unit == "ms" and samples.unit == "samples"
    assert all(c.policy is TIMING for c in (median, low, high, samples))
    # a second timing of the same row may leave the count to the first
    assert [c.name for c in interval_columns("other_ms", "ms", samples=False)] == [
        "other_ms",
        "other_low_ms",
        "other_high_ms",
    ]
    assert interval_columns("other_ms", "ms", samples=False)[0].as_meta()["noise"] == {
        "interval": ["other_low_ms", "other_high_ms"]
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {"interval": ("a_low_ms",)},  # not a pair
        {"interval": ("a_ms", "b_ms")},  # names itself
        {"interval": ("a_low_ms", "a_high_ms"), "spread": "s_ms"},  # two kinds of noise
        {"samples": "a_samples"},  # samples of no interval
    ],
)
def test_a_column_refuses_noise_that_cannot_be(kwargs):
    with pytest.raises(SchemaError):
        Column("a_ms", "ms", policy=TIMING, **kwargs)


def test_noise_is_for_timings_and_in_the_same_table():
    with pytest.raises(SchemaError, match="only a timing has noise"):
        Column("a_ms", "ms", policy=EXACT, interval=("a_low_ms", "a_high_ms"))
    with pytest.raises(SchemaError, match="no timing column of it"):
        Table("t", "T", (Column("a_ms", "ms", policy=TIMING, interval=("a_low_ms", "a_high_ms")),))


TABLE = Table("t", "T", (Column("n"), *interval_columns("step_ms", "ms", "step")))


def _write(root, name: str, rows: list[dict]):
    write_experiment(root, name, Result(tables={"t": rows}), tables=(TABLE,), values=(), provenance=PROVENANCE)
    return read_experiment(root, name)


def _row(n: int, median: float, low: float, high: float, samples: int = 8) -> dict:
    return {"n": n, "step_ms": median, "step_low_ms": low, "step_high_ms": high, "step_samples": samples}


def test_a_reader_refuses_an_interval_that_names_a_column_the_table_lacks(tmp_path):
    exp = _write(tmp_path, "e", [_row(1, 10.0, 9.0, 11.0)])
    meta = json.loads((exp.folder / "meta.json").read_text())
    meta["tables"]["t"]["columns"][1]["noise"]["interval"] = ["step_low_ms", "nowhere_ms"]
    (exp.folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="noise names no other column"):
        read_experiment(tmp_path, "e")
    meta["tables"]["t"]["columns"][1]["noise"]["interval"] = "step_low_ms"  # not a pair
    (exp.folder / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="noise names no other column"):
        read_experiment(tmp_path, "e")


def test_the_gate_holds_a_median_within_its_runs_intervals_and_leaves_the_bounds_alone(tmp_path):
    old = _write(tmp_path / "old", "e", [_row(1, 100.0, 99.0, 101.0, 6), _row(2, 100.0, 99.0, 101.0, 6)])
    # 3 x the wider interval (4 ms) + 10 % of 100 = 22 ms: 121 is within, 123 is not;
    # the bounds and the sample counts move freely
    new = _write(tmp_path / "new", "e", [_row(1, 121.0, 119.0, 123.0, 40), _row(2, 123.0, 122.0, 124.0, 7)])
    code = Declared(PROVENANCE["title"], (TABLE,), (), PROVENANCE["parameters"], PROVENANCE["dtype"])
    found = {(f.row, f.column): f for f in compare_experiment(old, new, code=code)}
    assert found[(0, "step_ms")].verdict == "ok"
    assert found[(0, "step_ms")].tolerance == "±22 (3×spread + 10%)"
    assert found[(1, "step_ms")].verdict == "drift"
    for column in ("step_low_ms", "step_high_ms", "step_samples"):
        assert found[(0, column)].verdict == "not compared"
        assert found[(0, column)].reason == "the noise of step_ms, held within it"


def test_a_value_and_its_interval_are_declared_at_once():
    from sitedata.intervals import interval_values
    from sitedata.schema import Value

    speedup, low, high = interval_values("speedup", "x", description="this many times faster")
    assert [v.name for v in (speedup, low, high)] == ["speedup", "speedup_low", "speedup_high"]
    assert {v.unit for v in (speedup, low, high)} == {"x"} and {v.policy for v in (speedup, low, high)} == {TIMING}
    assert (speedup.description, low.description, high.description) == (
        "this many times faster",
        "95 % interval of speedup, low",
        "95 % interval of speedup, high",
    )
    floor = interval_values("floor_ms", "ms", policy=EXACT, bounds=("at the high bandwidth", "at the low"))
    assert [v.name for v in floor] == ["floor_ms", "floor_low_ms", "floor_high_ms"]  # the unit stays last
    assert floor[1] == Value("floor_low_ms", "ms", policy=EXACT, description="at the high bandwidth")
    assert [v.name for v in interval_values("dispatch_us", "µs")] == [
        "dispatch_us",
        "dispatch_low_us",
        "dispatch_high_us",
    ]
