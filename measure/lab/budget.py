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
