"""The memory budget's arithmetic (measure/lab/budget.py) against cases worked by hand,
and its invariants over many shapes (Hypothesis): the calculator's roundings are held
here without a browser too."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from measure.lab.budget import (
    cache_bytes_per_user,
    concurrent_users,
    decode_floor,
    kv_bytes_per_layer_token,
    longest_context,
    max_resident_tokens,
    users_at_context,
)


def test_budget_7b_fp16_on_24_gib():
    from measure.lab.budget import (
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
    from measure.lab.budget import budget_kv_bytes_per_token, gib_to_bytes, max_resident_tokens, weight_bytes

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
    from measure.lab.budget import concurrent_users, gib_to_bytes, max_resident_tokens

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


def test_layer_token_bytes_and_partial_bytes_refused():
    # Gemma-3-270m, fp16: 2 x 1 KV head x 256 x 2 bytes = 1,024 bytes per layer and token
    assert kv_bytes_per_layer_token(kv_heads=1, head_dim=256, bytes_per_element=2) == 1024
    # an int4 cache: 2 x 3 x 64 x 0.5 = 192 bytes, whole
    assert kv_bytes_per_layer_token(kv_heads=3, head_dim=64, bytes_per_element=0.5) == 192
    with pytest.raises(ValueError, match="whole number of bytes"):
        kv_bytes_per_layer_token(kv_heads=1, head_dim=3, bytes_per_element=0.25)


def test_cache_per_user_with_a_window_hand_worked():
    # Gemma-3-270m: 18 layers, 15 with a 512-token window, 1,024 bytes per layer-token.
    # At 4,096 tokens: 3 x 4,096 + 15 x 512 = 12,288 + 7,680 = 19,968 layer-tokens.
    kw = dict(layer_token_bytes=1024, layers=18, windowed_layers=15, window=512)
    assert cache_bytes_per_user(**kw, context=4096) == 19_968 * 1024 == 20_447_232
    # below the window every layer holds every token: 18 x 100 x 1,024
    assert cache_bytes_per_user(**kw, context=100) == 1_843_200
    # window 0 means no layer has one, whatever windowed_layers says
    assert cache_bytes_per_user(layer_token_bytes=1024, layers=18, windowed_layers=15, window=0, context=4096) == (
        18 * 4096 * 1024
    )


def test_longest_context_with_a_window_hand_worked():
    kw = dict(layer_token_bytes=10, layers=4, windowed_layers=2, window=100)
    # 3,000 bytes: 40 bytes a token on all 4 layers -> 75 tokens, short of the window
    assert longest_context(free_bytes=3000, **kw) == 75
    # 10,000 bytes: 250 >= 100, so past the window: (10,000 - 10 x 2 x 100) / (10 x 2) = 400
    assert longest_context(free_bytes=10_000, **kw) == 400
    assert cache_bytes_per_user(**kw, context=400) == 10_000 and cache_bytes_per_user(**kw, context=401) > 10_000
    # every layer windowed and the window fits: no limit; not even the window: what fits
    assert longest_context(free_bytes=4000, layer_token_bytes=10, layers=4, windowed_layers=4, window=100) is None
    assert longest_context(free_bytes=3999, layer_token_bytes=10, layers=4, windowed_layers=4, window=100) == 99
    # no window: the plain budget, also when layers are named windowed but the window is 0
    assert longest_context(free_bytes=10_000, layer_token_bytes=10, layers=4, windowed_layers=0, window=0) == 250
    assert longest_context(free_bytes=10_000, layer_token_bytes=10, layers=4, windowed_layers=2, window=0) == 250
    # a window of one token: 10,000 - 10 x 2 x 1 = 9,980 over 20 bytes a token = 499
    assert longest_context(free_bytes=10_000, layer_token_bytes=10, layers=4, windowed_layers=2, window=1) == 499
    with pytest.raises(ValueError):
        longest_context(free_bytes=-1, **kw)


def test_users_at_context_edges():
    assert users_at_context(free_bytes=100, cache_bytes=50) == 2  # exactly fills two
    assert users_at_context(free_bytes=99, cache_bytes=50) == 1
    assert users_at_context(free_bytes=0, cache_bytes=50) == 0
    assert users_at_context(free_bytes=-1, cache_bytes=50) is None
    with pytest.raises(ValueError):
        users_at_context(free_bytes=10, cache_bytes=0)


def test_decode_floor_hand_worked():
    # 14e9 bytes of weights + 8 users x 536,870,912 bytes = 18,294,967,296 bytes a step;
    # at 1,008 GB/s that is 18.1497691 ms: 55.0971195 tokens/s each, 440.776956 in all
    f = decode_floor(weight_bytes=14_000_000_000, cache_bytes_per_user=2**29, users=8, bandwidth_gb_s=1008)
    assert f["step_s"] == pytest.approx(0.0181497691, rel=1e-8)
    assert f["tokens_per_s_per_user"] == pytest.approx(55.0971195, rel=1e-8)
    assert f["tokens_per_s"] == pytest.approx(440.776956, rel=1e-8)
    with pytest.raises(ValueError):
        decode_floor(weight_bytes=1, cache_bytes_per_user=1, users=0, bandwidth_gb_s=1)


_SHAPES = dict(
    layer_token_bytes=st.integers(1, 4096),
    layers=st.integers(1, 128),
    window=st.integers(0, 10_000),
    fraction=st.floats(0, 1),
)


@given(free=st.integers(0, 10**13), context=st.integers(1, 10**6), **_SHAPES)
def test_longest_context_is_the_largest_that_fits(free, context, layer_token_bytes, layers, window, fraction):
    windowed = round(layers * fraction)
    kw = dict(layer_token_bytes=layer_token_bytes, layers=layers, windowed_layers=windowed, window=window)
    longest = longest_context(free_bytes=free, **kw)
    if longest is None:  # unbounded: every layer windowed, and any context fits
        assert windowed == layers and window > 0
        assert cache_bytes_per_user(**kw, context=context) <= free
    else:
        assert cache_bytes_per_user(**kw, context=longest) <= free
        assert cache_bytes_per_user(**kw, context=longest + 1) > free


@given(free=st.integers(0, 10**13), context=st.integers(1, 10**6), **_SHAPES)
def test_a_window_never_costs_more_and_users_follow(free, context, layer_token_bytes, layers, window, fraction):
    windowed = round(layers * fraction)
    kw = dict(layer_token_bytes=layer_token_bytes, layers=layers, context=context)
    full = cache_bytes_per_user(**kw, windowed_layers=0, window=0)
    with_window = cache_bytes_per_user(**kw, windowed_layers=windowed, window=window)
    assert with_window <= full
    assert users_at_context(free_bytes=free, cache_bytes=with_window) >= users_at_context(
        free_bytes=free, cache_bytes=full
    )
    # without a window, users at a context are the budget's max tokens split into contexts
    per_token = layer_token_bytes * layers
    tokens = max_resident_tokens(vram_bytes=free, reserve_bytes=0, weight_bytes=0, kv_bytes_per_token=per_token)
    assert users_at_context(free_bytes=free, cache_bytes=full) == concurrent_users(
        max_tokens=tokens, context_per_user=context
    )


def test_results_are_whole_numbers_where_they_count_things():
    # 10,001 bytes over 20 per token is 500.05: the count is 500, an int, not a float
    assert longest_context(free_bytes=10_001, layer_token_bytes=10, layers=2, windowed_layers=0, window=0) == 500
    kw = dict(layer_token_bytes=10, layers=4, windowed_layers=2, window=100)
    got = longest_context(free_bytes=10_005, **kw)  # (10,005 - 2,000) / 20 = 400.25
    assert got == 400 and type(got) is int
    got = longest_context(free_bytes=3_005, **kw)  # 3,005 / 40 = 75.1: short of the window
    assert got == 75 and type(got) is int
    for got in (
        users_at_context(free_bytes=101, cache_bytes=50),
        max_resident_tokens(vram_bytes=101, reserve_bytes=0, weight_bytes=0, kv_bytes_per_token=50),
        concurrent_users(max_tokens=101, context_per_user=50),
    ):
        assert got == 2 and type(got) is int


def test_each_refusal_says_why():
    cases = [
        (
            lambda: max_resident_tokens(vram_bytes=1, reserve_bytes=0, weight_bytes=0, kv_bytes_per_token=0),
            "kv_bytes_per_token must be positive",
        ),
        (lambda: concurrent_users(max_tokens=1, context_per_user=0), "context_per_user must be positive"),
        (lambda: users_at_context(free_bytes=1, cache_bytes=0), "cache_bytes must be positive"),
        (
            lambda: longest_context(free_bytes=-1, layer_token_bytes=1, layers=1, windowed_layers=0, window=0),
            "free_bytes is negative: the model does not fit",
        ),
        (
            lambda: decode_floor(weight_bytes=1, cache_bytes_per_user=1, users=0, bandwidth_gb_s=1),
            "users and bandwidth must be positive",
        ),
        (
            lambda: decode_floor(weight_bytes=1, cache_bytes_per_user=1, users=1, bandwidth_gb_s=0),
            "users and bandwidth must be positive",
        ),
        (
            lambda: kv_bytes_per_layer_token(kv_heads=1, head_dim=3, bytes_per_element=0.25),
            "2 x 1 x 3 x 0.25 bytes is not a whole number of bytes",
        ),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == message


def test_the_smallest_valid_inputs_are_accepted():
    assert max_resident_tokens(vram_bytes=1, reserve_bytes=0, weight_bytes=0, kv_bytes_per_token=1) == 1
    assert concurrent_users(max_tokens=1, context_per_user=1) == 1
    # one user, and a card of 0.5 GB/s: a bandwidth below 1 is still a bandwidth
    f = decode_floor(weight_bytes=500_000_000, cache_bytes_per_user=0, users=1, bandwidth_gb_s=0.5)
    assert f["step_s"] == 1.0 and f["tokens_per_s_per_user"] == 1.0 == f["tokens_per_s"]
    # a decimal GB is 10^9 bytes: 10^9 bytes at 1 GB/s is one second, exactly
    assert decode_floor(weight_bytes=10**9, cache_bytes_per_user=0, users=1, bandwidth_gb_s=1)["step_s"] == 1.0


def test_one_windowed_layer_is_a_window():
    # 4 layers, one of them keeps 100 tokens: (10,000 - 10 x 1 x 100) / (10 x 3) = 300 tokens
    assert longest_context(free_bytes=10_000, layer_token_bytes=10, layers=4, windowed_layers=1, window=100) == 300


# ---- several cards, a mixture of experts, the arithmetic's floor ----


def test_a_cards_share_rounds_a_partial_byte_up_and_the_free_bytes_add_up():
    from measure.lab.budget import card_share, free_bytes, split_free_bytes

    assert card_share(total_bytes=10, cards=3) == 4 and card_share(total_bytes=9, cards=3) == 3
    assert card_share(total_bytes=14_000_000_000, cards=1) == 14_000_000_000
    # 2 cards of 100 bytes, 10 reserved on each, 101 bytes of weights: 51 on each card
    # (the 102nd byte is the rounding), 39 left on each, 78 together
    assert split_free_bytes(card_bytes=100, reserve_bytes=10, weight_bytes=101, cards=2) == 78
    # one card is the one-card budget
    assert split_free_bytes(card_bytes=100, reserve_bytes=10, weight_bytes=101, cards=1) == free_bytes(
        card_bytes=100, reserve_bytes=10, weight_bytes=101
    )
    # a share that does not fit leaves every card short: negative, as the one-card budget
    assert split_free_bytes(card_bytes=100, reserve_bytes=10, weight_bytes=400, cards=2) == -220
    with pytest.raises(ValueError):
        card_share(total_bytes=1, cards=0)


def test_expected_distinct_experts_hand_worked():
    from measure.lab.budget import expected_distinct_experts

    # one token picks k: 8 x (1 - 6/8) = 2; two tokens, 8 x (1 - (3/4)^2) = 3.5; eight tokens,
    # 8 x (1 - 0.75^8) = 8 x (1 - 0.1001129150390625) = 7.1990966796875 (exact in binary)
    assert expected_distinct_experts(experts=8, experts_per_token=2, tokens=1) == 2.0
    assert expected_distinct_experts(experts=8, experts_per_token=2, tokens=2) == 3.5
    assert expected_distinct_experts(experts=8, experts_per_token=2, tokens=8) == 7.1990966796875
    # every expert picked by each token: all of them, whatever the batch
    assert expected_distinct_experts(experts=8, experts_per_token=8, tokens=3) == 8.0
    # many tokens: all but a vanishing share
    assert 8 - expected_distinct_experts(experts=8, experts_per_token=2, tokens=200) < 1e-20
    for bad in ({"experts_per_token": 0}, {"experts_per_token": 9}, {"tokens": 0}):
        with pytest.raises(ValueError):
            expected_distinct_experts(**{"experts": 8, "experts_per_token": 2, "tokens": 1, **bad})


def test_the_power_is_the_repeated_product():
    from measure.lab.budget import _power

    assert _power(0.75, 0) == 1.0 and _power(0.75, 1) == 0.75 and _power(0.75, 8) == 0.1001129150390625
    assert _power(0.5, 11) == 2.0**-11


def test_mixtral_reads_its_active_parameters_alone_and_more_with_a_batch():
    from measure.lab.budget import params_read_per_step

    mixtral = dict(params=46_702_792_704, active_params=12_879_925_248, experts=8, experts_per_token=2)
    # routed: (46,702,792,704 - 12,879,925,248) / 6 x 8 = 45,097,156,608 (32 layers x 8 experts
    # x 3 x 4,096 x 14,336); shared: 1,605,636,096. One token reads 2 of 8 experts: the
    # active count itself
    assert params_read_per_step(**mixtral, tokens=1) == 12_879_925_248
    # two tokens pick 3.5 distinct experts a layer on average: 1,605,636,096 + 45,097,156,608
    # x 3.5 / 8 = 21,335,642,112
    assert params_read_per_step(**mixtral, tokens=2) == 21_335_642_112
    # a model that is no mixture reads every parameter, at any batch
    assert params_read_per_step(params=7e9, active_params=7e9, experts=0, experts_per_token=0, tokens=32) == 7e9
    # every expert picked: all of them too
    dense = dict(params=100, active_params=100, experts=4, experts_per_token=4)
    assert params_read_per_step(**dense, tokens=5) == 100


def test_prefill_and_decode_flops_hand_worked():
    from measure.lab.budget import compute_floor_s, decode_flops, keys_attended, prefill_flops

    # 4 tokens, causal: 1 + 2 + 3 + 4 = 10 pairs a full layer; a 2-token window: 1 + 2 + 2 + 2 = 7
    assert keys_attended(layers=2, windowed_layers=0, window=0, tokens=4) == 20
    assert keys_attended(layers=2, windowed_layers=1, window=2, tokens=4) == 17
    assert keys_attended(layers=2, windowed_layers=1, window=8, tokens=4) == 20  # the window is never reached
    # 2 x 100 parameters x 4 tokens + 4 x 2 heads x 3 dims x 20 pairs = 800 + 480
    shape = dict(heads=2, head_dim=3, layers=2, windowed_layers=0, window=0)
    assert prefill_flops(active_params=100, **shape, tokens=4) == 1280
    # 3 users, a context of 4, one of 2 layers windowed at 2: 3 x (200 + 24 x (4 + 2)) = 1,032
    windowed = dict(heads=2, head_dim=3, layers=2, windowed_layers=1, window=2)
    assert decode_flops(active_params=100, **windowed, context=4, users=3) == 1032
    # the 7B, 8 users at 4,096: 8 x (14e9 + 4 x 32 x 128 x 32 x 4,096) = 129,179,869,184 FLOPs
    seven = dict(heads=32, head_dim=128, layers=32, windowed_layers=0, window=0)
    flops = decode_flops(active_params=7e9, **seven, context=4096, users=8)
    assert flops == 129_179_869_184
    # 2e12 FLOPs at 1 TFLOP/s on each of 2 cards: one second
    assert compute_floor_s(flops=2e12, peak_tflops=1, cards=2) == 1.0
    assert compute_floor_s(flops=flops, peak_tflops=165.2, cards=1) == pytest.approx(7.8196e-4, rel=1e-4)
    with pytest.raises(ValueError):
        compute_floor_s(flops=1, peak_tflops=0, cards=1)
