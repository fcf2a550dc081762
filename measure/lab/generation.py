"""Greedy decoding written out by hand, so that what is timed is exactly one forward
pass per step and nothing hidden (no sampling, no stopping rules, no logits processors).
The kv-cache page shows these loops as they are here (the ``--8<--`` section markers)."""

from __future__ import annotations

import torch


# --8<-- [start:recompute]
@torch.inference_mode()
def recompute_step(model, seq: torch.Tensor) -> torch.Tensor:
    """One step: the whole sequence through the model again; the sequence and its next token."""
    logits = model(input_ids=seq, use_cache=False).logits[:, -1, :]
    return torch.cat([seq, logits.argmax(dim=-1, keepdim=True)], dim=1)


@torch.inference_mode()
def greedy_recompute(model, ids: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Every step runs the whole sequence again, keeping no state between steps."""
    seq = ids
    for _ in range(new_tokens):
        seq = recompute_step(model, seq)
    return seq[:, ids.shape[1] :]
    # --8<-- [end:recompute]


# --8<-- [start:cached]
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
    # --8<-- [end:cached]


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


def random_cache(model, *, batch: int, tokens: int, seed: int = 0):
    """A cache of ``tokens`` positions per request holding random keys and values, in the
    model's own cache class, shapes, dtype and device: what a decode step at that context
    reads, without the prefill that would have written it. A step's time does not depend
    on the values, and a 64 x 64-token or a 4,096-token prefill on a CPU would cost far
    more than the step it prepares."""
    from transformers import DynamicCache

    from measure.lab.models import architecture_shape

    shape = architecture_shape(model.config)
    p = next(model.parameters())
    try:
        cache = DynamicCache(config=model.config)
    except TypeError:  # transformers before 4.56 takes no config
        cache = DynamicCache()
    g = torch.Generator(device=p.device).manual_seed(seed)
    size = (batch, shape["kv_heads"], tokens, shape["head_dim"])
    for layer in range(shape["layers"]):
        k = torch.randn(size, generator=g, device=p.device, dtype=p.dtype)
        v = torch.randn(size, generator=g, device=p.device, dtype=p.dtype)
        cache.update(k, v, layer)
    return cache


@torch.inference_mode()
def decode_step_at(model, token: torch.Tensor, cache, tokens: int):
    """One decode step against ``cache`` cut back to ``tokens`` positions first (the
    previous step at this point grew it by one), so repeated steps all see the same
    context."""
    crop_cache(cache, tokens)
    return decode_step(model, token, cache)


def crop_cache(cache, tokens: int) -> None:
    """Cut ``cache`` back to its first ``tokens`` positions, in place (nothing if it holds
    no more). Cropping makes views: it copies nothing."""
    extra = cache.get_seq_length() - tokens
    if extra > 0:
        cache.crop(-extra)  # negative: remove that many (every transformers version agrees)
