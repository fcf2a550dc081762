"""§1's lone attention head: one generation step at context n, recomputing and cached,
with plain tensor operations (no fused kernel) so that the score matrix really exists
and its bytes can be counted."""

from __future__ import annotations

import math

import torch

from measure.lab.context import Context
from measure.lab.timing import time_call


def head_step_rows(ctx: Context, *, head_dim: int, contexts: tuple[int, ...], repeats: int) -> tuple[list, dict]:
    """One head, plain tensor ops (no fused kernel), so the score matrix really exists."""
    d = head_dim
    g = torch.Generator().manual_seed(0)
    rows = []
    for n in ctx.progress(contexts, "one head, context sweep"):
        q, k, v = (torch.randn(n, d, generator=g, dtype=torch.float32).to(ctx.device) for _ in range(3))
        mask = torch.full((n, n), float("-inf"), device=ctx.device).triu(1)
        built = {}

        def recompute():
            scores = (q @ k.T) / math.sqrt(d) + mask  # every query against every key
            built["recompute"] = scores.numel() * scores.element_size()
            return torch.softmax(scores, dim=-1) @ v

        def cached():
            scores = (q[-1:] @ k.T) / math.sqrt(d)  # the newest query against the cached keys
            built["cached"] = scores.numel() * scores.element_size()
            return torch.softmax(scores, dim=-1) @ v

        t_re = time_call(recompute, device=ctx.device, warmup=1, repeats=repeats)
        t_ca = time_call(cached, device=ctx.device, warmup=1, repeats=repeats)
        rows.append(
            {
                "context": n,
                "recompute_ms": t_re.median_ms,
                "recompute_spread_ms": t_re.spread_ms,
                "cached_ms": t_ca.median_ms,
                "cached_spread_ms": t_ca.spread_ms,
                "speed_ratio": t_re.median_s / t_ca.median_s,
                "recompute_scores_bytes": built["recompute"],
                "cached_scores_bytes": built["cached"],
            }
        )
    last = rows[-1]
    values = {
        "head_dim": d,
        "head_largest_context": last["context"],
        "head_scores_bytes_recompute": last["recompute_scores_bytes"],
        "head_scores_bytes_cached": last["cached_scores_bytes"],
        "head_ratio_at_largest": last["speed_ratio"],
    }
    return rows, values
