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
    assert v["memory_ratio_shortest"] == float(key[("recompute", short, "all")]["relative_to_cached"])
    whole, probe = (int(key[("recompute", short, s)]["above_baseline_bytes"]) for s in ("all", "last two"))
    assert v["memory_last_steps_share"] == probe / max(1, whole)


def test_the_speedup_comes_with_the_range_of_the_two_intervals():
    from measure.experiments.kv_cache import Config
    from measure.experiments.kv_cache.speedup import identical_rows
    from measure.lab.medians import Estimate

    recompute = Estimate.of([4.0, 4.1, 3.9, 4.2, 3.8, 4.0], target=0.03)
    cached = Estimate.of([1.0, 1.1, 0.9, 1.0, 1.05, 0.95], target=0.03)
    cfg = Config(timed_tokens=8)
    rows, values = identical_rows(cfg, {"recompute": recompute, "cached": cached}, same=True)
    by = {r["method"]: r for r in rows}
    assert (by["recompute"]["speedup"], by["recompute"]["speedup_low"]) == (1.0, 1.0)  # against itself
    c = by["cached"]
    assert c["speedup"] == values["speedup"] == recompute.median_s / cached.median_s
    assert values["speedup_low"] == c["speedup_low"] == recompute.low_s / cached.high_s
    assert values["speedup_high"] == c["speedup_high"] == recompute.high_s / cached.low_s
    assert c["speedup_low"] <= c["speedup"] <= c["speedup_high"]
    assert c["total_samples"] == 6 and c["new_tokens"] == values["timed_tokens"] == 8
    assert c["ms_per_token"] == pytest.approx(c["total_ms"] / 8)
    assert "ms_per_token_samples" not in c  # the total's samples count for both


def test_the_cpu_profile_takes_its_streams_from_the_memory_tables_whole_generations():
    from measure.experiments.kv_cache import Config

    cpu = Config.for_profile("cpu")
    assert cpu.new_tokens in cpu.memory_tokens and cpu.new_tokens <= cpu.memory_whole_up_to
    assert cpu.timed_tokens < cpu.new_tokens == Config().new_tokens  # the streams shown stay as long
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
