"""The why-claims of batching, weight quantization and speculative decoding, as their
claims files define them, decided on made-up values: each of their three outcomes
(apart beyond the margin, practically the same, cannot tell) where the data puts it."""

import pytest
from sitekit import claims
from sitekit.claim_files import load
from sitekit.claims import NOISE, check
from sitekit.pagedata import SiteData

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
