"""§10's budget rows, computed from stated assumptions (no model is involved): one card x
model x precision -> weights, free bytes, max resident tokens, users. Used by
``measure.experiments.memory_budget``."""

from __future__ import annotations

from measure.lab.formulas import concurrent_users, gib_to_bytes, max_resident_tokens, weight_bytes


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
        "free_bytes": vram - reserve - w,
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
