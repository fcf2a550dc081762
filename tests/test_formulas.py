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


def test_generation_macs_are_whole_numbers():
    got = generation_macs(weight_macs_per_token=3, layers=1, heads=1, head_dim=1, new_tokens=10**6, cached=False)
    assert type(got) is int  # T(T+1)/2 and T(T+1)(2T+1)/6 are whole: exact at any T
    assert got == 3 * (10**6 * (10**6 + 1) // 2) + 2 * (10**6 * (10**6 + 1) * (2 * 10**6 + 1) // 6)


def test_wilson_interval_edges_and_refusal():
    assert binomial_interval(1, 1)[1] == 1.0  # never above 1
    lo, hi = binomial_interval(1, 1)
    assert lo == pytest.approx(0.2065, abs=1e-4)
    with pytest.raises(ValueError) as e:
        binomial_interval(0, 0)
    assert str(e.value) == "trials must be positive"


def test_expected_tokens_edges_and_refusal():
    from measure.lab.formulas import expected_tokens_per_verification

    assert expected_tokens_per_verification(alpha=0.5, gamma=0) == 1.0  # no draft: the target's own token
    for alpha, gamma in ((1.5, 2), (-0.1, 2), (0.5, -1)):
        with pytest.raises(ValueError) as e:
            expected_tokens_per_verification(alpha=alpha, gamma=gamma)
        assert str(e.value) == "alpha must lie in [0, 1] and gamma be non-negative"
