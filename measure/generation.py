"""Greedy decoding written out by hand, so that what is timed is exactly one forward
pass per step and nothing hidden (no sampling, no stopping rules, no logits processors)."""

from __future__ import annotations

import torch


@torch.inference_mode()
def greedy_recompute(model, ids: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Every step runs the whole sequence again, keeping no state between steps."""
    seq = ids
    for _ in range(new_tokens):
        logits = model(input_ids=seq, use_cache=False).logits[:, -1, :]
        seq = torch.cat([seq, logits.argmax(dim=-1, keepdim=True)], dim=1)
    return seq[:, ids.shape[1] :]


@torch.inference_mode()
def prefill(model, ids: torch.Tensor):
    """One pass over the prompt that fills the cache; returns (next token, cache)."""
    out = model(input_ids=ids, use_cache=True)
    return out.logits[:, -1, :].argmax(dim=-1, keepdim=True), out.past_key_values


@torch.inference_mode()
def decode_step(model, token: torch.Tensor, cache):
    """One new token against the cache; the cache grows by one position in place."""
    out = model(input_ids=token, past_key_values=cache, use_cache=True)
    return out.logits[:, -1, :].argmax(dim=-1, keepdim=True), out.past_key_values


@torch.inference_mode()
def greedy_cached(model, ids: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Prefill once, then one token per step against the cache."""
    token, cache = prefill(model, ids)
    out = [token]
    for _ in range(new_tokens - 1):
        token, cache = decode_step(model, token, cache)
        out.append(token)
    return torch.cat(out, dim=1)


def cache_tensors(cache) -> list[torch.Tensor]:
    """The key and value tensors a transformers cache object holds, layer by layer."""
    tensors = []
    for layer in cache.layers:
        for t in (getattr(layer, "keys", None), getattr(layer, "values", None)):
            if isinstance(t, torch.Tensor):
                tensors.append(t)
    return tensors


def cache_storage_bytes(cache) -> int:
    """Bytes of the distinct storages behind the cache's tensors: what it really
    occupies, not what its shapes suggest (views sharing storage count once)."""
    seen: dict[int, int] = {}
    for t in cache_tensors(cache):
        s = t.untyped_storage()
        seen[s.data_ptr()] = s.nbytes()
    return sum(seen.values())
