"""§10's assumptions (the spec's model shapes and precisions) and parameters."""

from __future__ import annotations

from dataclasses import dataclass

# spec §10: the chapter's model shapes (parameters, layers, KV heads x head dim; the 13B
# has full multi-head attention, 40 heads of 128).
SPEC_MODELS: tuple[dict, ...] = (
    {"model": "7B", "params": 7.0e9, "layers": 32, "heads": 32, "kv_heads": 8, "head_dim": 128},
    {"model": "13B", "params": 13.0e9, "layers": 40, "heads": 40, "kv_heads": 40, "head_dim": 128},
    {"model": "70B", "params": 70.0e9, "layers": 80, "heads": 64, "kv_heads": 8, "head_dim": 128},
)
# spec §10: fp16; int8; int4 in groups of 128 with an fp16 scale each, 4 + 16/128 bits.
SPEC_PRECISIONS: tuple[tuple[str, float], ...] = (("fp16", 16.0), ("int8", 8.0), ("int4 g128", 4.125))
# The cache's element sizes (a 4-bit cache's per-group scales are not counted).
CACHE_PRECISIONS: tuple[tuple[str, float], ...] = (("fp32", 4.0), ("fp16 / bf16", 2.0), ("fp8", 1.0), ("int4", 0.5))
# The budget's context per user and the contexts of ``users_by_context``: the Config's
# defaults in every profile, and the declared column names and labels of ``tables``.
CONTEXT_PER_USER = 4096
USER_CONTEXTS: tuple[int, ...] = (4096, 8192, 32768, 131072)


@dataclass(frozen=True, kw_only=True)
class Config:
    cards_gib: tuple[float, ...] = (8, 16, 24, 48, 80, 141)  # spec §10, "more welcome" included
    reserve_gib: float = 1.5  # spec §10
    kv_bytes_per_element: float = 2  # spec §10: an fp16 cache
    context_per_user: int = CONTEXT_PER_USER  # declared in TABLES: change both together
    user_contexts: tuple[int, ...] = USER_CONTEXTS
    user_context_cards: tuple[float, ...] = (24, 80)
    check_tokens: tuple[int, ...] = (128, 512, 1024)
    # At the largest count, also the transformers default prefill, which computes the
    # logits of every position (tokens x vocabulary floats) where one row is needed.
    check_all_logits: bool = True
    # Sliding windows: each windowed public config at these contexts (up to its longest
    # position) on one card, fp16 weights and cache.
    windowed_contexts: tuple[int, ...] = (4096, 8192, 32768)
    windowed_card_gib: float = 24
    # The speed floor: the 7B in fp16 at the budget's context, for these user counts.
    speed_model: str = "7B"
    speed_users: tuple[int, ...] = (1, 8, 32)
    # The calculator starts on this card (24 GiB, the budget's middle card) serving these users.
    default_card: str = "NVIDIA GeForce RTX 4090"
    users_served: int = 8

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls(check_tokens=(512, 2048, 8192))  # 8,192: SmolLM2's longest position
        if profile == "cpu":
            return cls()
        return cls(check_tokens=(8, 32))
