"""The why-claims of batching, weight quantization and speculative decoding, as their
claims files define them, decided on made-up values: each of their three outcomes
(apart beyond the margin, practically the same, cannot tell) where the data puts it."""

import pytest

from sitekit.claims import claims
from sitekit.claims.claim_files import load
from sitekit.claims.claims import NOISE, check
from sitekit.rendering.pagedata import SiteData
from tests.conftest import REPO, write_data

BOOK = load(REPO / "measure/experiments", REPO, claims.CALLS)
MARGIN = 0.05


def decide(root, claim: str):
    return check(SiteData(root), BOOK.get(claim).expression)[0]


def _calibration(root):
    write_data(root, "calibration", {"runs": [{"run": 1}]}, {"margin": MARGIN})


def _growths(root, *ranges):
    rows = [
        {"from_batch": 2**i, "batch": 2 ** (i + 1), "slowdown_low": lo, "slowdown": (lo + hi) / 2, "slowdown_high": hi}
        for i, (lo, hi) in enumerate(ranges)
    ]
    _calibration(root)
    write_data(root, "batching", {"growths": rows})


@pytest.mark.parametrize(
    "ranges, first, every",
    [
        # every growth longer by more than 5 %
        ([(1.10, 1.20), (1.30, 1.40)], "first_growth_longer", "growths_all_longer"),
        # the first practically the same, the next longer: none shorter, not all longer
        ([(0.99, 1.03), (1.30, 1.40)], "first_growth_same", "growths_none_shorter"),
        # one growth shorter beyond the margin (a kernel's shape)
        ([(1.10, 1.20), (0.80, 0.90)], "first_growth_longer", "growths_some_shorter"),
    ],
)
def test_each_growth_of_the_batch_against_the_margin(tmp_path, ranges, first, every):
    _growths(tmp_path, *ranges)
    assert decide(tmp_path, f"batching.{first}") is True
    assert decide(tmp_path, f"batching.{every}") is True
    others = {"growths_all_longer", "growths_some_shorter"} - {every}
    assert all(decide(tmp_path, f"batching.{o}") is not True for o in others)


def test_a_growth_that_straddles_the_margin_cannot_be_told(tmp_path):
    _growths(tmp_path, (1.03, 1.07), (1.30, 1.40))
    assert decide(tmp_path, "batching.first_growth_same") is NOISE
    assert decide(tmp_path, "batching.first_growth_longer") is NOISE
    assert decide(tmp_path, "batching.growths_all_longer") is NOISE
    assert decide(tmp_path, "batching.growths_none_shorter") is True


def _decomposition(root, **values):
    _calibration(root)
    write_data(root, "batching", {"growths": [{"batch": 2}]}, values)


@pytest.mark.parametrize(
    "share, outcome",
    [((0.6, 0.8), "gap_mostly_per_request"), ((0.2, 0.4), "gap_mostly_elsewhere"), ((0.4, 0.6), None)],
)
def test_what_a_batched_step_costs_beyond_a_prefill_is_split_against_one_half(tmp_path, share, outcome):
    _decomposition(tmp_path, gap_per_request_share_low=share[0], gap_per_request_share_high=share[1])
    for claim in ("gap_mostly_per_request", "gap_mostly_elsewhere"):
        expected = True if claim == outcome else (NOISE if outcome is None else False)
        assert decide(tmp_path, f"batching.{claim}") is expected


@pytest.mark.parametrize(
    "ratio, holds",
    [((1.20, 1.35), "decode_dearer_than_prefill"), ((0.97, 1.04), "decode_as_prefill"), ((0.80, 0.90), None)],
)
def test_a_batched_step_against_a_prefill_of_as_many_tokens(tmp_path, ratio, holds):
    _decomposition(tmp_path, decode_over_prefill_low=ratio[0], decode_over_prefill_high=ratio[1])
    dearer = decide(tmp_path, "batching.decode_dearer_than_prefill")
    same = decide(tmp_path, "batching.decode_as_prefill")
    cheaper = decide(tmp_path, "batching.decode_cheaper_than_prefill")
    assert [dearer, same, cheaper].count(True) == 1
    assert {"decode_dearer_than_prefill": dearer, "decode_as_prefill": same}.get(holds, cheaper) is True


@pytest.mark.parametrize(
    "cap, saving, caps, room",
    [
        ((2.3, 2.7), 4.6, True, False),
        ((4.0, 5.2), 4.6, NOISE, False),
        ((5.0, 6.0), 4.6, False, True),
        ((4.0, None), 4.6, False, False),  # the rest's range reaches zero: no upper bound
    ],
)
def test_the_fixed_work_caps_what_a_weight_format_can_gain(tmp_path, cap, saving, caps, room):
    _calibration(tmp_path)
    values = {"kernel_cap_low": cap[0], "kernel_cap_high": cap[1], "kernel_lowbit_fastest_bytes_saving": saving}
    write_data(tmp_path, "weight_quantization", {"decode_kernels": [{"variant": "fp32"}]}, values)
    assert decide(tmp_path, "weight_quantization.fixed_work_caps_gain") is caps
    assert decide(tmp_path, "weight_quantization.bytes_cap_gain") is room
    # the third reading: cannot tell, where neither of the others holds
    undecided = decide(tmp_path, "weight_quantization.cap_undecided")
    assert undecided is (True if cap[1] is None else caps if caps is not True else True)


@pytest.mark.parametrize(
    "speed, outcome",
    [
        ((0.86, 0.91), "bf16_slower_than_fp32"),
        ((0.97, 1.03), "bf16_same_as_fp32"),
        ((1.10, 1.20), "bf16_faster_than_fp32"),
    ],
)
def test_bf16_against_fp32_three_ways(tmp_path, speed, outcome):
    _calibration(tmp_path)
    rows = [{"variant": "bf16", "speedup_vs_fp32_low": speed[0], "speedup_vs_fp32_high": speed[1]}]
    write_data(tmp_path, "weight_quantization", {"decode_kernels": rows})
    for claim in ("bf16_slower_than_fp32", "bf16_same_as_fp32", "bf16_faster_than_fp32"):
        assert (decide(tmp_path, f"weight_quantization.{claim}") is True) == (claim == outcome)


@pytest.mark.parametrize(
    "best, runner, verdict, order",
    [
        ((1.15, 1.25), (1.08, 1.12), "best_config_faster", "best_beyond_runner_up"),
        ((0.97, 1.02), (0.98, 1.03), "best_config_same", "best_with_runner_up"),
        ((0.70, 0.80), (1.02, 1.09), "best_config_slower", None),
    ],
)
def test_the_best_speculative_run_only_where_it_is_best_beyond_the_margin(tmp_path, best, runner, verdict, order):
    _calibration(tmp_path)
    values = {
        "best_measured_speedup_low": best[0],
        "best_measured_speedup_high": best[1],
        "runner_up_over_best_low": runner[0],
        "runner_up_over_best_high": runner[1],
    }
    write_data(tmp_path, "speculative_decoding", {"real_run": [{"draft": "d"}]}, values)
    for claim in ("best_config_faster", "best_config_same", "best_config_slower"):
        assert (decide(tmp_path, f"speculative_decoding.{claim}") is True) == (claim == verdict)
    beyond = decide(tmp_path, "speculative_decoding.best_beyond_runner_up")
    within = decide(tmp_path, "speculative_decoding.best_with_runner_up")
    if order is None:  # the runner-up's range straddles the margin's edge: neither is said
        assert beyond is NOISE and within is NOISE
    else:
        assert (beyond is True, within is True) == (order == "best_beyond_runner_up", order == "best_with_runner_up")


def _three(root, prefix: str, names: tuple[str, ...]) -> list:
    return [decide(root, f"{prefix}.{n}") for n in names]


@pytest.mark.parametrize(
    "steps, outcome",
    [
        # B = 8 at 0.40-0.50 s against B = 1 at 0.10-0.12 s: 1.6x to 2.4x the throughput
        (((0.10, 0.12), (0.40, 0.50)), "largest_batch_more_throughput"),
        # 8 x 0.10 / 0.84 = 0.952 to 8 x 0.105 / 0.80 = 1.05: inside 1/1.05 .. 1.05
        (((0.10, 0.105), (0.80, 0.84)), "largest_batch_same_throughput"),
        (((0.10, 0.11), (1.00, 1.10)), "largest_batch_less_throughput"),
        # 8 x 0.10 / 0.80 = 1.0 to 8 x 0.12 / 0.70 = 1.37: straddles 1.05
        (((0.10, 0.12), (0.70, 0.80)), None),
    ],
)
def test_the_largest_batch_against_one_sequence_three_ways(tmp_path, steps, outcome):
    (lo1, hi1), (lo8, hi8) = steps
    _calibration(tmp_path)
    rows = [{"batch": 1, "step_low_ms": lo1 * 1e3, "step_high_ms": hi1 * 1e3},
            {"batch": 8, "step_low_ms": lo8 * 1e3, "step_high_ms": hi8 * 1e3}]  # fmt: skip
    write_data(tmp_path, "batching", {"sweep": rows}, {"largest_measured_batch": 8})
    names = ("largest_batch_more_throughput", "largest_batch_same_throughput", "largest_batch_less_throughput")
    got = _three(tmp_path, "batching", names)
    if outcome is None:
        assert got[0] is NOISE and True not in got
    else:
        assert got == [n == outcome for n in names]


@pytest.mark.parametrize(
    "throughput, latency, outcome",
    [
        ((2.2, 2.5), (2.0, 2.6), "continuous_more_throughput"),
        ((0.97, 1.02), (2.0, 2.6), "continuous_same_throughput"),
        ((0.80, 0.90), (2.0, 2.6), "continuous_less_throughput"),
    ],
)
def test_continuous_against_static_three_ways_and_both_beyond(tmp_path, throughput, latency, outcome):
    _calibration(tmp_path)
    values = {"throughput_ratio_low": throughput[0], "throughput_ratio_high": throughput[1],
              "mean_latency_ratio_low": latency[0], "mean_latency_ratio_high": latency[1]}  # fmt: skip
    write_data(tmp_path, "batching", {"growths": [{"batch": 2}]}, values)
    names = ("continuous_more_throughput", "continuous_same_throughput", "continuous_less_throughput")
    assert _three(tmp_path, "batching", names) == [n == outcome for n in names]
    both = outcome == "continuous_more_throughput"
    assert decide(tmp_path, "batching.continuous_wins_both") is both
    assert decide(tmp_path, "batching.continuous_not_both_beyond") is (not both)


def test_continuous_against_static_where_one_ratio_straddles_the_margin(tmp_path):
    _calibration(tmp_path)
    values = {"throughput_ratio_low": 1.03, "throughput_ratio_high": 1.2,
              "mean_latency_ratio_low": 2.0, "mean_latency_ratio_high": 2.6}  # fmt: skip
    write_data(tmp_path, "batching", {"growths": [{"batch": 2}]}, values)
    assert decide(tmp_path, "batching.continuous_wins_both") is NOISE
    assert decide(tmp_path, "batching.continuous_not_both_beyond") is NOISE


@pytest.mark.parametrize(
    "cost, about, apart",
    [
        ((0.98, 1.04), True, False),
        ((1.40, 2.00), False, True),
        ((0.60, 0.80), False, True),
        ((0.90, 1.30), NOISE, NOISE),
    ],
)
def test_the_fake_quantized_draft_costs_a_step_within_the_margin(tmp_path, cost, about, apart):
    _calibration(tmp_path)
    rows = [{"draft": "int8_row", "draft_cost_low": cost[0], "draft_cost_high": cost[1]}]
    write_data(tmp_path, "speculative_decoding", {"draft_cost": rows})
    assert decide(tmp_path, "speculative_decoding.int8_row_costs_about_a_step") is about
    assert decide(tmp_path, "speculative_decoding.int8_row_cost_apart_from_a_step") is apart


@pytest.mark.parametrize(
    "ranges, over, not_all",
    [
        ([(1.10, 1.30), (1.20, 1.60)], True, False),
        ([(1.10, 1.30), (0.90, 1.04)], False, True),  # one pass wholly within the margin's edge
        ([(1.10, 1.30), (1.00, 1.20)], NOISE, NOISE),
    ],
)
def test_every_verification_against_one_step(tmp_path, ranges, over, not_all):
    _calibration(tmp_path)
    rows = [{"gamma": 2 * (i + 1), "relative_to_one_step_low": lo, "relative_to_one_step_high": hi}
            for i, (lo, hi) in enumerate(ranges)]  # fmt: skip
    write_data(tmp_path, "speculative_decoding", {"verify_cost": rows})
    assert decide(tmp_path, "speculative_decoding.verify_costs_over_a_step") is over
    assert decide(tmp_path, "speculative_decoding.verify_not_all_over_a_step") is not_all


@pytest.mark.parametrize(
    "ratio, outcome",
    [
        ((1.20, 1.40), "int8_fp32_slower_than_bf16"),
        ((0.98, 1.03), "int8_fp32_same_as_bf16"),
        ((0.70, 0.90), "int8_fp32_faster_than_bf16"),
        ((1.00, 1.20), None),
    ],
)
def test_the_same_int8_weights_with_either_activations_three_ways(tmp_path, ratio, outcome):
    _calibration(tmp_path)
    # fp32 reads 1.5x the bytes of bf16 (its output head in fp32)
    rows = [{"variant": "int8_fp32", "weight_bytes": 150}, {"variant": "int8_bf16", "weight_bytes": 100}]
    values = {"kernel_int8_fp32_over_bf16": sum(ratio) / 2,
              "kernel_int8_fp32_over_bf16_low": ratio[0], "kernel_int8_fp32_over_bf16_high": ratio[1]}  # fmt: skip
    write_data(tmp_path, "weight_quantization", {"decode_kernels": rows}, values)
    names = ("int8_fp32_slower_than_bf16", "int8_fp32_same_as_bf16", "int8_fp32_faster_than_bf16")
    got = _three(tmp_path, "weight_quantization", names)
    assert got == ([n == outcome for n in names] if outcome else [NOISE, NOISE, False])
    # every range here lies below the bytes' ratio, 1.5: the bytes could account for it
    assert decide(tmp_path, "weight_quantization.int8_fp32_within_bytes") is True
    assert decide(tmp_path, "weight_quantization.int8_fp32_slower_beyond_bytes") is False


@pytest.mark.parametrize(
    "speedup, below, reaches",
    [((1.5, 2.0), True, False), ((4.8, 5.5), False, True), ((4.0, 5.0), NOISE, NOISE)],
)
def test_the_fastest_low_bit_step_against_the_bytes_it_saved(tmp_path, speedup, below, reaches):
    _calibration(tmp_path)
    values = {"kernel_lowbit_fastest_speedup_low": speedup[0], "kernel_lowbit_fastest_speedup_high": speedup[1],
              "kernel_lowbit_fastest_bytes_saving": 4.6}  # fmt: skip
    write_data(tmp_path, "weight_quantization", {"decode_kernels": [{"variant": "fp32"}]}, values)
    assert decide(tmp_path, "weight_quantization.lowbit_speedup_below_bytes_saving") is below
    assert decide(tmp_path, "weight_quantization.lowbit_speedup_reaches_bytes_saving") is reaches
