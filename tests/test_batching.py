"""§4 batching: the smoke run's tables, the knee rule, and out-of-memory handling."""

import json
from types import SimpleNamespace

import pytest
import torch

from measure.experiments import batching
from measure.experiments.batching import sweep as batching_sweep
from measure.experiments.batching.steps import estimated_bytes
from measure.lab.medians import Estimate
from measure.sim.scheduler import skewed_lengths
from tests.helpers import paired_ratio, table_rows


@pytest.fixture(scope="module")
def folder(smoke_data):
    return smoke_data / "batching"


@pytest.fixture(scope="module")
def meta(folder):
    return json.loads((folder / "meta.json").read_text())


@pytest.mark.smoke
def test_sweep_is_relative_to_batch_one(folder, meta):
    rows = table_rows(folder, "sweep")
    sizes, cap = meta["parameters"]["batch_sizes"], meta["parameters"]["extend_cap"]
    batches = [int(r["batch"]) for r in rows]
    # The published sizes, then doublings up to the cap at most.
    assert batches[: len(sizes)] == sizes
    assert all(b == 2 * a for a, b in zip(batches[len(sizes) - 1 :], batches[len(sizes) :], strict=False))
    assert batches[-1] <= cap
    assert meta["values"]["sweep_extended"]["value"] == (len(batches) > len(sizes))
    assert meta["values"]["sweep_stop_reason"]["value"] in (
        batching_sweep.KNEE_ESTABLISHED,
        batching_sweep.CAP_REACHED,
        batching_sweep.WOULD_NOT_FIT,
        batching_sweep.BUDGET_SPENT,
    )
    assert all(r["status"] == "measured" for r in rows)
    assert float(rows[0]["throughput_gain"]) == 1.0 == float(rows[0]["latency_factor"])
    base = float(rows[0]["step_ms"])
    for r in rows:
        b, step = int(r["batch"]), float(r["step_ms"])
        assert float(r["throughput_tok_s"]) == pytest.approx(b / step * 1e3)
        assert float(r["latency_factor"]) == pytest.approx(step / base)
        assert float(r["throughput_gain"]) == pytest.approx(b * base / step)
    assert [int(r["occupancy"]) for r in table_rows(folder, "step_costs")] == list(range(1, 9))


def _interval(row, name):
    low, high = name.replace("_ms", "_low_ms"), name.replace("_ms", "_high_ms")
    return float(row[low]), float(row[name]), float(row[high])


@pytest.mark.smoke
def test_every_timing_is_an_interleaved_median_with_its_interval(folder, meta):
    notes = meta["notes"]
    sweep = [r for r in table_rows(folder, "sweep") if r["status"] == "measured"]
    sizes = meta["parameters"]["batch_sizes"]
    # One sweep holds every batch of the chapter's sizes and the slots, eager and compiled;
    # each batch past them a sweep of its own.
    assert notes["decode_sweep"]["points"] == 2 * len(set(sizes) | set(range(1, meta["parameters"]["slots"] + 1)))
    assert set(notes["extension_sweeps"]) == {r["batch"] for r in sweep if int(r["batch"]) > max(sizes)}
    assert notes["prefill_sweep"]["points"] == len(meta["parameters"]["prefill_lengths"])
    for name, rows in (
        ("step_ms", sweep),
        ("compiled_step_ms", sweep),
        ("step_ms", table_rows(folder, "step_costs")),
        ("prefill_ms", table_rows(folder, "prefill_costs")),
    ):
        for r in rows:
            low, median, high = _interval(r, name)
            assert low <= median <= high
            assert int(r[name.removesuffix("_ms") + "_samples"]) >= 6
    costs = {r["occupancy"]: r for r in table_rows(folder, "step_costs")}
    for r in sweep:  # the simulations' costs are the sweep's own estimates
        if r["batch"] in costs:
            assert _interval(costs[r["batch"]], "step_ms") == _interval(r, "step_ms")
    # The floor divides by the run's one bandwidth, its calibration's.
    assert meta["values"]["bandwidth_gb_s"]["value"] == pytest.approx(meta["run"]["bandwidth_gb_s"])


@pytest.mark.smoke
def test_the_policies_ratios_come_with_their_range(folder, meta):
    v = {k: x["value"] for k, x in meta["values"].items()}
    for name in ("throughput_ratio", "mean_latency_ratio", "p95_latency_ratio", "p99_latency_ratio"):
        assert v[f"{name}_low"] <= v[name] <= v[f"{name}_high"]
    for r in table_rows(folder, "arrival_ratios"):
        for name in ("throughput_ratio", "mean_latency_ratio", "p99_latency_ratio", "mean_ttft_ratio"):
            assert float(r[f"{name}_low"]) <= float(r[name]) <= float(r[f"{name}_high"])


@pytest.mark.smoke
def test_workload_is_committed_with_the_data(folder, meta):
    rows = table_rows(folder, "workload")
    p = meta["parameters"]
    expected = skewed_lengths(
        p["requests"], median=p["output_median"], sigma=p["output_sigma"], seed=p["workload_seed"]
    )
    assert [int(r["output_tokens"]) for r in rows] == expected
    assert meta["values"]["output_total"]["value"] == sum(expected)


@pytest.mark.smoke
def test_policies_and_timeline_agree(folder, meta):
    pol = {r["policy"]: r for r in table_rows(folder, "policies")}
    total = meta["values"]["output_total"]["value"]
    assert {p: int(r["output_tokens"]) for p, r in pol.items()} == {"static": total, "continuous": total}
    assert int(pol["continuous"]["steps"]) < int(pol["static"]["steps"])
    timeline = table_rows(folder, "timeline")
    for policy in ("static", "continuous"):
        mine = [r for r in timeline if r["policy"] == policy]
        assert len(mine) == meta["parameters"]["requests"]
        assert max(int(r["release_step"]) for r in mine) == int(pol[policy]["steps"])
        assert max(float(r["release_ms"]) for r in mine) == pytest.approx(float(pol[policy]["total_ms"]))
        lat = [float(r["release_ms"]) for r in mine]
        assert sum(lat) / len(lat) == pytest.approx(float(pol[policy]["mean_latency_ms"]))
    padding = sum(int(r["release_step"]) - int(r["finish_step"]) for r in timeline if r["policy"] == "static")
    assert padding == meta["values"]["padding_slot_steps"]["value"]
    assert all(r["release_step"] == r["finish_step"] for r in timeline if r["policy"] == "continuous")


@pytest.mark.smoke
def test_paged_memory(folder, meta):
    paged = {r["scheme"]: r for r in table_rows(folder, "paged")}
    assert list(paged) == ["contiguous", "paged", "paged, shared prefix"]
    for r in paged.values():
        assert int(r["peak_stored_bytes"]) <= int(r["peak_reserved_bytes"])
        assert 0 <= float(r["waste"]) < 1
    assert float(paged["paged"]["waste"]) < float(paged["contiguous"]["waste"])
    assert int(paged["paged, shared prefix"]["peak_reserved_bytes"]) < int(paged["paged"]["peak_reserved_bytes"])
    bpt = meta["values"]["kv_bytes_per_token"]["value"]
    assert bpt == 512  # tiny: 2 layers x K,V x 2 kv heads x 16 dims x 4 bytes
    for r in table_rows(folder, "memory_steps"):
        assert int(r["context_bytes"]) % bpt == 0
        assert int(r["shared_stored_bytes"]) <= int(r["shared_reserved_bytes"])
        assert int(r["shared_reserved_bytes"]) <= int(r["paged_reserved_bytes"]) <= int(r["contiguous_reserved_bytes"])


def test_knee_rule():
    # Memory-bound until 8 (step time barely moves), then each doubling doubles the step.
    steps = {1: 10.0, 2: 10.2, 4: 10.5, 8: 11.0, 16: 20.0, 32: 40.0}
    assert batching_sweep.find_knee(sorted(steps.items())) == 8
    # Exactly at the threshold: a doubling that makes the step sqrt(2) slower counts as the knee.
    assert batching_sweep.find_knee([(1, 1.0), (2, 2**0.5)]) == 1
    assert batching_sweep.find_knee([(1, 1.0), (2, 1.0), (4, 1.1)]) is None
    # Uneven steps: 4 -> 16 is four times the batch; a step 2x slower is the threshold.
    assert batching_sweep.find_knee([(1, 1.0), (4, 1.2), (16, 2.4)]) == 4
    # One noisy early point does not make a knee when later growth is cheap again.
    assert batching_sweep.find_knee([(1, 1.0), (2, 1.6), (4, 1.7), (8, 1.8), (16, 3.0), (32, 6.0)]) == 8


def _timing(ms):
    return Estimate.of((ms / 1e3,) * 6, target=0.03)


def _stepped(ms):
    # a batch's result as the sweep holds it: its eager step's estimate, and more
    return SimpleNamespace(eager=_timing(ms))


@pytest.mark.parametrize(
    "error",
    [
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate"),
        RuntimeError("DefaultCPUAllocator: out of memory"),
    ],
)
def test_out_of_memory_is_recorded_and_stops_the_sweep(error):
    seen = []

    def measure(b):
        seen.append(b)
        if b >= 16:
            raise error
        return _timing(b)

    out = batching_sweep.sweep([1, 2, 4, 8, 16, 32, 64], measure)
    assert seen == [1, 2, 4, 8, 16]  # nothing larger is tried
    assert out[16] == batching_sweep.OOM and out[32] == out[64] == batching_sweep.NOT_RUN
    assert all(isinstance(out[b], Estimate) for b in (1, 2, 4, 8))


def test_other_errors_are_not_swallowed():
    def measure(b):
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        batching_sweep.sweep([1, 2], measure)


def test_an_out_of_memory_row_renders_as_such():
    cfg = batching.Config.for_profile("smoke")
    results = {1: _stepped(1), 2: _stepped(1.5), 4: batching_sweep.OOM, 8: batching_sweep.NOT_RUN}
    rows, growths, v = batching_sweep.sweep_rows(cfg.batch_sizes, cfg.cache_tokens, results)
    rows = {r["batch"]: r for r in rows}
    assert rows[4]["status"] == batching_sweep.OOM and rows[4]["step_ms"] is None
    assert rows[8]["status"] == batching_sweep.NOT_RUN
    assert v["out_of_memory"] is True and v["largest_measured_batch"] == 2
    assert [(g["from_batch"], g["batch"]) for g in growths] == [(1, 2)]


# The extended sweep's stop rule, on planted sweeps. A step costing 1 s up to B = 8,
# then doubling with the batch: the knee is B = 8.
_KNEE_AT_8 = [(1, 1.0), (2, 1.0), (4, 1.0), (8, 1.0), (16, 2.0), (32, 4.0)]
_NO_KNEE = [(1, 1.0), (2, 1.1), (4, 1.2), (8, 1.3)]
_RULE = dict(last_status="measured", cap=64, confirmations=2, fits=lambda b: True, spent_s=0.0, last_cost_s=1.0)


def _next(points, **changes):
    return batching_sweep.next_batch(points, **(_RULE | {"budget_s": 100.0} | changes))


def test_the_extension_stops_once_the_knee_is_confirmed():
    assert _next(_KNEE_AT_8) == batching_sweep.KNEE_ESTABLISHED
    # One growth past the knee is not enough when two are asked for: double again.
    assert _next(_KNEE_AT_8[:-1]) == 32
    assert _next(_KNEE_AT_8[:-1], confirmations=1) == batching_sweep.KNEE_ESTABLISHED


def test_without_a_knee_the_extension_doubles():
    assert _next(_NO_KNEE) == 16


def test_the_extension_stops_at_out_of_memory_the_cap_memory_and_the_budget():
    assert _next(_NO_KNEE, last_status=batching_sweep.OOM) == batching_sweep.OOM
    assert _next(_NO_KNEE, cap=15) == batching_sweep.CAP_REACHED
    assert _next(_NO_KNEE, cap=16) == 16  # the cap itself may be measured
    assert _next(_NO_KNEE, fits=lambda b: b < 16) == batching_sweep.WOULD_NOT_FIT
    # The next batch is estimated at twice the last one's cost: 10 + 2 x 5 = 20 s.
    assert _next(_NO_KNEE, spent_s=10.0, last_cost_s=5.0, budget_s=20.0) == 16
    assert _next(_NO_KNEE, spent_s=10.0, last_cost_s=5.0, budget_s=19.9) == batching_sweep.BUDGET_SPENT


def _planted(step_s: dict[int, float], *, oom_from: int | None = None, cost_s: float = 1.0):
    """A measure() that returns planted step times, runs out of memory from a batch on,
    and advances a fake clock by ``cost_s`` x B / 8 per batch (work grows with B)."""
    now, seen = [0.0], []

    def measure(b):
        seen.append(b)
        now[0] += cost_s * b / 8
        if oom_from is not None and b >= oom_from:
            raise RuntimeError("DefaultCPUAllocator: out of memory")
        return _timing(step_s[b] * 1e3)

    return measure, (lambda: now[0]), seen


def _extend(results, measure, clock, **changes):
    rule = dict(cap=1024, confirmations=2, fits=lambda b: True, budget_s=1000.0) | changes
    return batching_sweep.extend_sweep(
        results, [1, 2, 4, 8], measure, seconds=lambda r: r.median_s, last_cost_s=1.0, clock=clock, **rule
    )


def _base(step_s):
    # The published sizes, and an occupancy (3) that is not one of them: it must not count.
    return {b: _timing(step_s[b] * 1e3) for b in (1, 2, 3, 4, 8)}


def test_extend_sweep_measures_until_the_knee_is_confirmed():
    step_s = {1: 1.0, 2: 1.0, 3: 9.0, 4: 1.0, 8: 1.0, 16: 1.1, 32: 2.0, 64: 4.0, 128: 8.0}
    measure, clock, seen = _planted(step_s)
    results = _base(step_s)
    added, stop, spent = _extend(results, measure, clock)
    assert (added, stop) == ([16, 32, 64], batching_sweep.KNEE_ESTABLISHED)
    assert seen == [16, 32, 64]
    assert spent == pytest.approx((16 + 32 + 64) / 8)
    assert batching_sweep.find_knee([(b, results[b].median_s) for b in (1, 2, 4, 8, 16, 32, 64)]) == 16


def test_extend_sweep_records_out_of_memory_and_stops():
    step_s = {b: 1.0 for b in (1, 2, 3, 4, 8, 16, 32)}
    measure, clock, seen = _planted(step_s, oom_from=32)
    results = _base(step_s)
    added, stop, _ = _extend(results, measure, clock)
    assert (added, stop, seen) == ([16, 32], batching_sweep.OOM, [16, 32])
    assert results[32] == batching_sweep.OOM
    # A base sweep that already ran out of memory is not extended.
    results = {1: _timing(1), 2: _timing(1), 4: batching_sweep.OOM, 8: batching_sweep.NOT_RUN}
    assert _extend(results, measure, clock) == ([], batching_sweep.OOM, 0.0)


def test_extend_sweep_stops_at_the_cap_and_the_budget():
    step_s = {b: 1.0 for b in (1, 2, 3, 4, 8, 16, 32, 64, 128)}
    measure, clock, _ = _planted(step_s)
    assert _extend(_base(step_s), measure, clock, cap=32)[:2] == ([16, 32], batching_sweep.CAP_REACHED)
    # 16 costs 2 s of the 7 s budget; 32 is then estimated at 4 s (2 + 4 <= 7) and costs
    # 4; 64 would be estimated at 8 more: 6 + 8 > 7.
    measure, clock, _ = _planted(step_s)
    assert _extend(_base(step_s), measure, clock, budget_s=7.0)[:2] == ([16, 32], batching_sweep.BUDGET_SPENT)


def test_the_next_batch_memory_estimate_by_hand():

    config = SimpleNamespace(vocab_size=100, intermediate_size=20, hidden_size=10)
    # Per request: two caches of 63 + 1 positions at 8 bytes (1,024), and fp32 activations
    # 4 x (100 + 20 + 4 x 10) = 640 bytes.
    assert estimated_bytes(config, 4, 63, 8) == 4 * (1024 + 640)
    assert batching_sweep.available_bytes(torch.device("cpu")) > 0


def test_the_workload_prompt_must_be_among_the_prefill_lengths():
    with pytest.raises(ValueError, match=r"must include the workload's prompt \(64 tokens\)"):
        batching.Config(prefill_lengths=(16, 32))


@pytest.mark.smoke
def test_each_step_carries_its_prediction_from_what_it_counted(folder, meta):
    """The roofline's prediction beside every step: the larger of bytes and FLOPs over
    their ceilings plus the operators' fixed cost, measured over it, and the FLOP/s the
    step reached; every request's cache counted alike at every batch."""
    rows = [r for r in table_rows(folder, "sweep") if r["status"] == "measured"]
    per_request = set()
    for r in rows:
        memory, compute, fixed = (float(r[f"step_{t}_ms"]) for t in ("memory", "compute", "fixed"))
        assert float(r["step_predicted_ms"]) == pytest.approx(max(memory, compute) + fixed)
        assert float(r["step_over_predicted"]) == pytest.approx(float(r["step_ms"]) / float(r["step_predicted_ms"]))
        assert r["step_bound"] == ("memory" if memory >= compute else "compute")
        assert float(r["achieved_gflop_s"]) == pytest.approx(int(r["step_flops"]) / float(r["step_ms"]) / 1e6)
        assert int(r["step_moved_bytes"]) >= meta["values"]["weight_bytes"]["value"] + int(r["cache_bytes"])
        per_request.add(int(r["cache_bytes"]) // int(r["batch"]))
        if r["compiled_step_ms"]:  # the compiled step: no operators counted, its cache read once
            assert float(r["compiled_step_fixed_ms"]) == 0.0
    assert len(per_request) == 1 and meta["values"]["cache_bytes_per_request"]["value"] == per_request.pop()
    for r in table_rows(folder, "prefill_costs"):
        measured, predicted = float(r["prefill_ms"]), float(r["prefill_predicted_ms"])
        assert float(r["prefill_over_predicted"]) == pytest.approx(measured / predicted)


@pytest.mark.smoke
def test_each_growth_is_paired_round_by_round_within_a_sweep(folder, meta):
    samples = meta["values"]["sweep_samples_ms"]["value"]
    extended = set(meta["notes"]["extension_sweeps"])
    growths = table_rows(folder, "growths")
    assert [int(g["batch"]) for g in growths] == [int(r["batch"]) for r in table_rows(folder, "sweep")][1:]
    for g in growths:
        low, mid, high = (float(g[c]) for c in ("slowdown_low", "slowdown", "slowdown_high"))
        assert low <= mid <= high
        assert float(g["gain"]) == pytest.approx(int(g["batch"]) / int(g["from_batch"]) / mid)
        if g["batch"] not in extended:  # both points of the main sweep
            paired = paired_ratio(samples[g["batch"]], samples[g["from_batch"]])
            assert (mid, low, high) == pytest.approx(paired, rel=2e-3)


@pytest.mark.smoke
def test_arrivals_stay_below_each_policys_capacity(folder, meta):
    """The loads are fractions of static batching's capacity, the lower one, so both keep up."""
    v = {k: x["value"] for k, x in meta["values"].items()}
    assert v["static_capacity_req_s"] < v["capacity_req_s"]
    assert v["capacity_ratio"] == pytest.approx(v["capacity_req_s"] / v["static_capacity_req_s"])
    assert v["capacity_ratio_low"] <= v["capacity_ratio"] <= v["capacity_ratio_high"]
    for r in table_rows(folder, "arrivals"):
        assert float(r["own_load"]) < 1
        if r["policy"] == "static":
            assert float(r["own_load"]) == pytest.approx(float(r["load"]))
    parts = {r["part"] for r in table_rows(folder, "breakdown")}
    assert len(parts) == 8 and {r["pass"] for r in table_rows(folder, "breakdown")} == {"decode step", "prefill"}
