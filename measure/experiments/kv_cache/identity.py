"""§1's identity, checked where rounding cannot decide it.

That the cached and the recomputed streams are the same tokens is a property of the
algorithm. In float16, though, two logits can round to the same value or swap (with the
random Qwen2.5-0.5B weights the median gap between the top two logits is about 0.06),
so the two paths, which add the same numbers in a different order, may split at a near
tie without the cache being wrong. So the identity is checked in float32 (the model
itself on a CPU run, a float32 copy of it otherwise), and the run's own precision is
reported as a finding: where its streams split, how far apart the top two logits of the
recompute path were there, and the largest difference between the two paths' logits at
that position. A split is a near tie when that gap is within twice that difference:
rounding could have ordered the two either way.
"""

from __future__ import annotations

import copy

import torch

from measure.lab.generation import greedy_cached, greedy_recompute


def first_mismatch(a: list[int], b: list[int]) -> int:
    """The first position where two token streams differ, -1 if none."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), -1)


@torch.inference_mode()
def _logits_both_ways(model, ids: torch.Tensor, prefix: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The next-token logits after ``ids + prefix``: recomputed in one pass, and through
    the cache (a prefill of ``ids``, then one step per prefix token), as float32."""
    seq = torch.cat([ids, torch.tensor([prefix], dtype=ids.dtype, device=ids.device)], dim=1)
    recomputed = model(input_ids=seq, use_cache=False).logits[0, -1]
    out = model(input_ids=ids, use_cache=True)
    cached, cache = out.logits[0, -1], out.past_key_values
    for t in prefix:
        out = model(input_ids=torch.tensor([[t]], device=ids.device), past_key_values=cache, use_cache=True)
        cached, cache = out.logits[0, -1], out.past_key_values
    return recomputed.float(), cached.float()


def split_finding(model, ids: torch.Tensor, recompute: list[int], cached: list[int]) -> dict:
    """Where the run's two streams split, and whether rounding decided it."""
    at = first_mismatch(recompute, cached)
    if at < 0:
        return {"first_mismatch": -1, "split_gap": None, "split_logit_diff": None, "split_at_near_tie": False}
    rec, cac = _logits_both_ways(model, ids, recompute[:at])
    top2 = rec.topk(2).values
    gap = float(top2[0] - top2[1])
    diff = float((rec - cac).abs().max())
    return {"first_mismatch": at, "split_gap": gap, "split_logit_diff": diff, "split_at_near_tie": gap <= 2 * diff}


def float32_identity(model, ids: torch.Tensor, new_tokens: int, streams: tuple[list[int], list[int]]) -> int:
    """First mismatch of the two streams in float32 (-1: identical). ``streams`` are the
    run's own, reused when the run is float32 already."""
    if next(model.parameters()).dtype == torch.float32:
        return first_mismatch(*streams)
    ref = copy.deepcopy(model).float()
    a = greedy_recompute(ref, ids, new_tokens)[0].tolist()
    b = greedy_cached(ref, ids, new_tokens)[0].tolist()
    del ref
    return first_mismatch(a, b)
