"""The compiled decode step (measure/lab/compiled_decode.py): the same numbers as the
eager step, a cache held at its context, the pages' columns from a real smoke run, and
a machine without a compiler said so instead of failing; the run's estimate
(measure/lab/estimate.py) against hand-counted work."""

import json

import pytest
import torch

from measure.experiments import batching, cache_size
from measure.lab import compiled_decode
from measure.lab.compiled_decode import compiled_decoder, compiled_step_at, compiler_unavailable, static_cache
from measure.lab.estimate import COMPILE_S, ForwardPasses, UnitCosts
from measure.lab.generation import random_cache
from measure.lab.models import load_model
from measure.runner import run_experiments
from tests.helpers import paired_ratio, table_rows


@pytest.fixture(scope="module")
def tiny():
    return load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32).model


def _values(folder):
    return {k: v["value"] for k, v in json.loads((folder / "meta.json").read_text())["values"].items()}


@pytest.mark.slow
def test_the_compiler_runs_here():
    assert compiler_unavailable("cpu") is None


@pytest.mark.slow
@pytest.mark.parametrize("batch, tokens", [(1, 5), (1, 12), (3, 7)])
def test_compiled_step_computes_what_the_eager_step_computes(tiny, batch, tokens):
    """Same seed, same random keys and values in both caches: the compiled step against
    the static cache gives the eager step's logits (float32, to rounding)."""
    token = torch.arange(batch).view(batch, 1) + 3
    with torch.no_grad():
        eager = tiny(input_ids=token, past_key_values=random_cache(tiny, batch=batch, tokens=tokens)).logits
    cache = static_cache(tiny, batch=batch, tokens=tokens)
    compiled = compiled_step_at(compiled_decoder(tiny, torch.device("cpu")), token, cache, tokens)
    assert compiled.shape == eager.shape
    torch.testing.assert_close(compiled, eager, rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_a_repeated_step_sees_the_same_context(tiny):
    cache = static_cache(tiny, batch=1, tokens=6)
    assert all(layer.max_cache_len == 7 for layer in cache.layers)  # room for the position the step writes
    decoder = compiled_decoder(tiny, torch.device("cpu"))
    token = torch.tensor([[9]])
    first = compiled_step_at(decoder, token, cache, 6)
    assert all(int(layer.cumulative_length) == 7 for layer in cache.layers)
    again = compiled_step_at(decoder, token, cache, 6)
    assert torch.equal(first, again)


def test_one_compilation_per_model(tiny):
    assert compiled_decoder(tiny, torch.device("cpu")) is compiled_decoder(tiny, torch.device("cpu"))


def test_the_eager_stand_in_compiles_nothing_and_computes_the_step(tiny, monkeypatch):
    """The drift gate without timings (measure check) runs the compiled step's points
    with the eager step in its place: the same rows, the same logits, no compilation."""
    token = torch.tensor([[4]])
    with torch.no_grad():
        eager = tiny(input_ids=token, past_key_values=random_cache(tiny, batch=1, tokens=5)).logits
    monkeypatch.setattr(torch, "compile", lambda *a, **k: pytest.fail("compiled within the stand-in"))
    with compiled_decode.eager_stand_in():
        decoder = compiled_decoder(tiny, torch.device("cpu"))
        got = compiled_step_at(decoder, token, static_cache(tiny, batch=1, tokens=5), 5)
    assert decoder.method == compiled_decode.method(torch.device("cpu"))
    torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5)
    with pytest.raises(pytest.fail.Exception):  # outside it, the step is compiled
        compiled_decoder(
            load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32).model, torch.device("cpu")
        )


def test_a_failing_compiler_is_reported_in_one_line(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("InvalidCxxCompiler: No working C++ compiler found\nlong details")

    compiled_decode.compiler_unavailable.cache_clear()
    monkeypatch.setattr(torch, "compile", broken)
    try:
        reason = compiler_unavailable("cpu")
    finally:
        compiled_decode.compiler_unavailable.cache_clear()
    assert reason == "torch.compile is not available on this cpu: InvalidCxxCompiler: No working C++ compiler found"


@pytest.mark.smoke
def test_smoke_run_sets_compiled_beside_eager(smoke_data):
    folder = smoke_data / "prefill_decode"
    v = _values(folder)
    assert v["compiled_available"] is True and "torch.compile" in v["compiled_method"]
    assert v["compile_s"] >= 0  # 0 when this process compiled the same step before (the compiler caches it)
    rows = table_rows(folder, "decode")
    for r in rows:
        compiled, floor = float(r["compiled_ms"]), float(r["floor_ms"])
        eager_ms, compiled_ms = (v[f"{way}_samples_ms"][r["cache_tokens"]] for way in ("decode", "compiled"))
        speedup = tuple(float(r[f"compiled_speedup{s}"]) for s in ("", "_low", "_high"))
        assert speedup == pytest.approx(paired_ratio(eager_ms, compiled_ms), rel=1e-3)  # one sweep: paired
        assert float(r["compiled_fraction_of_floor"]) == pytest.approx(floor / compiled)
    speedups = [float(r["compiled_speedup"]) for r in rows]
    assert (v["compiled_speedup_worst"], v["compiled_speedup_best"]) == (min(speedups), max(speedups))
    assert v["compiled_speedup_smallest"] == pytest.approx(speedups[0])
    assert set(v["compiled_samples_ms"]) == {r["cache_tokens"] for r in rows}


@pytest.mark.smoke
def test_batching_floor_grows_by_one_cache_per_request(smoke_data):
    folder = smoke_data / "batching"
    v = _values(folder)
    rows = [r for r in table_rows(folder, "sweep") if r["status"] == "measured"]
    bw = v["bandwidth_gb_s"] * 1e9
    per_request = v["kv_bytes_per_token"] * int(rows[0]["cache_tokens"])
    for r in rows:
        b = int(r["batch"])
        assert float(r["floor_ms"]) == pytest.approx((v["weight_bytes"] + b * per_request) / bw * 1e3)
        assert float(r["fraction_of_floor"]) == pytest.approx(float(r["floor_ms"]) / float(r["step_ms"]))
        assert float(r["compiled_throughput_tok_s"]) == pytest.approx(b / float(r["compiled_step_ms"]) * 1e3)
        eager_ms, compiled_ms = v["sweep_samples_ms"][r["batch"]], v["compiled_samples_ms"][r["batch"]]
        speedup = tuple(float(r[f"compiled_speedup{s}"]) for s in ("", "_low", "_high"))
        assert speedup == pytest.approx(paired_ratio(eager_ms, compiled_ms), rel=1e-3)  # one sweep: paired
    assert v["fraction_smallest_batch"] == pytest.approx(float(rows[0]["fraction_of_floor"]))
    assert v["compiled_fraction_largest_batch"] == pytest.approx(float(rows[-1]["compiled_fraction_of_floor"]))


@pytest.mark.smoke
def test_without_a_compiler_the_run_says_so(tmp_path, monkeypatch):
    reason = "torch.compile is not available on this cpu: no compiler"
    from measure.experiments.batching import steps as batching_steps
    from measure.experiments.prefill_decode import settings, sweeps

    for module in (sweeps, settings, batching_steps):
        monkeypatch.setattr(module, "compiler_unavailable", lambda device_type: reason)
    run_experiments(
        names=["prefill_decode", "batching"], model="arch:tiny", device="cpu", profile="smoke", out=tmp_path, quiet=True
    )
    for name, table, column in (("prefill_decode", "decode", "compiled_ms"), ("batching", "sweep", "compiled_step_ms")):
        v = _values(tmp_path / name)
        assert v["compiled_available"] is False and v["compiled_method"] == reason
        assert v["compiled_speedup_best"] is None
        assert all(r[column] == "" for r in table_rows(tmp_path / name, table))
        assert all(r["step_ms"] for r in table_rows(tmp_path / name, table))  # the eager step is still measured
    unmeasured = [r["compiled"] for r in table_rows(tmp_path / "prefill_decode", "settings") if r["step_ms"] == ""]
    assert unmeasured == ["true"]  # the compiled setting alone


def test_estimate_prices_counted_work():
    units = UnitCosts(prompt_token_s=0.001, step_s=0.05)
    assert units.seconds(ForwardPasses(1000, 10, 1)) == pytest.approx(1.0 + 0.5 + COMPILE_S)
    assert ForwardPasses(1, 2, 3) + ForwardPasses(10, 20, 30) == ForwardPasses(11, 22, 33)


def test_work_is_counted_by_hand_for_the_smoke_profile():
    # prefill_decode's, at its fewest rounds: tests/test_prefill_decode.py
    # batch sizes 1..8 (the slots cover 1, 2, 4, 8), eager and compiled, each called once
    # to prepare it, a warm-up and six rounds, and the eager step once more to count its
    # work: 8 x (2 x 8 + 1); the admission prefills at 8 and 64 prompt tokens, counted
    # once, a warm-up and six rounds each: (8 + 64) x 8; the profile of B = 8, a warm-up
    # and six rounds of a step at B = 1, a step at B = 8 and a prefill of 8 tokens.
    assert batching.work(batching.Config.for_profile("smoke")) == ForwardPasses(
        (8 + 64) * 8 + 8 * 7, 8 * (2 * 8 + 1) + 2 * 7, 1
    )
    assert cache_size.work(cache_size.Config.for_profile("full")) == ForwardPasses(295 + 4 * 128, 0, 0)
