"""§1 memory: the smoke run's table against its own values, and the last-steps probe's
premise (it runs the same forward passes as the end of the whole loop) on a fake model."""

import json
from types import SimpleNamespace

import pytest
import torch

from tests.conftest import REPO
from tests.helpers import table_rows


class _LengthRecorder:
    """A stand-in model: records the length of every sequence it is given and returns
    logits that always pick token 7."""

    def __init__(self):
        self.lengths = []

    def __call__(self, *, input_ids, use_cache):
        self.lengths.append(input_ids.shape[1])
        logits = torch.zeros(1, input_ids.shape[1], 10)
        logits[..., 7] = 1
        return SimpleNamespace(logits=logits)


def test_the_last_two_steps_are_the_whole_loops_last_two_forward_passes():
    from measure.experiments.kv_cache.memory import last_steps_prefix
    from measure.lab.generation import greedy_recompute

    ids = torch.tensor([[1, 2, 3, 4, 5]])
    whole = _LengthRecorder()
    generated = greedy_recompute(whole, ids, 9)
    assert whole.lengths == list(range(5, 14))  # prompt + 0 .. prompt + 8
    probe = _LengthRecorder()
    tail = greedy_recompute(probe, last_steps_prefix(ids, generated, 9), 2)
    assert probe.lengths == whole.lengths[-2:] == [12, 13]
    assert tail.tolist() == generated[:, -2:].tolist()


@pytest.mark.smoke
def test_smoke_memory_table_has_every_length_and_both_protocols(smoke_data):
    d = smoke_data / "kv_cache"
    meta = json.loads((d / "meta.json").read_text())
    v = {k: x["value"] for k, x in meta["values"].items()}
    p = meta["parameters"]
    rows = table_rows(d, "memory")
    key = {(r["method"], int(r["new_tokens"]), r["steps_run"]): r for r in rows}
    short, long = sorted(p["memory_tokens"])
    assert (v["memory_tokens_shortest"], v["memory_tokens"]) == (short, long)
    assert p["memory_whole_up_to"] == short  # the smoke profile exercises both protocols
    # the shortest: whole loop, the probe beside it, and the cached run; the longest:
    # the probe alone, since the whole loop is beyond memory_whole_up_to
    assert set(key) == {
        ("recompute", short, "all"),
        ("recompute", short, "last two"),
        ("cached", short, "all"),
        ("recompute", long, "last two"),
        ("cached", long, "all"),
    }
    for r in rows:
        assert int(r["peak_bytes"]) - int(r["baseline_bytes"]) == int(r["above_baseline_bytes"])
        cached = key[("cached", int(r["new_tokens"]), "all")]
        assert float(r["relative_to_cached"]) == int(r["above_baseline_bytes"]) / max(
            1, int(cached["above_baseline_bytes"])
        )
    assert v["memory_ratio"] == float(key[("recompute", long, "last two")]["relative_to_cached"])
    # like with like: the shortest read as the longest is, on its last two steps; its whole loop beside
    assert v["memory_compared_last_two"] is True
    assert v["memory_ratio_shortest"] == float(key[("recompute", short, "last two")]["relative_to_cached"])
    assert v["memory_ratio_shortest_whole"] == float(key[("recompute", short, "all")]["relative_to_cached"])
    whole, probe = (int(key[("recompute", short, s)]["above_baseline_bytes"]) for s in ("all", "last two"))
    assert v["memory_last_steps_share"] == probe / max(1, whole)


def test_a_generation_is_the_sum_of_its_steps_read_off_the_line_between_the_lengths_timed():
    from measure.experiments.kv_cache.speedup import interpolated_sum, plan, spaced

    assert spaced(41, 88, 5) == (41, 53, 64, 76, 88)  # 64.5 rounds to even
    assert spaced(41, 41, 3) == (41,) and spaced(4, 5, 3) == (4, 5)
    # 10 ms at 40 tokens, 20 at 50: 45 tokens lie halfway, 15 ms; the ends as measured
    assert interpolated_sum({40: 0.010, 50: 0.020}, [40, 45, 50]) == pytest.approx(0.045)
    # three points: each length on its own segment (40-50: +1 ms a token; 50-52: +5 ms a token)
    assert interpolated_sum({40: 0.010, 50: 0.020, 52: 0.030}, range(48, 53)) == pytest.approx(
        0.018 + 0.019 + 0.020 + 0.025 + 0.030
    )
    with pytest.raises(ValueError, match="outside the lengths timed"):
        interpolated_sum({40: 0.01, 50: 0.02}, [51])
    p = plan(41, 48, recompute_points=5, step_points=3)
    # recomputing: passes over 41 to 88 tokens; with the cache: steps against 41 to 87 positions
    assert (p.passes[0], p.passes[-1], len(p.passes)) == (41, 88, 48)
    assert (p.steps[0], p.steps[-1], len(p.steps)) == (41, 87, 47)
    assert p.recompute_lengths == (41, 53, 64, 76, 88) and p.step_contexts == (41, 64, 87)


def _est(samples):
    from measure.lab.medians import Estimate

    return Estimate.of(samples, target=0.03)


def test_each_round_gives_one_sample_of_each_whole_generation_and_their_ratio():
    """Made-up steps: a recompute pass of n tokens takes n ms, a decode step 2 ms, the
    prefill 10 ms, in each of six rounds; in round 3 everything ran twice as slowly. Over
    prompt 4 and 3 new tokens: recomputing is 4 + 5 + 6 = 15 ms, with the cache 10 + 2 x 2
    = 14 ms; after the first token 11 ms against 4."""
    from measure.experiments.kv_cache import Config
    from measure.experiments.kv_cache.speedup import Predicted, identical_rows, plan, round_totals
    from measure.lab.roofline import Prediction, Rate

    p = plan(4, 3, recompute_points=2, step_points=2)
    assert (p.recompute_lengths, p.step_contexts) == ((4, 6), (4, 5))
    slow = [1, 1, 2, 1, 1, 1]
    points = {("prefill",): _est([0.010 * k for k in slow])}
    points |= {("step", c): _est([0.002 * k for k in slow]) for c in p.step_contexts}
    points |= {("recompute", n): _est([0.001 * n * k for k in slow]) for n in p.recompute_lengths}
    totals = round_totals(points, p)
    assert totals["recompute"][0] == pytest.approx(0.015) and totals["recompute"][2] == pytest.approx(0.030)
    assert totals["cached"][0] == pytest.approx(0.014) and totals["cached_steps"][0] == pytest.approx(0.004)
    assert totals["recompute_steps"][0] == pytest.approx(0.011)
    one = Prediction(memory=Rate(0.001, 0.001, 0.001), compute=None, fixed=None, moved_bytes=1.0, flops=2.0)
    pred = Predicted(recompute=one, cached=one, recompute_steps=one, cached_steps=one)
    rows, values = identical_rows(Config(new_tokens=3), totals, True, pred)
    cached = rows[1]
    # the slow round slowed both: every round's ratio is 15 / 14, the interval too
    assert values["speedup"] == values["speedup_low"] == values["speedup_high"] == pytest.approx(15 / 14)
    assert values["steps_speedup"] == pytest.approx(11 / 4)
    assert cached["total_ms"] == pytest.approx(14.0) and cached["total_samples"] == 6
    assert cached["ms_per_token"] == pytest.approx(14.0 / 3) and cached["steps_ms"] == pytest.approx(4.0)
    assert rows[0]["speedup"] == 1.0 and cached["total_predicted_ms"] == pytest.approx(1.0)
    assert values["timed_tokens"] == 3 and len(values["cached_samples_ms"]) == 6


def test_the_cpu_profile_times_the_chapters_48_tokens_within_the_old_budget():
    from measure.experiments.kv_cache import Config

    cpu, full = Config.for_profile("cpu"), Config()
    assert cpu.new_tokens == full.new_tokens == 48  # spec §1.1
    assert cpu.new_tokens in cpu.memory_tokens and cpu.new_tokens <= cpu.memory_whole_up_to  # streams reused
    assert cpu.generation_budget_s <= 10.0 and cpu.generation_min_rounds >= 9  # intervals within the extremes
    smoke = Config.for_profile("smoke")
    assert (smoke.generation_budget_s, smoke.head_budget_s) == (0.1, 0.1)


def test_the_published_head_sweep_says_how_many_calls_each_sample_holds():
    meta = json.loads((REPO / "site_data" / "kv_cache" / "meta.json").read_text())
    calls = meta["notes"]["head_sweep"]["calls_per_sample"]
    rows = table_rows(REPO / "site_data" / "kv_cache", "head_step")
    assert set(calls) == {f"{way} {r['context']}" for r in rows for way in ("recompute", "cached")}
    block_ms = meta["values"]["head_block_ms"]["value"]
    for r in rows:  # a block is no longer than its shortest sample needs, give or take the noise
        for way in ("recompute", "cached"):
            n = calls[f"{way} {r['context']}"]
            assert n == 1 or float(r[f"{way}_ms"]) * (n - 1) < 4 * block_ms, (way, r["context"], n)


def test_every_published_head_ratio_is_paired_on_at_least_the_profiles_rounds():
    from measure.experiments.kv_cache import Config

    meta = json.loads((REPO / "site_data" / "kv_cache" / "meta.json").read_text())
    least = Config.for_profile(meta["profile"]).head_min_rounds
    assert least > 6  # more than the six whose interval runs from the smallest to the largest
    for r in table_rows(REPO / "site_data" / "kv_cache", "head_step"):
        assert min(int(r["recompute_samples"]), int(r["cached_samples"])) >= least, r["context"]
