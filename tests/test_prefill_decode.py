"""§2 prefill and decode: the smoke run's tables hold together; the helpers it uses."""

import json

import pytest
import torch

from measure.lab.bandwidth import copy_bandwidth, weight_bytes
from measure.lab.generation import cache_storage_bytes, decode_step_at, random_cache
from measure.lab.models import load_model
from tests.helpers import table_rows


@pytest.fixture(scope="module")
def folder(smoke_data):
    return smoke_data / "prefill_decode"


@pytest.mark.smoke
def test_tables_and_sweeps(folder):
    meta = json.loads((folder / "meta.json").read_text())
    assert set(meta["tables"]) == {"split", "prefill", "bandwidth", "decode"}
    params = meta["parameters"]
    assert [int(r["prompt_tokens"]) for r in table_rows(folder, "prefill")] == params["prompt_lengths"]
    assert [int(r["cache_tokens"]) for r in table_rows(folder, "decode")] == params["cache_lengths"]
    split = table_rows(folder, "split")
    assert [int(r["tokens"]) for r in split] == [params["split_prompt_tokens"], params["split_new_tokens"] - 1]


@pytest.mark.smoke
def test_derived_numbers_follow_from_the_measured_ones(folder):
    meta = json.loads((folder / "meta.json").read_text())
    v = {k: x["value"] for k, x in meta["values"].items()}
    for r in table_rows(folder, "prefill"):
        p, ms = int(r["prompt_tokens"]), float(r["time_ms"])
        assert float(r["ms_per_token"]) == pytest.approx(ms / p)
        assert float(r["tokens_per_s"]) == pytest.approx(p / ms * 1e3)
    bw = table_rows(folder, "bandwidth")[0]
    assert int(bw["moved_bytes"]) == 2 * int(bw["copy_bytes"]) == 2 * meta["parameters"]["copy_bytes"]
    floor = v["weight_bytes"] / (v["bandwidth_gb_s"] * 1e9) * 1e3
    for r in table_rows(folder, "decode"):
        assert float(r["tokens_per_s"]) == pytest.approx(1e3 / float(r["step_ms"]))
        assert float(r["floor_ms"]) == pytest.approx(floor)
        assert float(r["fraction_of_floor"]) == pytest.approx(floor / float(r["step_ms"]))
        assert float(r["floor_with_cache_ms"]) > float(r["floor_ms"])
    # tiny: 2 layers x K,V x 2 kv heads x 16 dims x 4 bytes = 512 bytes per cached token
    assert [int(r["cache_bytes"]) for r in table_rows(folder, "decode")] == [
        512 * c for c in meta["parameters"]["cache_lengths"]
    ]
    split = table_rows(folder, "split")
    assert float(split[1]["cost_vs_prompt_token"]) == pytest.approx(v["split_ratio"])
    assert len(v["split_prefill_samples_ms"]) == meta["parameters"]["split_repeats"]


@pytest.fixture(scope="module")
def tiny():
    return load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32).model


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
