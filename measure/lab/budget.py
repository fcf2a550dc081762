"""The memory budget's arithmetic (§10): weights, cache, what fits on a card, sliding
windows, and the decode step's floor. Pure functions on whole bytes, each tested against
hand-worked cases in tests/test_budget.py.

The calculator (docs/javascripts/calculator/budget.js) does the same arithmetic in the
same order, with the same names; tests/test_calculator_browser.py holds the two equal,
tests/test_calculator_mirror.py their names, and tests/test_budget.py the roundings
without a browser.
"""

from __future__ import annotations

import math

from measure.lab.formulas import kv_bytes_per_token

GIB = 2**30  # GiB: a power of two, as the spec's card sizes are


def gib_to_bytes(gib: float) -> int:
    """Whole bytes in ``gib`` GiB (fractional bytes dropped)."""
    return math.floor(gib * GIB)


def weight_bytes(*, params: float, bits_per_weight: float) -> int:
    """Bytes of the weights: parameters x bits / 8, a partial byte rounded up."""
    return math.ceil(params * bits_per_weight / 8)


def budget_kv_bytes_per_token(*, layers: int, kv_heads: int, head_dim: int, bytes_per_element: float) -> int:
    """kv_bytes_per_token for any element size (e.g. 0.5 for a 4-bit cache), rounded up
    to whole bytes."""
    return math.ceil(
        kv_bytes_per_token(layers=layers, kv_heads=kv_heads, head_dim=head_dim, bytes_per_element=bytes_per_element)
    )


def free_bytes(*, card_bytes: int, reserve_bytes: int, weight_bytes: int) -> int:
    """What is left for the cache once the weights and the reserve are on the card;
    negative when they do not fit."""
    return card_bytes - reserve_bytes - weight_bytes


def max_resident_tokens(
    *, vram_bytes: int, reserve_bytes: int, weight_bytes: int, kv_bytes_per_token: int
) -> int | None:
    """floor((VRAM - reserve - weights) / KV bytes per token): the tokens that can be
    resident at once, summed over every request; None when the weights and the reserve
    alone exceed the card (it does not fit)."""
    if kv_bytes_per_token <= 0:
        raise ValueError("kv_bytes_per_token must be positive")
    free = free_bytes(card_bytes=vram_bytes, reserve_bytes=reserve_bytes, weight_bytes=weight_bytes)
    if free < 0:
        return None
    return free // kv_bytes_per_token


def concurrent_users(*, max_tokens: int | None, context_per_user: int) -> int | None:
    """Users that can each hold ``context_per_user`` tokens at the same time."""
    if context_per_user <= 0:
        raise ValueError("context_per_user must be positive")
    return None if max_tokens is None else max_tokens // context_per_user


# --- Sliding windows: a windowed layer keeps at most ``window`` tokens of cache, so a
# context's cache is no longer its length times one per-token cost. Everything is in
# whole bytes per layer and token (2 x H_kv x d x bytes per element; an integer for
# 4, 2, 1 and 0.5-byte elements), so these are exact integer formulas. ---


def kv_bytes_per_layer_token(*, kv_heads: int, head_dim: int, bytes_per_element: float) -> int:
    """K and V of one token in one layer; refuses element sizes that give a partial byte."""
    exact = 2 * kv_heads * head_dim * bytes_per_element
    if exact != int(exact):
        raise ValueError(f"2 x {kv_heads} x {head_dim} x {bytes_per_element} bytes is not a whole number of bytes")
    return int(exact)


def cache_bytes_per_user(
    *, layer_token_bytes: int, layers: int, windowed_layers: int, window: int, context: int
) -> int:
    """The cache one user holds at ``context`` tokens: full-attention layers keep every
    token, windowed layers at most ``window`` (``window`` 0: no layer has one)."""
    held = context if window == 0 else min(context, window)
    return layer_token_bytes * ((layers - windowed_layers) * context + windowed_layers * held)


def longest_context(
    *, free_bytes: int, layer_token_bytes: int, layers: int, windowed_layers: int, window: int
) -> int | None:
    """The longest context one user's cache can reach in ``free_bytes``; None when it is
    unbounded (every layer keeps only a window and the full window fits). Raises when
    ``free_bytes`` is negative (the weights do not fit)."""
    if free_bytes < 0:
        raise ValueError("free_bytes is negative: the model does not fit")
    per_token = layer_token_bytes * layers
    if window == 0 or windowed_layers == 0:
        return free_bytes // per_token
    up_to_window = free_bytes // per_token
    if up_to_window < window:
        return up_to_window  # the window is never reached: every layer pays for every token
    full_layers = layers - windowed_layers
    if full_layers == 0:
        return None
    return (free_bytes - layer_token_bytes * windowed_layers * window) // (layer_token_bytes * full_layers)


def users_at_context(*, free_bytes: int, cache_bytes: int) -> int | None:
    """Users whose caches of ``cache_bytes`` each fit in ``free_bytes``; None when the
    model does not fit. With no window this equals concurrent_users(max_resident_tokens)."""
    if cache_bytes <= 0:
        raise ValueError("cache_bytes must be positive")
    return None if free_bytes < 0 else free_bytes // cache_bytes


# --- The decode step's floor: every step reads the weights once and each user's cache
# once, at best at the card's memory bandwidth (prefill-decode sets measured steps
# against the same floor). Bandwidth in decimal GB/s, as cards are rated. ---


def decode_floor(*, weight_bytes: int, cache_bytes_per_user: int, users: int, bandwidth_gb_s: float) -> dict:
    """The step time the bandwidth allows, and the tokens per second it gives each user
    and all of them, when ``users`` each hold ``cache_bytes_per_user``."""
    if users <= 0 or bandwidth_gb_s <= 0:
        raise ValueError("users and bandwidth must be positive")
    step_s = (weight_bytes + users * cache_bytes_per_user) / (bandwidth_gb_s * 1e9)
    return {"step_s": step_s, "tokens_per_s_per_user": 1 / step_s, "tokens_per_s": users / step_s}


# --- Several cards, tensor-parallel: each card holds an equal share of the weights and of
# every user's cache, and its own reserve. An ideal split (no share rounded up beyond a
# byte, no communication between the cards): a floor, as the decode floor is. ---


def card_share(*, total_bytes: int, cards: int) -> int:
    """One card's share of ``total_bytes`` split over ``cards``, a partial byte rounded up."""
    if cards <= 0:
        raise ValueError("cards must be positive")
    return -(-total_bytes // cards)


def split_free_bytes(*, card_bytes: int, reserve_bytes: int, weight_bytes: int, cards: int) -> int:
    """What the cards leave for the cache, together: each card's memory less its reserve
    and its share of the weights, times the cards; negative when a card's share does not fit."""
    per_card = free_bytes(
        card_bytes=card_bytes,
        reserve_bytes=reserve_bytes,
        weight_bytes=card_share(total_bytes=weight_bytes, cards=cards),
    )
    return cards * per_card


# --- A mixture of experts: each token's router picks ``experts_per_token`` (k) of a
# layer's ``experts`` (n); everything else (attention, norms, embeddings, the routers, a
# shared expert) serves every token. A step of B tokens reads the experts any of them
# picked. Under uniform routing, each token picking k of n at random, an expert goes
# unpicked by one token with probability 1 - k/n, by all B with (1 - k/n)^B, so a layer
# reads n (1 - (1 - k/n)^B) distinct experts on average. Real routers are not uniform:
# a skewed router reads fewer distinct experts, so this is the most a batch reads on
# average, never a floor for a particular batch. Every product is taken in floating point
# in the calculator's order, so that the page's mirror gives the same double. ---


def _power(base: float, exponent: int) -> float:
    """base ** exponent by repeated squaring: the same double in Python and JavaScript,
    whose pow() functions may differ in the last bit."""
    result = 1.0
    while exponent > 0:
        if exponent % 2:
            result *= base
        base *= base
        exponent //= 2
    return result


def expected_distinct_experts(*, experts: int, experts_per_token: int, tokens: int) -> float:
    """The experts of one layer that ``tokens`` tokens pick between them, on average,
    when each picks ``experts_per_token`` of ``experts`` uniformly: n (1 - (1 - k/n)^B)."""
    if not 0 < experts_per_token <= experts or tokens <= 0:
        raise ValueError("experts, experts per token and tokens must be positive, and k at most n")
    return experts * (1 - _power(1 - experts_per_token / experts, tokens))


def params_read_per_step(
    *, params: float, active_params: float, experts: int, experts_per_token: int, tokens: int
) -> float:
    """The parameters a step of ``tokens`` tokens reads: the shared ones, and of the
    routed experts' parameters the share of experts the tokens pick (expected distinct
    experts over n). The routed parameters follow from the counts: a token leaves out
    n - k of every n, so they are (params - active) / (n - k) x n. A model that is no
    mixture (n of 0, or every expert picked) reads all of its parameters."""
    if experts == 0 or experts_per_token == experts:
        return params
    routed = (params - active_params) / (experts - experts_per_token) * experts
    distinct = expected_distinct_experts(experts=experts, experts_per_token=experts_per_token, tokens=tokens)
    return params - routed + routed * distinct / experts


# --- The arithmetic's floor: a step does at least its multiply-adds, two FLOPs each, at
# the cards' peak matrix throughput. A token multiplies by every parameter it reads
# (2 x active parameters FLOPs, the input embedding's lookup counted as a product too)
# and attends to every key it sees (a score and a weighted value per head and key: 4 x
# heads x head dimension FLOPs). Inputs are taken as doubles, as the page holds them. ---


def keys_attended(*, layers: int, windowed_layers: int, window: int, tokens: int) -> float:
    """The (query, key) pairs a causal prefill of ``tokens`` tokens computes, summed over
    the layers: a full layer T (T + 1) / 2, a windowed one at most ``window`` keys a query."""
    t, w = float(tokens), float(window)
    full = t * (t + 1) / 2
    held = full if window == 0 or t <= w else w * (w + 1) / 2 + (t - w) * w
    return (layers - windowed_layers) * full + windowed_layers * held


def prefill_flops(
    *,
    active_params: float,
    heads: int,
    head_dim: int,
    layers: int,
    windowed_layers: int,
    window: int,
    tokens: int,
) -> float:
    """The FLOPs of a prefill of ``tokens`` prompt tokens: 2 x active parameters a token,
    and 4 x heads x head dimension a (query, key) pair."""
    pairs = keys_attended(layers=layers, windowed_layers=windowed_layers, window=window, tokens=tokens)
    return 2 * float(active_params) * tokens + 4 * float(heads) * head_dim * pairs


def decode_flops(
    *,
    active_params: float,
    heads: int,
    head_dim: int,
    layers: int,
    windowed_layers: int,
    window: int,
    context: int,
    users: int,
) -> float:
    """The FLOPs of a decode step for ``users`` users at ``context`` tokens each: one new
    token each, attending to the context (at most the window in a windowed layer)."""
    held = context if window == 0 else min(context, window)
    keys = float(layers - windowed_layers) * context + float(windowed_layers) * held
    return users * (2 * float(active_params) + 4 * float(heads) * head_dim * keys)


def compute_floor_s(*, flops: float, peak_tflops: float, cards: int) -> float:
    """Seconds for ``flops`` at the cards' peak matrix throughput, in TFLOP/s (10^12)."""
    if flops < 0 or peak_tflops <= 0 or cards <= 0:
        raise ValueError("flops, peak and cards must be positive")
    return flops / (peak_tflops * 1e12 * cards)
