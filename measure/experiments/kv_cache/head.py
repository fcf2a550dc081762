"""§1's lone attention head: one generation step at context n, recomputing and cached,
with plain tensor operations (no fused kernel) so that the score matrix really exists
and its bytes can be counted. Every point, both ways at every context, is sampled in one
interleaved sweep (``sampling.interleaved``); a point quicker than ``BLOCK_S`` is sampled
as a block of calls that fills it (``min_sample_s``): a lone call of a few microseconds
is mostly the timer's and the interpreter's noise."""

from __future__ import annotations

import math
from functools import partial

import torch

from measure.lab.context import Context
from measure.lab.medians import ratio_cells
from measure.lab.sampling import interleaved

BLOCK_S = 0.005  # the shortest sample: a quicker point is timed this long, as a block of calls


def _recompute(q, k, v, mask, d: int, built: dict, n: int):
    scores = (q @ k.T) / math.sqrt(d) + mask  # every query against every key
    built[("recompute", n)] = scores.numel() * scores.element_size()
    return torch.softmax(scores, dim=-1) @ v


def _cached(q, k, v, d: int, built: dict, n: int):
    scores = (q[-1:] @ k.T) / math.sqrt(d)  # the newest query against the cached keys
    built[("cached", n)] = scores.numel() * scores.element_size()
    return torch.softmax(scores, dim=-1) @ v


def head_step_rows(cfg, ctx: Context) -> tuple[list, dict, dict]:
    """The ``head_step`` rows, their values and the sweep's notes."""
    d = cfg.head_dim
    g = torch.Generator().manual_seed(0)
    points, built = {}, {}
    for n in cfg.head_contexts:
        q, k, v = (torch.randn(n, d, generator=g, dtype=torch.float32).to(ctx.device) for _ in range(3))
        mask = torch.full((n, n), float("-inf"), device=ctx.device).triu(1)
        points[("recompute", n)] = partial(_recompute, q, k, v, mask, d, built, n)
        points[("cached", n)] = partial(_cached, q, k, v, d, built, n)
    ctx.log(f"  one head, {len(cfg.head_contexts)} contexts both ways, interleaved (budget {cfg.head_budget_s:.0f} s)")
    sweep = interleaved(
        points,
        device=ctx.device,
        seed=cfg.head_seed,
        budget_s=cfg.head_budget_s,
        target=cfg.target,
        min_rounds=cfg.head_min_rounds,
        min_sample_s=BLOCK_S,
    )
    rows = []
    for n in cfg.head_contexts:
        re, ca = sweep.points[("recompute", n)], sweep.points[("cached", n)]
        rows.append(
            {
                "context": n,
                **re.columns("recompute_ms"),
                **ca.columns("cached_ms"),
                **ratio_cells("head_ratio", re, ca),
                "recompute_scores_bytes": built[("recompute", n)],
                "cached_scores_bytes": built[("cached", n)],
            }
        )
    last = rows[-1]
    values = {
        "head_dim": d,
        "head_block_ms": BLOCK_S * 1e3,
        "head_min_rounds": cfg.head_min_rounds,
        "head_largest_context": last["context"],
        "head_scores_bytes_recompute": last["recompute_scores_bytes"],
        "head_scores_bytes_cached": last["cached_scores_bytes"],
        "head_ratio_at_largest": last["head_ratio"],
        "head_ratio_at_largest_low": last["head_ratio_low"],
        "head_ratio_at_largest_high": last["head_ratio_high"],
    }
    return rows, values, {"head_sweep": sweep.describe()}
