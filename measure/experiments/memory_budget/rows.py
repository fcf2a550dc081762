"""§10's budget rows, computed from stated assumptions (no model is involved): one card x
model x precision -> weights, free bytes, max resident tokens, users; public configs and
what they give; sliding windows; the decode step's floor on named cards."""

from __future__ import annotations

from measure.lab.budget import (
    cache_bytes_per_user,
    concurrent_users,
    decode_floor,
    free_bytes,
    gib_to_bytes,
    kv_bytes_per_layer_token,
    max_resident_tokens,
    users_at_context,
    weight_bytes,
)
from measure.lab.model_config import shape_from_config


def budget_row(card: float, m: dict, precision: str, bits: float, *, reserve_gib: float, context_per_user: int) -> dict:
    """A row of the ``budget`` table; ``m`` is a row of the ``models`` table."""
    vram, reserve = gib_to_bytes(card), gib_to_bytes(reserve_gib)
    w = weight_bytes(params=m["params"], bits_per_weight=bits)
    tokens = max_resident_tokens(
        vram_bytes=vram, reserve_bytes=reserve, weight_bytes=w, kv_bytes_per_token=m["kv_bytes_per_token"]
    )
    verdict = "does not fit" if tokens is None else ("no room for the cache" if tokens == 0 else "fits")
    return {
        "card_gib": card,
        "model": m["model"],
        "precision": precision,
        "weight_bits": bits,
        "weights_bytes": w,
        "kv_bytes_per_token": m["kv_bytes_per_token"],
        "free_bytes": free_bytes(card_bytes=vram, reserve_bytes=reserve, weight_bytes=w),
        "max_tokens": tokens,
        "users": concurrent_users(max_tokens=tokens, context_per_user=context_per_user),
        "verdict": verdict,
    }


def users_row(b: dict, contexts) -> dict:
    """A row of the ``users_by_context`` table: the budget row ``b`` split into users at each context."""
    row = {"card_gib": b["card_gib"], "model": b["model"], "precision": b["precision"], "max_tokens": b["max_tokens"]}
    for c in contexts:
        row[f"users_at_{c}"] = concurrent_users(max_tokens=b["max_tokens"], context_per_user=c)
    return row


def config_row(
    model: str,
    cfg: dict,
    *,
    reference_params: int,
    reference: str,
    source: str,
    stated_active_params: int | None = None,
) -> dict:
    """A row of the ``configs`` table: what ``cfg`` (a config.json) gives, beside the
    parameter count it is checked against (and a mixture's stated count per token)."""
    s = shape_from_config(cfg)
    return {
        "model": model,
        "model_type": s.model_type,
        "params": s.params,
        "active_params": s.active_params,
        "stated_active_params": stated_active_params,
        "reference_params": reference_params,
        "reference": reference,
        "params_agree": s.params == reference_params,
        "layers": s.layers,
        "heads": s.heads,
        "kv_heads": s.kv_heads,
        "head_dim": s.head_dim,
        "experts": s.experts,
        "experts_per_token": s.experts_per_token,
        "window": s.window,
        "windowed_layers": s.windowed_layers,
        "max_position": cfg.get("max_position_embeddings"),
        "problems": "; ".join(s.problems),
        "source": source,
    }


def windowed_row(c: dict, context: int, *, card_gib: float, reserve_gib: float, bits: float, kv_bytes: float) -> dict:
    """A row of the ``windowed`` table: the config row ``c`` at ``context`` tokens, its
    cache with the sliding window and as if every layer attended fully."""
    layer_token = kv_bytes_per_layer_token(kv_heads=c["kv_heads"], head_dim=c["head_dim"], bytes_per_element=kv_bytes)
    w = weight_bytes(params=c["params"], bits_per_weight=bits)
    free = free_bytes(card_bytes=gib_to_bytes(card_gib), reserve_bytes=gib_to_bytes(reserve_gib), weight_bytes=w)
    shape = dict(layer_token_bytes=layer_token, layers=c["layers"], context=context)
    full = cache_bytes_per_user(**shape, windowed_layers=0, window=0)
    windowed = cache_bytes_per_user(**shape, windowed_layers=c["windowed_layers"], window=c["window"])
    return {
        "model": c["model"],
        "window": c["window"],
        "windowed_layers": c["windowed_layers"],
        "layers": c["layers"],
        "context": context,
        "cache_full_bytes": full,
        "cache_windowed_bytes": windowed,
        "cache_fraction": windowed / full,
        "users_full": users_at_context(free_bytes=free, cache_bytes=full),
        "users_windowed": users_at_context(free_bytes=free, cache_bytes=windowed),
    }


def speed_row(card, m: dict, users: int, *, bits: float, reserve_gib: float, context: int) -> dict:
    """A row of the ``speed_floor`` table: the decode step's floor on ``card`` (a
    measure.reference.cards.Card) for ``users`` of the model row ``m`` at ``context``."""
    w = weight_bytes(params=m["params"], bits_per_weight=bits)
    per_user = m["kv_bytes_per_token"] * context
    free = free_bytes(card_bytes=gib_to_bytes(card.memory_gib), reserve_bytes=gib_to_bytes(reserve_gib), weight_bytes=w)
    fit = users_at_context(free_bytes=free, cache_bytes=per_user)
    floor = decode_floor(weight_bytes=w, cache_bytes_per_user=per_user, users=users, bandwidth_gb_s=card.bandwidth_gb_s)
    return {
        "card": card.name,
        "bandwidth_gb_s": card.bandwidth_gb_s,
        "model": m["model"],
        "users": users,
        "bytes_per_step": w + users * per_user,
        "step_ms": floor["step_s"] * 1e3,
        "tokens_per_s_per_user": floor["tokens_per_s_per_user"],
        "tokens_per_s": floor["tokens_per_s"],
        "fits": fit is not None and fit >= users,
    }
