"""§2 prefill and decode: the smoke run's tables hold together (every timing with its
interval, every floor over the run's one bandwidth); the counts and helpers it uses,
against cases worked by hand."""

import json

import pytest
import torch

from measure.experiments.prefill_decode import Config, work
from measure.experiments.prefill_decode.regime import group_of
from measure.experiments.prefill_decode.settings import other_dtype, setting_points
from measure.experiments.prefill_decode.sweeps import flat_range
from measure.experiments.prefill_decode.tables import TABLES
from measure.lab.bandwidth import copy_bandwidth, weight_bytes
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import cache_storage_bytes, decode_step_at, random_cache
from measure.lab.medians import MIN_ROUNDS
from measure.lab.models import load_model
from measure.lab.op_counting import count_ops
from measure.lab.profiled import GROUPS
from measure.lab.step_work import linear_macs, linear_weight_bytes, model_counts, prefill_work
from tests.conftest import REPO
from tests.helpers import paired_ratio, table_rows


def _meta(folder) -> dict:
    return json.loads((folder / "meta.json").read_text())


def _values(folder) -> dict:
    return {k: x["value"] for k, x in _meta(folder)["values"].items()}


def _assert_per_token_change_pairs_the_published_prefills(v: dict) -> None:
    """The longest prompt's cost per token over the one before it, recomputed from the
    prefill samples the run published: the two prefills paired round by round, times the
    lengths' inverse ratio."""
    prefills, before, last = v["prefill_samples_ms"], v["prompt_before_largest"], v["prompt_largest"]
    change = paired_ratio(prefills[str(last)], prefills[str(before)])
    assert (v["per_token_change"], v["per_token_change_low"], v["per_token_change_high"]) == pytest.approx(
        tuple(x * before / last for x in change), rel=1e-3
    )


@pytest.fixture(scope="module")
def folder(smoke_data):
    return smoke_data / "prefill_decode"


@pytest.mark.smoke
def test_tables_and_sweeps(folder):
    meta = _meta(folder)
    assert set(meta["tables"]) == {t.name for t in TABLES} == {"split", "prefill", "decode", "breakdown", "settings"}
    params = meta["parameters"]
    assert [int(r["prompt_tokens"]) for r in table_rows(folder, "prefill")] == params["prompt_lengths"]
    assert [int(r["cache_tokens"]) for r in table_rows(folder, "decode")] == params["cache_lengths"]
    split = table_rows(folder, "split")
    assert [int(r["tokens"]) for r in split] == [params["split_prompt_tokens"], params["split_new_tokens"] - 1]
    for sweep in ("split", "prefill", "decode", "breakdown", "settings"):
        described = meta["notes"][f"{sweep}_sweep"]
        assert described["rounds"] >= MIN_ROUNDS and described["samples"] >= MIN_ROUNDS * described["points"]


@pytest.mark.smoke
def test_every_timing_has_its_interval(folder):
    """Every column declared with an interval: low <= median <= high in every row, and a
    median's sample count at least six (the least that gives a 95 % interval)."""
    meta, checked = _meta(folder), 0
    for name, table in meta["tables"].items():
        declared = [c for c in table["columns"] if c["noise"].get("interval")]
        assert declared, name
        for r in table_rows(folder, name):
            for c in declared:
                if r[c["name"]] == "":
                    continue  # a compiled step where no compiler ran
                low, high = (float(r[b]) for b in c["noise"]["interval"])
                assert low <= float(r[c["name"]]) <= high, (name, c["name"], r)
                if c["noise"].get("samples"):
                    assert int(r[c["noise"]["samples"]]) >= MIN_ROUNDS
                checked += 1
    assert checked >= 30


@pytest.mark.smoke
def test_floors_divide_by_the_runs_bandwidth(folder):
    meta, v = _meta(folder), _values(folder)
    bw = meta["run"]["bandwidth_gb_s"] * 1e9
    assert v["bandwidth_gb_s"] == pytest.approx(meta["run"]["bandwidth_gb_s"])
    floor = v["weight_bytes"] / bw * 1e3
    assert v["floor_ms"] == pytest.approx(floor)
    assert v["floor_low_ms"] == pytest.approx(v["weight_bytes"] / (meta["run"]["bandwidth_high_gb_s"] * 1e9) * 1e3)
    for r in table_rows(folder, "decode"):
        assert float(r["tokens_per_s"]) == pytest.approx(1e3 / float(r["step_ms"]))
        assert float(r["floor_ms"]) == pytest.approx(floor)
        assert float(r["fraction_of_floor"]) == pytest.approx(floor / float(r["step_ms"]))
        assert float(r["floor_with_cache_ms"]) == pytest.approx((v["weight_bytes"] + int(r["cache_bytes"])) / bw * 1e3)
    for r in table_rows(folder, "settings"):
        assert float(r["floor_ms"]) == pytest.approx(int(r["weight_bytes"]) / bw * 1e3)
    # tiny: 2 layers x K,V x 2 kv heads x 16 dims x 4 bytes = 512 bytes per cached token
    assert [int(r["cache_bytes"]) for r in table_rows(folder, "decode")] == [
        512 * c for c in meta["parameters"]["cache_lengths"]
    ]


@pytest.mark.smoke
def test_derived_numbers_follow_from_the_measured_ones(folder):
    v = _values(folder)
    for r in table_rows(folder, "prefill"):
        p, ms = int(r["prompt_tokens"]), float(r["time_ms"])
        assert float(r["ms_per_token"]) == pytest.approx(ms / p)
        assert float(r["tokens_per_s"]) == pytest.approx(p / ms * 1e3)
        assert int(r["flops"]) == 2 * (v["weight_macs"] * p + 256 * p * p)  # the tiny model's attention, below
        assert float(r["achieved_gflop_s"]) == pytest.approx(int(r["flops"]) / ms / 1e6)
    split = table_rows(folder, "split")
    assert float(split[1]["cost_vs_prompt_token"]) == pytest.approx(v["split_ratio"])
    assert v["split_ratio_low"] <= v["split_ratio"] <= v["split_ratio_high"]
    assert float(split[0]["ms_per_token"]) == pytest.approx(float(split[0]["total_ms"]) / int(split[0]["tokens"]))
    steps = v["split_step_samples_ms"]
    assert len(steps) >= MIN_ROUNDS and all(len(g) == v["split_decode_steps"] for g in steps)
    assert v["rise_per_doubling"] == pytest.approx((1 + v["step_rise"]) ** (1 / v["flat_doublings"]) - 1)
    assert v["rise_per_doubling_low"] <= v["rise_per_doubling"] <= v["rise_per_doubling_high"]
    # the rise is the two steps' ratio paired round by round, from the samples the run published
    smallest = min(int(c) for c in v["decode_samples_ms"])
    rise = paired_ratio(v["decode_samples_ms"][str(v["flat_up_to"])], v["decode_samples_ms"][str(smallest)])
    assert (1 + v["step_rise"], 1 + v["step_rise_low"], 1 + v["step_rise_high"]) == pytest.approx(rise, rel=1e-3)
    _assert_per_token_change_pairs_the_published_prefills(v)
    prefills = v["prefill_samples_ms"]
    for r in table_rows(folder, "prefill"):  # every length kept at least its rounds, and they are the ones published
        assert (
            int(r["time_samples"])
            == len(prefills[r["prompt_tokens"]])
            >= Config.for_profile("smoke").prefill_min_rounds
        )


@pytest.mark.smoke
def test_breakdown_sums_to_the_profiled_step(folder):
    rows = table_rows(folder, "breakdown")
    contexts = sorted({int(r["cache_tokens"]) for r in rows})
    for c in contexts:
        parts = [r for r in rows if int(r["cache_tokens"]) == c]
        assert [r["part"] for r in parts] == list(GROUPS.values())
        step = parts[-1]
        assert float(step["share"]) == 1.0 and int(step["calls"]) > 0
        assert int(step["calls"]) == sum(int(r["calls"]) for r in parts[:-2])  # every operator in one group
    v = _values(folder)
    assert v["ops_per_step"] > 0 and v["operator_low_us"] <= v["operator_us"] <= v["operator_high_us"]
    assert v["fixed_ms"] == pytest.approx(v["ops_per_step"] * v["operator_us"] / 1e3)
    # the step's arithmetic at the run's one-row ceiling, its balance at the peak over the bandwidth
    assert v["arithmetic_ms"] == pytest.approx(v["step_flops"] / (v["one_row_gflops"] * 1e9) * 1e3)
    assert v["balance_flops_per_byte"] == pytest.approx(v["peak_gflops"] / v["bandwidth_gb_s"])


@pytest.mark.smoke
def test_every_step_carries_its_prediction(folder):
    """Every timed step's predicted time is the larger of its memory and compute terms plus
    its fixed term (the split's decode phase: its steps summed, so at least that), and
    measured over predicted is the measured median over it."""
    checked = 0
    for table, stem in (("decode", "step"), ("decode", "compiled"), ("prefill", "time"), ("split", "total")):
        for r in table_rows(folder, table):
            if r[f"{stem}_ms"] == "":
                continue  # a compiled step where no compiler ran
            memory, compute, fixed = (float(r[f"{stem}_{term}_ms"]) for term in ("memory", "compute", "fixed"))
            predicted = float(r[f"{stem}_predicted_ms"])
            if table == "split" and r["phase"].startswith("decode"):
                assert predicted >= max(memory, compute) / int(r["tokens"]) and predicted <= memory + compute + fixed
            else:
                assert predicted == pytest.approx(max(memory, compute) + fixed)
            assert float(r[f"{stem}_over_predicted"]) == pytest.approx(float(r[f"{stem}_ms"]) / predicted)
            assert r[f"{stem}_bound"] == ("memory" if memory >= compute else "compute")
            assert float(r[f"{stem}_moved_bytes"]) > 0 and float(r[f"{stem}_flops"]) > 0
            checked += 1
    assert checked >= 8
    decode = {int(r["cache_tokens"]): r for r in table_rows(folder, "decode")}
    # the eager step's growing cache is passed over three times, the compiled step's once
    small, large = min(decode), max(decode)
    added = float(decode[large]["step_moved_bytes"]) - float(decode[small]["step_moved_bytes"])
    assert added == pytest.approx(3 * 512 * (large - small))
    added = float(decode[large]["compiled_moved_bytes"]) - float(decode[small]["compiled_moved_bytes"])
    assert added == pytest.approx(512 * (large - small))


@pytest.mark.smoke
def test_settings_are_set_against_the_runs_own(folder):
    rows, v = table_rows(folder, "settings"), _values(folder)
    keys = [(r["compiled"] == "true", r["dtype"], int(r["threads"])) for r in rows]
    threads = keys[0][2]
    assert keys == [(c, {"run": "float32", "other": "bfloat16"}[d], n) for c, d, n in setting_points(threads)]
    assert float(rows[0]["speedup"]) == 1.0
    assert int(rows[1]["weight_bytes"]) * 2 == int(rows[0]["weight_bytes"])  # bfloat16 halves fp32's bytes
    best = max((r for r in rows if r["step_ms"]), key=lambda r: float(r["fraction_of_floor"]))
    assert (v["settings_best_dtype"], v["settings_best_threads"]) == (best["dtype"], int(best["threads"]))
    assert v["settings_best_fraction"] == pytest.approx(float(best["fraction_of_floor"]))


# The counts, worked by hand for the tiny architecture: hidden 64, 4 heads and 2 kv heads
# of 16 dims, MLP 128, vocabulary 512 (a tied head), 2 layers.
_TINY_SHAPE = {"layers": 2, "heads": 4, "head_dim": 16}
_PER_LAYER_MACS = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128  # q, k and v, o, MLP: 36,864


@pytest.fixture(scope="module")
def tiny():
    return load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32).model


def test_linear_macs_and_bytes_by_hand(tiny):
    assert linear_macs(tiny) == 2 * _PER_LAYER_MACS + 64 * 512 == 106_496
    counts = model_counts(tiny)
    assert (counts.weight_macs, counts.kv_bytes_per_token, counts.logit_bytes) == (106_496, 512, 512 * 4)
    # a prefill's operators do not depend on its length (the prefill table counts them once)
    from measure.lab.generation import prefill

    assert count_ops(lambda: prefill(tiny, torch.ones((1, 4), dtype=torch.long))) == count_ops(
        lambda: prefill(tiny, torch.ones((1, 16), dtype=torch.long))
    )
    # the head's weight is the embedding's storage: counted once, as the head's
    assert linear_weight_bytes(tiny) == 4 * (2 * _PER_LAYER_MACS + 512 * 64) == 425_984


def test_flops_by_hand():
    from measure.lab.step_work import ModelCounts, decode_work

    tiny = ModelCounts(
        weight_bytes=425_984,
        weight_macs=106_496,
        kv_bytes_per_token=512,
        logit_bytes=2048,
        dtype="float32",
        **_TINY_SHAPE,
    )
    # attention: 2 (q.K and p.V) x 2 layers x 4 heads x 16 dims = 256 MACs per query-key pair
    assert tiny.attention_macs(1, 5) == 256 * 5  # a step at 4 cached positions: the new token's key too
    assert decode_work(tiny, context=4).flops == 2 * (106_496 + 1_280) == 215_552
    assert prefill_work(tiny, prompt=16).flops == 2 * (106_496 * 16 + 256 * 16 * 16) == 3_538_944


def test_flat_range_stops_at_the_limit():
    rows = [{"cache_tokens": c} for c in (16, 64, 256, 1024, 4096)]
    assert flat_range(rows, 1024) == (rows[0], rows[3])
    assert flat_range(rows[:2], 1024) == (rows[0], rows[1])
    assert flat_range(rows[4:], 1024) == (rows[4], rows[4])  # none within: the smallest alone


def test_operators_are_grouped_and_counted():
    assert [group_of(op) for op in ("aten::mm", "aten::scaled_dot_product_attention", "aten::cat")] == [
        "matmul",
        "attention",
        "concat",
    ]
    assert [group_of(op) for op in ("aten::view", "aten::mul", "aten::nonexistent")] == [
        "bookkeeping",
        "elementwise",
        "other",
    ]
    x = torch.ones(3)
    assert count_ops(lambda: torch.add(x, x)) == 1
    assert count_ops(lambda: (x + x) * x) == 2


def test_settings_points():
    assert setting_points(2) == [(False, "run", 2), (False, "other", 2), (False, "run", 1), (True, "run", 2)]
    assert setting_points(1) == [(False, "run", 1), (False, "other", 1), (True, "run", 1)]
    assert other_dtype(torch.float32) == torch.bfloat16 and other_dtype(torch.float16) == torch.float32


def test_work_is_counted_for_the_fewest_rounds():
    # Six rounds and a warm-up: the split's prefill point and its untimed prefill (6 tokens)
    # and 3 steps; prefills at 4 and 16 tokens; eager and compiled at 2 contexts, two
    # warm-ups each, and each compiled context's first call, two compilations; two
    # contexts profiled and one step counted; four settings with two warm-ups.
    # and one prefill at the shortest prompt and two steps (one per dtype) whose operators are counted
    assert work(Config.for_profile("smoke")) == ForwardPasses(
        2 * 6 * 7 + 20 * 7 + 4, 3 * 7 + 2 * 2 * 8 + 2 + 2 * 7 + 1 + 4 * 8 + 2, 2
    )


def test_random_cache_has_the_model_shape(tiny):
    cache = random_cache(tiny, batch=3, tokens=10)
    assert cache.get_seq_length() == 10
    assert cache_storage_bytes(cache) == 3 * 10 * 512


def test_decode_step_at_keeps_the_context_fixed(tiny):
    cache = random_cache(tiny, batch=1, tokens=8)
    token = torch.zeros(1, 1, dtype=torch.long)
    first, cache = decode_step_at(tiny, token, cache, 8)
    assert cache.get_seq_length() == 9
    again, cache = decode_step_at(tiny, token, cache, 8)
    assert cache.get_seq_length() == 9 and torch.equal(first, again)  # same context, same step


def test_copy_bandwidth_counts_read_and_write(monkeypatch):
    from measure.lab import bandwidth

    clocked = []
    real = bandwidth.clocked
    monkeypatch.setattr(bandwidth, "clocked", lambda fn, device: clocked.append(1) or real(fn, device))
    bw = copy_bandwidth(copy_bytes=2**20, device=torch.device("cpu"), warmup=1, repeats=3, copies_per_sample=5)
    assert bw.moved_bytes == 2**21 and len(bw.timing.samples_s) == 3 and len(clocked) == 3
    assert bw.bytes_per_s == pytest.approx(2**21 / bw.timing.median_s)
    assert bw.row()["copies_per_sample"] == 5 and bw.row()["bandwidth_gb_s"] == pytest.approx(bw.bytes_per_s / 1e9)


def test_a_sample_is_the_time_of_one_copy_of_several(monkeypatch):
    """Each sample clocks all its copies once and divides: 5 copies clocked at 1 s is 0.2 s a copy."""
    from measure.lab import bandwidth

    monkeypatch.setattr(bandwidth, "clocked", lambda fn, device: fn() or 1.0)
    bw = copy_bandwidth(copy_bytes=1024, device=torch.device("cpu"), warmup=0, repeats=2, copies_per_sample=5)
    assert bw.timing.samples_s == (0.2, 0.2)
    assert bw.bytes_per_s == pytest.approx(2048 / 0.2)


def test_weight_bytes_counts_tied_embeddings_once(tiny):
    # tiny: embeddings 512 x 64 (tied to the head), 2 layers of q,k,v,o + MLP + 2 norms, final norm; fp32
    per_layer = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128 + 2 * 64
    assert weight_bytes(tiny) == 4 * (512 * 64 + 2 * per_layer + 64)


@pytest.mark.smoke
def test_the_figures_draw_data_with_intervals(folder):
    """The page's figures read this data as written (bars from the intervals), as they
    read data measured before intervals (bars from the IQR; the build of site_data)."""
    import matplotlib.pyplot as plt

    from sitekit import figures
    from sitekit.rendering.pagedata import SiteData

    if not figures.REGISTRY:
        figures._load_all()
    data = SiteData(folder.parent)
    for name in ("prefill_decode.decode", "prefill_decode.per_token"):
        fig = figures.REGISTRY[name](data)
        assert fig.axes[0].get_legend() is not None, name
        plt.close(fig)


def test_the_published_per_token_change_pairs_every_round_the_two_longest_prompts_share():
    published = REPO / "site_data" / "prefill_decode"
    v = _values(published)
    prefills, least = v["prefill_samples_ms"], Config.for_profile(_meta(published)["profile"]).prefill_min_rounds
    assert least > 6  # more than the six whose interval runs from the smallest sample to the largest
    assert min(len(s) for s in prefills.values()) >= least
    _assert_per_token_change_pairs_the_published_prefills(v)


def test_a_rise_between_two_contexts_carries_the_cautious_range_of_a_difference():
    from measure.experiments.prefill_decode.regime import _rise

    part = GROUPS["concat"]
    rows = [
        {"cache_tokens": 16, "part": part, "self_ms": 2.0, "self_low_ms": 1.8, "self_high_ms": 2.3},
        {"cache_tokens": 1024, "part": part, "self_ms": 5.0, "self_low_ms": 4.6, "self_high_ms": 5.5},
    ]
    assert _rise(rows, 16, 1024, "concat") == pytest.approx(
        {"breakdown_rise_concat_ms": 3.0, "breakdown_rise_concat_low_ms": 2.3, "breakdown_rise_concat_high_ms": 3.7}
    )
