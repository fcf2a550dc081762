"""Closed-form counts the measurements are compared with. Pure functions of a shape,
each tested against hand-worked cases in tests/test_formulas.py."""

from __future__ import annotations

import math


def kv_bytes_per_token(*, layers: int, kv_heads: int, head_dim: int, bytes_per_element: int) -> int:
    """K and V (the 2), for every layer, every key-value head, every head dimension."""
    return 2 * layers * kv_heads * head_dim * bytes_per_element


def attention_macs(*, layers: int, heads: int, head_dim: int, queries: int, keys: int) -> int:
    """Multiply-accumulates of scaled dot-product attention: Q K^T (queries x keys x d)
    plus scores V (the same again), per head and layer. Softmax and masking are not MACs."""
    return 2 * layers * heads * queries * keys * head_dim


def step_macs(*, weight_macs_per_token: int, layers: int, heads: int, head_dim: int, context: int, cached: bool) -> int:
    """MACs of one generation step at ``context`` tokens: recompute pushes the whole prefix
    through every weight matrix and builds a context x context score matrix; a cached step
    pushes one token and scores it against the context."""
    queries = 1 if cached else context
    return weight_macs_per_token * queries + attention_macs(
        layers=layers, heads=heads, head_dim=head_dim, queries=queries, keys=context
    )


def generation_macs(
    *, weight_macs_per_token: int, layers: int, heads: int, head_dim: int, new_tokens: int, cached: bool
) -> int:
    """Total MACs to generate ``new_tokens`` from a one-token start: step t sees t tokens.

    Closed forms of the sums (sum t = T(T+1)/2, sum t^2 = T(T+1)(2T+1)/6) keep this
    exact for any T: recompute is O(T^3) in attention, cached O(T^2).
    """
    t = new_tokens
    s1 = t * (t + 1) // 2
    s2 = t * (t + 1) * (2 * t + 1) // 6
    per_pair = 2 * layers * heads * head_dim
    if cached:
        return weight_macs_per_token * t + per_pair * s1
    return weight_macs_per_token * s1 + per_pair * s2


def binomial_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval (95% by default): honest at small n, unlike p +/- z*sqrt(pq/n)."""
    if trials <= 0:
        raise ValueError("trials must be positive")
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# --- §8 speculative decoding (Leviathan et al., "Fast Inference from Transformers via
# Speculative Decoding", 2023, arXiv:2211.17192, eq. 1 and Theorem 3.8) ---


def expected_tokens_per_verification(*, alpha: float, gamma: int) -> float:
    """Tokens produced by one target pass that verifies ``gamma`` drafted tokens when each
    is accepted independently with probability ``alpha``: the accepted prefix plus the
    target's own token, (1 - alpha^(gamma+1)) / (1 - alpha); gamma + 1 when alpha = 1."""
    if not 0.0 <= alpha <= 1.0 or gamma < 0:
        raise ValueError("alpha must lie in [0, 1] and gamma be non-negative")
    if alpha == 1.0:
        return float(gamma + 1)
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def speculative_speedup(*, alpha: float, gamma: int, draft_cost: float) -> float:
    """Expected tokens per verification divided by the cost of one round, gamma draft
    steps at ``draft_cost`` each (a fraction of one target step) plus one target pass."""
    return expected_tokens_per_verification(alpha=alpha, gamma=gamma) / (gamma * draft_cost + 1.0)
