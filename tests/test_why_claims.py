"""The why-claims of prefill-decode and kv-cache, decided on made-up values: each of their
outcomes (apart beyond the margin, practically the same, cannot tell; explained by the
roofline or not; which ceiling a step sits under, on its two terms' ranges) is reached,
and only by the data that should reach it. The claims are the project's own
(measure/experiments/*/claims.toml)."""

import pytest

from sitekit.claims import claims
from sitekit.claims.claim_files import load
from sitekit.rendering.pagedata import SiteData
from tests.conftest import REPO, write_data

BOOK = load(REPO / "measure/experiments", REPO, claims.CALLS)
N = claims.NOISE


def _decide(tmp_path, experiment: str, values: dict, ids: list[str], chapter: dict | None = None) -> dict:
    write_data(tmp_path, "calibration", {"t": [{"n": 1}]}, {"margin": 0.05, "model_band": 0.25})
    write_data(tmp_path, "chapter", {"t": [{"n": 1}]}, {"token_cost_ratio": 6, **(chapter or {})})
    write_data(tmp_path, experiment, {"t": [{"n": 1}]}, values)
    data = SiteData(tmp_path)
    return {i: claims.check(data, BOOK.get(f"{experiment}.{i}").expression)[0] for i in ids}


RISE = ["decode_rises", "decode_flat", "decode_falls", "rise_as_predicted", "rise_not_as_predicted"]


@pytest.mark.parametrize(
    ("rise", "predicted", "expected"),
    [
        # +21.8 % [16.7, 31.6] against 24 % [23.8, 24.2]: the steps' ratio over the predicted
        # one runs from 1.167 / 1.242 = 0.940 to 1.316 / 1.238 = 1.063, over both edges of
        # ±5 %: whether the cache's bytes account for the rise, this run cannot tell
        ((0.218, 0.167, 0.316), (0.24, 0.238, 0.242), (True, False, False, N, N)),
        # +20 % [19, 21] against 22 %: a prediction outside the measured interval, yet
        # 1.19 / 1.22 = 0.975 to 1.21 / 1.22 = 0.992, within the margin: as predicted
        ((0.20, 0.19, 0.21), (0.22, 0.22, 0.22), (True, False, False, True, False)),
        # +3 % [+1, +4.5]: practically flat, in every run alike, and as predicted (0.990 to 1.025)
        ((0.03, 0.01, 0.045), (0.02, 0.02, 0.02), (False, True, False, True, False)),
        # +4 % [+2, +7]: straddles the margin's edge, cannot tell; 40 % predicted: 0.729 to 0.764
        ((0.04, 0.02, 0.07), (0.40, 0.40, 0.40), (N, N, False, False, True)),
        # -8 % [-10, -6]: falls, where nothing was predicted (0.90 to 0.94)
        ((-0.08, -0.10, -0.06), (0.0, 0.0, 0.0), (False, False, True, False, True)),
    ],
)
def test_the_decode_steps_rise_against_the_margin_and_its_prediction(tmp_path, rise, predicted, expected):
    values = dict(zip(("step_rise", "step_rise_low", "step_rise_high"), rise, strict=True))
    values |= dict(
        zip(("step_rise_predicted", "step_rise_predicted_low", "step_rise_predicted_high"), predicted, strict=True)
    )
    found = _decide(tmp_path, "prefill_decode", values, RISE)
    assert tuple(found[i] for i in RISE) == expected


@pytest.mark.parametrize(
    ("ratio", "expected"),
    [
        ((14.9, 12.1, 16.3), (True, False, False)),  # the published run against the chapter's 6
        ((6.1, 5.9, 6.2), (False, False, True)),
        ((5.0, 4.0, 5.5), (False, True, False)),
        ((6.3, 5.9, 6.6), (N, False, N)),
    ],
)
def test_a_generated_token_against_the_chapters_three_ways(tmp_path, ratio, expected):
    ids = ["token_cost_ratio_above_chapter", "token_cost_ratio_below_chapter", "token_cost_ratio_as_chapter"]
    values = dict(zip(("split_ratio", "split_ratio_low", "split_ratio_high"), ratio, strict=True))
    found = _decide(tmp_path, "prefill_decode", values, ids)
    assert tuple(found[i] for i in ids) == expected


@pytest.mark.parametrize(
    ("speedup", "predicted", "expected"),
    [
        ((3.2, 3.0, 3.4), 3.3, (True, False)),  # within a quarter, the whole interval
        ((3.2, 3.0, 3.4), 2.0, (False, True)),  # 1.5 to 1.7 times the prediction
        ((3.2, 2.2, 3.4), 2.9, (N, N)),  # 0.76 to 1.17: straddles the band's lower edge
    ],
)
def test_the_kv_speed_up_against_its_prediction(tmp_path, speedup, predicted, expected):
    ids = ["speedup_as_predicted", "speedup_not_as_predicted"]
    values = dict(zip(("speedup", "speedup_low", "speedup_high"), speedup, strict=True))
    found = _decide(tmp_path, "kv_cache", {**values, "speedup_predicted": predicted}, ids)
    assert tuple(found[i] for i in ids) == expected


@pytest.mark.parametrize(
    ("longest", "whole_up_to", "shortest_whole", "expected"),
    [
        # the longest run whole: its ratio is its peak's, three ways against the shortest's
        (5.76, 256, 2.65, (True, False, False)),
        (2.70, 256, 2.65, (False, False, True)),
        (2.0, 256, 2.65, (False, True, False)),
        # only the last two steps at the longest: a lower bound shows a gap that widened only
        # past the shortest's whole loop, and never one that narrowed or stayed the same
        (5.76, 48, 2.65, (True, False, False)),
        (3.79, 48, 3.89, (False, False, False)),
        (2.0, 48, 2.65, (False, False, False)),
    ],
)
def test_the_memory_gap_against_the_shortest_whole_loop(tmp_path, longest, whole_up_to, shortest_whole, expected):
    ids = ["memory_gap_widens", "memory_gap_narrows", "memory_gap_same"]
    values = {
        "memory_ratio": longest,
        "memory_tokens": 256,
        "memory_whole_up_to": whole_up_to,
        "memory_ratio_shortest": 1.68,  # the last two steps at the shortest: a bound too loose to compare
        "memory_ratio_shortest_whole": shortest_whole,
    }
    found = _decide(tmp_path, "kv_cache", values, ids)
    assert tuple(found[i] for i in ids) == expected


def test_the_step_explained_or_not_by_its_decomposition(tmp_path):
    def table(low, high):
        return [{"cache_tokens": 16, "step_over_predicted_low": low, "step_over_predicted_high": high}]

    ids = ["step_explained", "step_unexplained"]
    for (low, high), expected in (((1.05, 1.15), (True, False)), ((1.35, 1.45), (False, True)), ((1.2, 1.3), (N, N))):
        write_data(tmp_path, "calibration", {"t": [{"n": 1}]}, {"margin": 0.05, "model_band": 0.25})
        write_data(tmp_path, "prefill_decode", {"decode": table(low, high)}, {"cache_smallest": 16})
        data = SiteData(tmp_path)
        found = {i: claims.check(data, BOOK.get(f"prefill_decode.{i}").expression)[0] for i in ids}
        assert (found["step_explained"], found["step_unexplained"]) == expected, (low, high)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ((1.00, 0.99, 1.01), (False, False, True)),  # the published run: practically the same, in every run alike
        ((1.10, 1.07, 1.13), (True, False, False)),
        ((0.90, 0.88, 0.92), (False, True, False)),
        ((1.03, 1.01, 1.06), (N, False, N)),  # straddles the margin's edge
    ],
)
def test_the_longest_prompts_cost_per_token_three_ways(tmp_path, change, expected):
    ids = ["per_token_turned_up", "per_token_still_falling", "per_token_levelled"]
    values = dict(zip(("per_token_change", "per_token_change_low", "per_token_change_high"), change, strict=True))
    found = _decide(tmp_path, "prefill_decode", values, ids)
    assert tuple(found[i] for i in ids) == expected


BOUND = ["step_memory_bound", "step_compute_bound", "step_ceilings_level"]
ROUND = ("decode_round_gb_s", "decode_round_low_gb_s", "decode_round_high_gb_s")
ROUND_FLOPS = ("decode_round_gflop_s", "decode_round_low_gflop_s", "decode_round_high_gflop_s")


@pytest.mark.parametrize(
    ("terms", "gb_s", "gflop_s", "expected"),
    [
        # bytes 28.6 ms, FLOPs 12.3 ms, 20 GB/s [19, 23], 200 GFLOP/s [190, 260]: the ratio
        # runs from 28.6 x 20/23 / (12.3 x 200/190) = 24.87 / 12.95 = 1.92 up: memory
        ((28.6, 12.3), (20, 19, 23), (200, 190, 260), (True, False, False)),
        # bytes 23.2, FLOPs 26.9 ms: by the medians under the compute ceiling, but at
        # 21.1 GB/s [16.4, 25.1] and 105 GFLOP/s [72, 119] the ratio runs from
        # 19.50 / 39.23 = 0.50 to 29.85 / 23.74 = 1.26, across both edges: cannot tell
        ((23.2, 26.9), (21.1, 16.4, 25.1), (105, 72, 119), (N, N, N)),
        # 20 and 20 ms at 20 GB/s [19.8, 20.2], 100 GFLOP/s [99, 101]: 0.980 to 1.020, level
        ((20, 20), (20, 19.8, 20.2), (100, 99, 101), (False, False, True)),
        # 10 and 30 ms at [19, 21] and [95, 105]: 9.52 / 31.58 = 0.30 to 10.53 / 28.57 = 0.37
        ((10, 30), (20, 19, 21), (100, 95, 105), (False, True, False)),
    ],
)
def test_which_ceiling_the_step_sits_under_three_ways(tmp_path, terms, gb_s, gflop_s, expected):
    row = {"cache_tokens": 16, "step_memory_ms": terms[0], "step_compute_ms": terms[1]}
    values = {"cache_smallest": 16, **dict(zip(ROUND, gb_s, strict=True))}
    values |= dict(zip(ROUND_FLOPS, gflop_s, strict=True))
    write_data(tmp_path, "calibration", {"t": [{"n": 1}]}, {"margin": 0.05, "model_band": 0.25})
    write_data(tmp_path, "prefill_decode", {"decode": [row]}, values)
    data = SiteData(tmp_path)
    found = tuple(claims.check(data, BOOK.get(f"prefill_decode.{i}").expression)[0] for i in BOUND)
    assert found == expected


@pytest.mark.parametrize(
    ("recompute", "step", "gb_s", "gflop_s", "expected"),
    [
        # the recompute pass: 27.1 x 20.3/23.0 / (111.6 x 215/199) = 0.20 to 0.32, compute;
        # the cached step: 23.74 / 9.78 = 2.43 up, memory
        ((27.1, 111.6), (26.9, 9.05), (20.3, 19.0, 23.0), (215, 199, 264), (True, False)),
        # the same pass, but a cached step of 25.9 and 26.6 ms at 21.1 GB/s [16.4, 25.1] and
        # 105 GFLOP/s [72, 119]: 0.56 to 1.42, cannot tell, so neither reading can be told
        # either (both memory-bound is false: the pass is not)
        ((26.1, 299.5), (25.9, 26.6), (21.1, 16.4, 25.1), (105, 72, 119), (N, False)),
        # both three times as long for their bytes as for their FLOPs: both memory-bound
        ((30, 10), (30, 10), (20, 19.9, 20.1), (100, 99, 101), (False, True)),
    ],
)
def test_the_kv_steps_ceilings_decided_on_their_terms_ranges(tmp_path, recompute, step, gb_s, gflop_s, expected):
    ids = ["recompute_compute_bound_step_memory_bound", "both_memory_bound"]
    values = {
        "recompute_pass_memory_ms": recompute[0],
        "recompute_pass_compute_ms": recompute[1],
        "cached_step_memory_ms": step[0],
        "cached_step_compute_ms": step[1],
    }
    stem = "generation_round"
    values |= dict(zip((f"{stem}_gb_s", f"{stem}_low_gb_s", f"{stem}_high_gb_s"), gb_s, strict=True))
    values |= dict(zip((f"{stem}_gflop_s", f"{stem}_low_gflop_s", f"{stem}_high_gflop_s"), gflop_s, strict=True))
    found = _decide(tmp_path, "kv_cache", values, ids)
    assert tuple(found[i] for i in ids) == expected


@pytest.mark.parametrize(
    ("nf4", "g64", "expected"),
    [
        ((0.688, 0.666, 0.709), (0.608, 0.584, 0.632), True),  # this run: 0.666 above 0.632
        ((0.55, 0.53, 0.57), (0.61, 0.58, 0.63), True),  # the other way round: apart too
        ((0.62, 0.60, 0.64), (0.61, 0.58, 0.63), False),  # 0.60 to 0.64 against 0.58 to 0.63: overlap
    ],
)
def test_top1_agreement_separates_two_schemes_only_on_intervals_apart(tmp_path, nf4, g64, expected):
    def row(variant, shares):
        names = ("variant", "top1_agreement", "top1_agreement_low", "top1_agreement_high")
        return dict(zip(names, (variant, *shares), strict=True))

    write_data(tmp_path, "quality", {"divergence": [row("nf4_b64", nf4), row("int4_g64", g64)]}, {})
    found = claims.check(SiteData(tmp_path), BOOK.get("quality.nf4_g64_top1_apart").expression)[0]
    assert found is expected
