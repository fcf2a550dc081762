"""§4 batching: the smoke run's tables, the knee rule, and out-of-memory handling."""

import csv
import json

import pytest
import torch

from measure.experiments import batching
from measure.lab import batching_sweep
from measure.lab.timing import Timing
from measure.sim.scheduler import skewed_lengths


def _rows(folder, table):
    with open(folder / f"{table}.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def folder(smoke_data):
    return smoke_data / "batching"


@pytest.fixture(scope="module")
def meta(folder):
    return json.loads((folder / "meta.json").read_text())


def test_sweep_is_relative_to_batch_one(folder, meta):
    rows = _rows(folder, "sweep")
    assert [int(r["batch"]) for r in rows] == meta["parameters"]["batch_sizes"]
    assert all(r["status"] == "measured" for r in rows)
    assert float(rows[0]["throughput_gain"]) == 1.0 == float(rows[0]["latency_factor"])
    base = float(rows[0]["step_ms"])
    for r in rows:
        b, step = int(r["batch"]), float(r["step_ms"])
        assert float(r["throughput_tok_s"]) == pytest.approx(b / step * 1e3)
        assert float(r["latency_factor"]) == pytest.approx(step / base)
        assert float(r["throughput_gain"]) == pytest.approx(b * base / step)
    assert [int(r["occupancy"]) for r in _rows(folder, "step_costs")] == list(range(1, 9))


def test_workload_is_committed_with_the_data(folder, meta):
    rows = _rows(folder, "workload")
    p = meta["parameters"]
    expected = skewed_lengths(
        p["requests"], median=p["output_median"], sigma=p["output_sigma"], seed=p["workload_seed"]
    )
    assert [int(r["output_tokens"]) for r in rows] == expected
    assert meta["values"]["output_total"]["value"] == sum(expected)


def test_policies_and_timeline_agree(folder, meta):
    pol = {r["policy"]: r for r in _rows(folder, "policies")}
    total = meta["values"]["output_total"]["value"]
    assert {p: int(r["output_tokens"]) for p, r in pol.items()} == {"static": total, "continuous": total}
    assert int(pol["continuous"]["steps"]) < int(pol["static"]["steps"])
    timeline = _rows(folder, "timeline")
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


def test_paged_memory(folder, meta):
    paged = {r["scheme"]: r for r in _rows(folder, "paged")}
    assert list(paged) == ["contiguous", "paged", "paged, shared prefix"]
    for r in paged.values():
        assert int(r["peak_stored_bytes"]) <= int(r["peak_reserved_bytes"])
        assert 0 <= float(r["waste"]) < 1
    assert float(paged["paged"]["waste"]) < float(paged["contiguous"]["waste"])
    assert int(paged["paged, shared prefix"]["peak_reserved_bytes"]) < int(paged["paged"]["peak_reserved_bytes"])
    bpt = meta["values"]["kv_bytes_per_token"]["value"]
    assert bpt == 512  # tiny: 2 layers x K,V x 2 kv heads x 16 dims x 4 bytes
    for r in _rows(folder, "memory_steps"):
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
    return Timing((ms / 1e3,))


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
    assert all(isinstance(out[b], Timing) for b in (1, 2, 4, 8))


def test_other_errors_are_not_swallowed():
    def measure(b):
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        batching_sweep.sweep([1, 2], measure)


def test_an_out_of_memory_row_renders_as_such():
    cfg = batching.Config.for_profile("smoke")
    results = {1: _timing(1), 2: _timing(1.5), 4: batching_sweep.OOM, 8: batching_sweep.NOT_RUN}
    rows, v = batching_sweep.sweep_rows(cfg.batch_sizes, cfg.cache_tokens, results)
    rows = {r["batch"]: r for r in rows}
    assert rows[4]["status"] == batching_sweep.OOM and rows[4]["step_ms"] is None
    assert rows[8]["status"] == batching_sweep.NOT_RUN
    assert v["out_of_memory"] is True and v["largest_measured_batch"] == 2
