"""What a step moves, computes and dispatches (measure/lab/step_work.py), against cases
worked by hand, and the chapter's model counted from its config against the spec's own
numbers."""

import pytest

from measure.lab.roofline import Prediction, Rate, Roofline, summed
from measure.lab.step_work import (
    DYNAMIC_CACHE_PASSES,
    STATIC_CACHE_PASSES,
    ModelCounts,
    config_counts,
    decode_work,
    prefill_work,
)
from measure.reference.public_configs import PUBLIC_CONFIGS

# a made-up model: 1,000 bytes of weights, 100 MACs a row, 10 bytes of cache a token,
# 4 bytes of logits a position; attention 2 x 1 layer x 2 heads x 3 dims = 12 MACs a pair
M = ModelCounts(
    weight_bytes=1000, weight_macs=100, kv_bytes_per_token=10, logit_bytes=4, layers=1, heads=2, head_dim=3, dtype="f"
)


def test_a_decode_step_by_hand():
    w = decode_work(M, context=5, ops=7)
    # weights once; the cache three times (append by copy, read by attention); a new K/V and its logits
    assert w.moved_bytes == 1000 + 3 * 5 * 10 + 10 + 4 == 1164
    assert w.flops == 2 * (100 + 12 * 6) == 344  # the new token scored against 5 cached and itself
    assert (w.rows, w.dtype, w.ops) == (1, "f", 7)
    static = decode_work(M, context=5, cache_passes=STATIC_CACHE_PASSES)
    assert static.moved_bytes == 1000 + 50 + 14 and DYNAMIC_CACHE_PASSES == 3


def test_a_batch_and_a_verification_by_hand():
    batch = decode_work(M, context=5, batch=4)
    assert batch.moved_bytes == 1000 + 4 * (150 + 14) and batch.flops == 4 * 344 and batch.rows == 4
    verify = decode_work(M, context=5, queries=3)  # three new positions against 5 cached
    assert verify.moved_bytes == 1000 + 150 + 3 * 14 and verify.rows == 3
    assert verify.flops == 2 * (3 * 100 + 12 * 3 * 8)


def test_a_prefill_by_hand():
    w = prefill_work(M, prompt=6, ops=9)
    assert w.moved_bytes == 1000 + 6 * (4 + 10) and w.flops == 2 * (100 * 6 + 12 * 36) and w.rows == 6
    assert prefill_work(M, prompt=6, writes_cache=False).moved_bytes == 1000 + 6 * 4  # a recompute pass


def test_the_chapters_model_from_its_config_is_the_specs():
    """Spec: 494,032,768 parameters, 168 projections holding 357.8 M parameters, a tied
    head of 151,936 x 896, and 12,288 bytes of cache per token in fp16."""
    qwen = next(c for c in PUBLIC_CONFIGS if c.model == "Qwen/Qwen2.5-0.5B-Instruct").config
    m = config_counts(qwen, bytes_per_element=2, dtype="float16")
    assert m.weight_bytes == 2 * 494_032_768
    assert m.weight_macs - 151_936 * 896 == 24 * 14_909_440 == 357_826_560
    assert (m.kv_bytes_per_token, m.logit_bytes) == (12_288, 2 * 151_936)
    with pytest.raises(ValueError, match="parameter count"):
        config_counts(
            {"num_hidden_layers": 2, "model_type": "nothing", "hidden_size": 8}, bytes_per_element=2, dtype="x"
        )


def test_steps_in_a_row_add_their_totals_not_their_terms():
    """One step bound by memory (3 ms) and one by compute (5 ms), 1 ms fixed each: 4 + 6
    ms; the larger of the summed terms plus the summed fixed would say 8 + 2 = 10 too, but
    not with 3 ms of memory against 2 of compute: then 4 + 3 = 7, not max(5, 5) + 2."""
    ms = lambda a: Rate(a / 1e3, a / 1e3, a / 1e3)  # noqa: E731
    a = Prediction(memory=ms(3), compute=ms(2), fixed=ms(1), moved_bytes=10, flops=20, ops=1)
    b = Prediction(memory=ms(1), compute=ms(2), fixed=ms(1), moved_bytes=5, flops=7, ops=2)
    both = summed([a, b])
    assert both.total.value == pytest.approx(0.004 + 0.003)
    assert both.memory.value == pytest.approx(0.004) and both.compute.value == pytest.approx(0.004)
    assert (both.moved_bytes, both.flops, both.ops) == (15, 27, 3)
    with pytest.raises(ValueError, match="at least one step"):
        summed([])


def test_a_datasheets_roofline_knows_no_fixed_cost():
    bw = Rate(1e9, 1e9, 1e9)
    roof = Roofline(bandwidth=bw, read_bandwidth=bw, ceilings={"f": ((1, Rate(1e12, 1e12, 1e12)),)}, dispatch=None)
    assert decode_work(M, context=5).predict(roof).total.value == pytest.approx(1164 / 1e9)
    with pytest.raises(ValueError, match="ops=0"):
        decode_work(M, context=5, ops=3).predict(roof)


def test_a_step_named_in_prose_carries_its_measurement_and_its_prediction():
    from measure.lab.medians import Estimate
    from measure.lab.prediction import step_value_cells, step_values

    est = Estimate.of([0.010, 0.011, 0.012, 0.012, 0.013, 0.014], 0.03)  # median 12 ms, interval 10 to 14
    ms = lambda a: Rate(a / 1e3, a / 1e3, a / 1e3)  # noqa: E731
    pred = Prediction(memory=ms(6), compute=ms(2), fixed=ms(2), moved_bytes=1, flops=1, ops=1)  # 8 ms
    cells = step_value_cells("s", est, pred)
    assert set(cells) == {v.name for v in step_values("s", "a step")}
    assert cells["s_ms"] == pytest.approx(12.0) and cells["s_predicted_ms"] == pytest.approx(8.0)
    assert (cells["s_memory_ms"], cells["s_bound"]) == (pytest.approx(6.0), "memory")
    assert (cells["s_over_predicted"], cells["s_over_predicted_low"], cells["s_over_predicted_high"]) == (
        pytest.approx(1.5),
        pytest.approx(10 / 8),
        pytest.approx(14 / 8),
    )
    assert set(step_value_cells("s", None, pred).values()) == {None}  # a setting not measured
