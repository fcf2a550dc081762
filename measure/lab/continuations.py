"""A greedy continuation decoded once per run: the quality page and the
speculative-decoding page continue the same prompt with the same model, and ten seconds
of decoding on a CPU are spent once. A continuation is kept for the weights it was
decoded with; any weight changed in place since (and not put back) decodes it again."""

from __future__ import annotations

import weakref

import torch

from measure.lab.generation import greedy_cached

# model -> {(prompt, new_tokens, weights): continuation}, the latest weights' only
_DECODED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@torch.inference_mode()
def weights_fingerprint(model) -> tuple:
    """Every parameter and buffer summed in float64, with its name and shape: equal for the
    same weights (restored ones included), different once any is changed in place, and
    read in a tenth of a second for 135 M parameters (one pass, nothing copied)."""
    return tuple(
        (name, tuple(t.shape), float(torch.sum(t, dtype=torch.float64)) if t.is_floating_point() else int(t.sum()))
        for name, t in (*model.named_parameters(), *model.named_buffers())
    )


def greedy_once(model, prompt_ids: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """``greedy_cached(model, prompt_ids, new_tokens)``, decoded once for these weights: a
    later call with the same weights (after an experiment restored what it quantized, say)
    is given a copy of it."""
    key = (tuple(prompt_ids.reshape(-1).tolist()), new_tokens, weights_fingerprint(model))
    memo = _DECODED.setdefault(model, {})
    if key not in memo:
        memo.clear()
        memo[key] = greedy_cached(model, prompt_ids, new_tokens)
    return memo[key].clone()
