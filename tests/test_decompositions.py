"""The decompositions of batching, weight quantization and speculative decoding, worked
by hand: what a step is predicted to take, how a difference is split, what a round's
costs give."""

from collections import Counter
from types import SimpleNamespace

import pytest

from measure.experiments.batching.decomposition import _gap_share, _paired, predict
from measure.experiments.batching.simulations import ranges, rounds
from measure.experiments.batching.sweep import growth_row
from measure.experiments.speculative_decoding.runs import predicted, predicted_cells
from measure.experiments.weight_quantization.decomposition import cap_values, parts_cells
from measure.lab.medians import Estimate
from measure.lab.roofline import Rate, Roofline
from measure.lab.step_counts import StepCounts


def _est(*ms, sweep=None):
    return Estimate.of([x / 1e3 for x in ms], target=0.03, sweep=sweep)


# A machine of 1 GB/s, 1 GFLOP/s at every row count, 1 ms per operator.
ROOF = Roofline(
    bandwidth=Rate(1e9, 1e9, 1e9),
    read_bandwidth=Rate(1e9, 1e9, 1e9),
    ceilings={"float32": ((1, Rate(1e9, 1e9, 1e9)),)},
    dispatch=Rate(1e-3, 1e-3, 1e-3),
)


def test_a_step_is_predicted_from_its_counts_and_the_compiled_one_from_its_bytes():
    counts = StepCounts(ops=5, flops=2_000_000, weight_bytes=3_000_000, cache_bytes=1_000_000, activation_bytes=9)
    eager = predict(ROOF, counts, rows=1, dtype="float32")
    # 4 MB at 1 GB/s = 4 ms, above 2 MFLOP at 1 GFLOP/s = 2 ms; plus 5 operators at 1 ms
    assert eager.total.value == pytest.approx(4e-3 + 5e-3)
    assert eager.bound == "memory"
    # compiled: the bytes it moves are given (its cache read once), no operators counted
    fused = predict(ROOF, counts, rows=1, dtype="float32", fused_bytes=1_000_000)
    assert fused.total.value == pytest.approx(2e-3) and fused.bound == "compute"


def _record(wall_ms, **groups_ms):
    return (wall_ms / 1e3, Counter({g: ms / 1e3 for g, ms in groups_ms.items()}), Counter())


def test_the_excess_of_a_batched_step_over_a_prefill_is_split_round_by_round():
    # Round 1: the step took 10 ms more than the prefill, of which attention and the
    # appends 6 more (7 - 1): 0.6. Round 2: 20 more, 15 of them: 0.75. Round 3: the step
    # was not the longer one: no excess to share, left out.
    decode = [_record(50, matmul=20, attention=5, concat=2), _record(60, matmul=20, attention=12, concat=4),
              _record(40, matmul=20, attention=1, concat=0)]  # fmt: skip
    prefill = [_record(40, matmul=19, attention=1), _record(40, matmul=21, attention=1), _record(45, matmul=20)]
    share = _gap_share("s", decode, prefill)
    assert share["s"] == pytest.approx((0.6 + 0.75) / 2)
    assert share["s_low"] is None  # two rounds bound no median
    # their multiplies, paired round by round: 20/19, 20/21, 1, twice over; six bound the median
    ratio = _paired("m", decode * 2, prefill * 2, ("matmul",))
    assert ratio["m"] == pytest.approx(1.0)
    assert ratio["m_low"] == pytest.approx(20 / 21) and ratio["m_high"] == pytest.approx(20 / 19)


def test_a_growth_is_paired_round_by_round_and_its_gain_follows():
    # one sweep: round by round the step at 2 over the step at 1 is 1.1, 1.0, 1.2, 1.0, 1.1, 1.05
    one = _est(10, 20, 10, 10, 20, 20, sweep=7)
    two = _est(11, 20, 12, 10, 22, 21, sweep=7)
    row = growth_row(1, one, 2, two)
    assert (row["from_batch"], row["batch"]) == (1, 2)
    assert row["slowdown"] == pytest.approx(1.075)
    assert (row["slowdown_low"], row["slowdown_high"]) == pytest.approx((1.0, 1.2))
    assert row["gain"] == pytest.approx(2 / 1.075)
    assert (row["gain_low"], row["gain_high"]) == pytest.approx((2 / 1.2, 2 / 1.0))


def test_each_round_of_costs_is_simulated_and_the_range_spans_them():
    costs = {1: SimpleNamespace(eager=_est(1, 2, 3, 4, 5, 6, 7)), 2: SimpleNamespace(eager=_est(2, 3, 4, 5, 6, 7))}
    prefill = _est(9, 8, 7, 6, 5, 4, 3, 2)
    each = rounds(costs, prefill)
    assert len(each) == 6  # the rounds every cost reached
    assert each[2] == ({1: 0.003, 2: 0.004}, 0.007)
    out = ranges({"r": 2.0}, [{"r": 1.5}, {"r": 2.5}, {"r": 2.2}], ("r",))
    assert out == {"r": 2.0, "r_low": 1.5, "r_high": 2.5}
    # the ratio at the medians stays inside its range however the rounds fall
    assert ranges({"r": 3.0}, [{"r": 1.5}, {"r": 2.5}], ("r",))["r_high"] == 3.0


def test_the_rest_of_a_step_and_the_cap_on_any_weight_format():
    step, matmul = _est(30, 31, 32, 33, 34, 35), _est(15, 16, 17, 18, 19, 20)
    parts = parts_cells(step, matmul)
    assert parts["rest_ms"] == pytest.approx(32.5 - 17.5)
    assert (parts["rest_low_ms"], parts["rest_high_ms"]) == pytest.approx((30 - 20, 35 - 15))
    rows = [
        {"variant": "fp32", "step_ms": 30.0, "step_low_ms": 29.0, "step_high_ms": 31.0,
         "rest_ms": 15.0, "rest_low_ms": 14.0, "rest_high_ms": 16.0},
        {"variant": "int4", "step_ms": 18.0, "step_low_ms": 17.0, "step_high_ms": 19.0,
         "rest_ms": 12.0, "rest_low_ms": 10.0, "rest_high_ms": 13.0},
        {"variant": "broken", "step_ms": None, "rest_ms": None},
    ]  # fmt: skip
    cap = cap_values(rows, "fp32")
    # a format whose multiplies took no time would leave the smallest rest, 12 ms: 30 / 12
    assert cap["kernel_cap"] == pytest.approx(30 / 12)
    assert (cap["kernel_cap_low"], cap["kernel_cap_high"]) == pytest.approx((29 / 13, 31 / 10))
    assert (cap["kernel_rest_min_ms"], cap["kernel_rest_max_ms"]) == (12.0, 15.0)
    assert cap_values([{**rows[1], "rest_ms": -1.0}], "int4")["kernel_cap"] is None
    # a rest of 0.8 ms whose range reaches below zero is not resolved: it sets no cap of 37x
    unresolved = {**rows[1], "variant": "int8", "rest_ms": 0.8, "rest_low_ms": -27.0, "rest_high_ms": 16.0}
    again = cap_values([*rows, unresolved], "fp32")
    assert again["kernel_cap"] == pytest.approx(30 / 12) and again["kernel_rest_min_ms"] == 12.0
    assert cap_values([rows[0] | {"rest_low_ms": 0.0}], "fp32")["kernel_cap"] is None


def test_a_speculative_run_is_predicted_from_its_passes():
    passes = {
        ("prefill", "target"): _est(50, 50, 50, 50, 50, 50),
        ("prefill", "d"): _est(20, 20, 20, 20, 20, 20),
        ("target", 1): _est(30, 30, 30, 30, 30, 30),
        ("target", 3): _est(40, 39, 41, 40, 40, 40),
        ("draft", "d"): _est(10, 10, 10, 10, 10, 10),
    }
    # 5 rounds at gamma 2: 50 + 20 + 5 x (2 x 10 + 40) = 370 ms; greedy of 12 tokens: 50 + 11 x 30 = 380 ms
    run = predicted(passes, draft="d", gamma=2, rounds=5, new_tokens=12)
    assert run["median"] == pytest.approx(0.370)
    assert (run["low"], run["high"]) == pytest.approx((0.365, 0.375))  # the verification's 39 and 41 ms
    cells = predicted_cells(passes, draft="d", gamma=2, rounds=5, new_tokens=12)
    assert cells["predicted_ms"] == pytest.approx(370)
    assert cells["predicted_run_speedup"] == pytest.approx(380 / 370)
    assert cells["predicted_run_speedup_low"] == pytest.approx(380 / 375)
    assert cells["predicted_run_speedup_high"] == pytest.approx(380 / 365)
