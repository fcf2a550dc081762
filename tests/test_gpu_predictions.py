"""The chapter's model on GPUs, predicted from datasheets (measure/experiments/chapter/
predictions.py), against numbers worked by hand from the same datasheets."""

import pytest

from measure.experiments.chapter import predictions as pred
from measure.lab.formulas import expected_tokens_per_verification
from measure.reference.gpus import GPUS, datasheet_for

WEIGHTS = 2 * 494_032_768  # the chapter's model in fp16


def _card(key):
    return next(g for g in GPUS if g.key == key)


def test_the_laptop_range_is_worked_out_like_the_whitepapers():
    # 24 SMs x 512 FLOPs a clock x 2,370 MHz; 46 x 512 x 1,485 MHz
    assert _card("laptop_low").fp16_tflops == pytest.approx(29.12256)
    assert _card("laptop_high").fp16_tflops == pytest.approx(34.97472)
    assert [g.bandwidth_gb_s for g in GPUS] == [256, 448, 3350, 4800]


def test_the_h100_by_hand():
    row = pred.card_row(_card("h100"))
    assert row["decode_floor_ms"] == pytest.approx(WEIGHTS / 3350e9 * 1e3)  # 0.295 ms
    assert row["balance_flops_per_byte"] == pytest.approx(989.4e12 / 3350e9)  # 295 FLOP a byte
    assert row["tokens_per_s"] == pytest.approx(3350e9 / WEIGHTS)
    # a 40-token prefill costs one read of the weights (memory-bound), and so does a step
    assert row["token_cost_ratio"] == pytest.approx(40, rel=0.02)
    assert row["int8_draft_cost"] == pytest.approx(0.5, rel=0.01) and row["int4_draft_cost"] == pytest.approx(
        4.125 / 16, rel=0.01
    )


def test_the_batch_at_which_decode_turns_compute_bound_by_hand():
    """Closed form at 64 cached tokens, each request's cache read once: a batch B moves
    W + B x (64 x 12,288 + 12,288 + logits) bytes and computes 2 B (M + A) FLOPs; compute
    outlasts memory from B = balance x W / (2 (M + A) - balance x per-request bytes)."""
    m, roof = pred.qwen(), pred.roofline(_card("h100"))
    per_request = 64 * m.kv_bytes_per_token + m.kv_bytes_per_token + m.logit_bytes
    flops_one = 2 * (m.weight_macs + m.attention_macs(1, 65))
    balance = roof.balance("float16").value
    exact = balance * m.weight_bytes / (flops_one - balance * per_request)
    assert pred.compute_bound_batch(m, roof, 64) == int(exact) + 1
    # at 1,024 cached tokens the cache's bytes grow faster than the arithmetic: never
    assert pred.compute_bound_batch(m, roof, 1024) is None


def test_break_even_draft_cost_on_a_gpu_is_the_formulas():
    """On a GPU a verification of gamma + 1 positions costs one step (memory-bound), so the
    break-even cost is (tokens per verification - 1) / gamma."""
    rows = {(r["gamma"], r["alpha"]): r for r in pred.speculation_rows(_card("h200"))}
    r = rows[(4, 0.9)]
    assert r["verify_cost"] == pytest.approx(1.0, abs=0.01)
    tokens = expected_tokens_per_verification(alpha=0.9, gamma=4)
    assert r["break_even_draft_cost"] == pytest.approx((tokens - r["verify_cost"]) / 4)


def test_the_chapters_step_against_its_floor():
    v = pred.values()
    assert v["step_over_floor_low"] == pytest.approx(166.5 / (WEIGHTS / 256e9 * 1e3))  # 43 x
    assert v["laptop_floor_high_ms"] == pytest.approx(WEIGHTS / 256e9 * 1e3)  # 3.86 ms
    assert v["kv_share_fp16"] == pytest.approx(12_288 / WEIGHTS)
    assert v["laptop_kv_speedup_high"] < 1.05  # a pass of a few dozen tokens costs a step's read there


def test_a_device_is_matched_to_its_datasheet_by_name():
    assert datasheet_for("NVIDIA H100 80GB HBM3").key == "h100"
    assert datasheet_for("NVIDIA H200").key == "h200"
    assert datasheet_for("NVIDIA GeForce RTX 4060 Laptop GPU").key == "laptop_low"
    assert datasheet_for("NVIDIA A100-SXM4-80GB") is None and datasheet_for("") is None
