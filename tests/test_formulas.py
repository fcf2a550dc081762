"""Formulas against cases worked by hand."""

import pytest

from measure.lab.formulas import attention_macs, binomial_interval, generation_macs, kv_bytes_per_token, step_macs


def test_kv_bytes_qwen_fp16():
    # 2 (K,V) x 24 layers x 2 kv heads x 64 dims x 2 bytes = 12,288
    assert kv_bytes_per_token(layers=24, kv_heads=2, head_dim=64, bytes_per_element=2) == 12_288


def test_kv_bytes_smollm2_fp32_and_7b():
    assert kv_bytes_per_token(layers=30, kv_heads=3, head_dim=64, bytes_per_element=4) == 46_080
    assert kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128, bytes_per_element=2) == 128 * 1024


def test_attention_macs_one_head():
    # QK^T: 3 queries x 5 keys x 4 dims = 60; scores.V the same: 120
    assert attention_macs(layers=1, heads=1, head_dim=4, queries=3, keys=5) == 120


def test_step_macs_cached_is_linear_recompute_quadratic():
    kw = dict(weight_macs_per_token=10, layers=1, heads=1, head_dim=1)
    # cached: 10 + 2*1*n ; recompute: 10n + 2n^2
    assert [step_macs(context=n, cached=True, **kw) for n in (1, 2, 3)] == [12, 14, 16]
    assert [step_macs(context=n, cached=False, **kw) for n in (1, 2, 3)] == [12, 28, 48]


def test_generation_macs_is_the_sum_of_steps():
    kw = dict(weight_macs_per_token=7, layers=2, heads=3, head_dim=5)
    for cached in (True, False):
        by_steps = sum(step_macs(context=t, cached=cached, **kw) for t in range(1, 41))
        assert generation_macs(new_tokens=40, cached=cached, **kw) == by_steps


def test_generation_macs_hand_worked():
    # one head, d=1, no weights, T=3: cached 2*(1+2+3)=12; recompute 2*(1+4+9)=28
    kw = dict(weight_macs_per_token=0, layers=1, heads=1, head_dim=1, new_tokens=3)
    assert generation_macs(cached=True, **kw) == 12
    assert generation_macs(cached=False, **kw) == 28


def test_ratio_grows_without_bound():
    kw = dict(weight_macs_per_token=1000, layers=2, heads=2, head_dim=8)
    ratios = [
        generation_macs(new_tokens=t, cached=False, **kw) / generation_macs(new_tokens=t, cached=True, **kw)
        for t in (16, 64, 256, 1024)
    ]
    assert ratios == sorted(ratios) and ratios[-1] > 4 * ratios[1]


def test_wilson_interval():
    lo, hi = binomial_interval(8, 16)
    assert lo == pytest.approx(0.2800, abs=1e-3) and hi == pytest.approx(0.7200, abs=1e-3)
    lo, hi = binomial_interval(16, 16)
    assert hi == 1.0 and lo == pytest.approx(0.8064, abs=1e-3)
    with pytest.raises(ValueError):
        binomial_interval(0, 0)


def test_expected_tokens_per_verification_hand_worked():
    from measure.lab.formulas import expected_tokens_per_verification

    # alpha 0.5, gamma 2: 1 + 0.5 + 0.25 = 1.75 = (1 - 0.125) / 0.5
    assert expected_tokens_per_verification(alpha=0.5, gamma=2) == pytest.approx(1.75)
    assert expected_tokens_per_verification(alpha=0.0, gamma=4) == 1.0  # only the target's own token
    assert expected_tokens_per_verification(alpha=1.0, gamma=4) == 5.0  # every draft kept, plus one
    with pytest.raises(ValueError):
        expected_tokens_per_verification(alpha=1.5, gamma=1)


def test_speculative_speedup_matches_the_chapter():
    from measure.lab.formulas import speculative_speedup

    # (1 - 0.9^9) / 0.1 = 6.1258; / (8 x 0.1 + 1) = 3.40
    assert speculative_speedup(alpha=0.9, gamma=8, draft_cost=0.1) == pytest.approx(3.4032, abs=1e-4)
    # (1 - 0.3^9) / 0.7 = 1.42854; / 1.8 = 0.79: a loss
    assert speculative_speedup(alpha=0.3, gamma=8, draft_cost=0.1) == pytest.approx(0.7936, abs=1e-4)
    assert speculative_speedup(alpha=0.5, gamma=2, draft_cost=0.0) == pytest.approx(1.75)


def test_budget_7b_fp16_on_24_gib():
    from measure.lab.formulas import (
        budget_kv_bytes_per_token,
        concurrent_users,
        gib_to_bytes,
        max_resident_tokens,
        weight_bytes,
    )

    vram, reserve = gib_to_bytes(24), gib_to_bytes(1.5)
    assert (vram, reserve) == (25_769_803_776, 1_610_612_736)
    w = weight_bytes(params=7.0e9, bits_per_weight=16)
    assert w == 14_000_000_000
    kv = budget_kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128, bytes_per_element=2)
    assert kv == 131_072
    # 25,769,803,776 - 1,610,612,736 - 14,000,000,000 = 10,159,191,040 free;
    # / 131,072 = 77,508.48 -> 77,508 tokens: 18 users of 4,096, none of 131,072.
    tokens = max_resident_tokens(vram_bytes=vram, reserve_bytes=reserve, weight_bytes=w, kv_bytes_per_token=kv)
    assert tokens == 77_508
    assert concurrent_users(max_tokens=tokens, context_per_user=4096) == 18
    assert concurrent_users(max_tokens=tokens, context_per_user=131_072) == 0


def test_budget_13b_mha_and_int4_weights():
    from measure.lab.formulas import budget_kv_bytes_per_token, gib_to_bytes, max_resident_tokens, weight_bytes

    kv = budget_kv_bytes_per_token(layers=40, kv_heads=40, head_dim=128, bytes_per_element=2)
    assert kv == 819_200  # 2 x 40 x 40 x 128 x 2: full multi-head attention
    free = gib_to_bytes(48) - gib_to_bytes(1.5) - 26_000_000_000  # 23,928,994,816
    assert (
        max_resident_tokens(
            vram_bytes=gib_to_bytes(48),
            reserve_bytes=gib_to_bytes(1.5),
            weight_bytes=26_000_000_000,
            kv_bytes_per_token=kv,
        )
        == free // kv
        == 29_210
    )
    assert weight_bytes(params=7.0e9, bits_per_weight=4.125) == 3_609_375_000  # int4 group-128, fp16 scales
    assert weight_bytes(params=3, bits_per_weight=4.125) == 2  # 12.375 bits round up to 2 bytes


def test_budget_does_not_fit_and_the_edge():
    from measure.lab.formulas import concurrent_users, gib_to_bytes, max_resident_tokens

    # 70B fp16: 140e9 bytes of weights on an 80 GiB (85,899,345,920 bytes) card
    assert (
        max_resident_tokens(
            vram_bytes=gib_to_bytes(80),
            reserve_bytes=gib_to_bytes(1.5),
            weight_bytes=140_000_000_000,
            kv_bytes_per_token=1,
        )
        is None
    )
    assert concurrent_users(max_tokens=None, context_per_user=4096) is None
    # exactly full: fits, with room for no token
    assert max_resident_tokens(vram_bytes=100, reserve_bytes=40, weight_bytes=60, kv_bytes_per_token=7) == 0
    assert max_resident_tokens(vram_bytes=100, reserve_bytes=40, weight_bytes=61, kv_bytes_per_token=7) is None
    assert gib_to_bytes(0.5) == 2**29
