"""The roofline model (measure/lab/roofline.py) against cases worked by hand."""

from __future__ import annotations

import math

import pytest

from measure.lab.roofline import Prediction, Rate, Roofline, measured_over_predicted

GB = 1e9


def machine() -> Roofline:
    return Roofline(
        bandwidth=Rate(25 * GB, 24 * GB, 26 * GB),
        read_bandwidth=Rate(30 * GB, 29 * GB, 31 * GB),
        ceilings={
            "float32": (
                (1, Rate(10 * GB, 9 * GB, 11 * GB)),
                (64, Rate(100 * GB, 95 * GB, 105 * GB)),
                (128, Rate(200 * GB, 190 * GB, 210 * GB)),
            ),  # fmt: skip
            "bfloat16": ((1, Rate(5 * GB, 4 * GB, 6 * GB)), (1024, Rate(400 * GB, 390 * GB, 410 * GB))),
        },
        dispatch=Rate(5e-6, 4e-6, 6e-6),
    )


def test_a_ceiling_between_two_row_counts_lies_on_the_log_log_line():
    m = machine()
    # from 64 to 128 rows the rate doubles: a line of slope one, so 90 rows reach 100 x 90/64
    assert m.ceiling("float32", 90).value == pytest.approx(100 * GB * 90 / 64)
    assert m.ceiling("float32", 90).low == pytest.approx(95 * GB * 90 / 64)
    # from 1 to 64 rows the rate grows tenfold over six doublings: 8 rows are halfway, sqrt(10)
    assert m.ceiling("float32", 8).value == pytest.approx(10 * GB * math.sqrt(10))
    assert m.ceiling("float32", 64) == Rate(100 * GB, 95 * GB, 105 * GB)  # a measured point as measured


def test_outside_the_measured_rows_the_nearest_end_holds():
    m = machine()
    assert m.ceiling("float32", 4096) == m.ceiling("float32", 128)
    assert m.ceiling("float32", 0.5) == m.ceiling("float32", 1)
    with pytest.raises(KeyError, match="float16"):
        m.ceiling("float16", 1)


def test_the_peak_and_the_balance_point():
    m = machine()
    assert m.peak("float32") == Rate(200 * GB, 190 * GB, 210 * GB)
    # 200 GFLOP/s over 25 GB/s: 8 FLOPs per byte; the range 190/26 to 210/24
    b = m.balance("float32")
    assert (b.value, b.low, b.high) == pytest.approx((8.0, 190 / 26, 210 / 24))


def test_a_step_takes_the_larger_ceiling_plus_its_fixed_cost():
    """135 M float32 parameters (540 MB) read once, 270 MFLOP on one row, 2,000 operators:
    memory 540e6 / 25e9 = 21.6 ms, arithmetic at this made-up machine's one-row ceiling
    0.27e9 / 10e9 = 27 ms: here the step sits under the compute ceiling."""
    m = machine()
    p = m.predict(moved_bytes=540e6, flops=0.27e9, rows=1, dtype="float32", ops=2000)
    assert p.memory.value == pytest.approx(21.6e-3)
    assert p.compute.value == pytest.approx(27e-3)  # a one-row multiply reaches 10 GFLOP/s here
    assert p.fixed.value == pytest.approx(10e-3)
    assert p.bound == "compute"
    assert p.total.value == pytest.approx(37e-3)  # max(21.6, 27) + 10
    # each end takes every term's same end: the low end 540e6/26e9 vs 0.27e9/11e9, plus 8 ms
    assert p.total.low == pytest.approx(max(540e6 / 26e9, 0.27e9 / 11e9) + 8e-3)
    assert p.total.high == pytest.approx(max(540e6 / 24e9, 0.27e9 / 9e9) + 12e-3)
    assert p.share("fixed") == pytest.approx(10 / 37)


def test_a_step_that_moves_more_than_it_computes_is_memory_bound():
    m = machine()
    p = m.predict(moved_bytes=1e9, flops=1e9, rows=128, dtype="float32")  # 40 ms against 5 ms
    assert p.bound == "memory" and p.total.value == pytest.approx(0.04) and p.fixed is None


def test_measured_over_predicted_takes_the_cautious_range():
    r = measured_over_predicted(0.040, 0.039, 0.042, Rate(0.037, 0.035, 0.040))
    assert (r.value, r.low, r.high) == pytest.approx((40 / 37, 39 / 40, 42 / 35))


def test_a_rate_refuses_an_impossible_range():
    with pytest.raises(ValueError):
        Rate(1.0, 2.0, 3.0)
    with pytest.raises(ValueError):
        Rate(0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="distinct row counts"):
        Roofline(Rate(1, 1, 1), Rate(1, 1, 1), {"float32": ((64, Rate(1, 1, 1)), (1, Rate(1, 1, 1)))}, Rate(1, 1, 1))


def test_an_empty_prediction_totals_zero_terms_it_has():
    p = Prediction(memory=None, compute=Rate(0.01, 0.009, 0.011), fixed=None)
    assert p.total == Rate(0.01, 0.009, 0.011) and p.bound == "compute"


def test_a_prediction_fills_the_columns_it_declares():
    from measure.lab.medians import Estimate
    from measure.lab.prediction import prediction_cells, prediction_columns

    step = Estimate.of([0.040, 0.039, 0.040, 0.041, 0.042, 0.040], 0.03)  # median 40 ms [39, 42]
    p = machine().predict(moved_bytes=540e6, flops=0.27e9, rows=1, dtype="float32", ops=2000)  # 37 ms
    cells = prediction_cells("step", step, p)
    assert list(cells) == [c.name for c in prediction_columns("step")]
    assert cells["step_predicted_ms"] == pytest.approx(37.0)
    assert (cells["step_memory_ms"], cells["step_compute_ms"], cells["step_fixed_ms"]) == pytest.approx((21.6, 27, 10))
    assert cells["step_bound"] == "compute"
    assert cells["step_over_predicted"] == pytest.approx(40 / 37)
    assert cells["step_over_predicted_low"] == pytest.approx(0.039 / p.total.high)


def test_a_ceiling_never_falls_below_the_ceiling_of_fewer_rows():
    """A probe of 128 rows that came out slower than 64 rows' (80 against 100 GFLOP/s): a
    multiply of 128 rows can run as two of 64, so 128 rows' ceiling is 64 rows', and so is
    anything between them; each end of the range on its own."""
    m = Roofline(
        bandwidth=Rate(25 * GB, 24 * GB, 26 * GB),
        read_bandwidth=Rate(30 * GB, 29 * GB, 31 * GB),
        ceilings={"float32": ((64, Rate(100 * GB, 90 * GB, 105 * GB)), (128, Rate(80 * GB, 79 * GB, 120 * GB)))},
        dispatch=Rate(5e-6, 4e-6, 6e-6),
    )
    assert m.ceiling("float32", 128) == Rate(100 * GB, 90 * GB, 120 * GB)
    assert m.ceiling("float32", 90).value == pytest.approx(100 * GB)
    assert m.peak("float32") == Rate(100 * GB, 90 * GB, 120 * GB)
