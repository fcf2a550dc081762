"""§10 The memory budget, and the calculator.

A card's memory holds the weights, a fixed runtime reserve, and the KV cache of every
token resident at once, summed over all concurrent requests. So

    max tokens = floor((VRAM - reserve - weights) / KV bytes per token)
    users      = floor(max tokens / context per user)

Two kinds of table:

* **Computed from stated assumptions** (spec §10; no model is loaded for them): the
  cards, the weight precisions and the 7B / 13B / 70B shapes are the spec's, the
  measured model enters with its real shape and parameter count. ``budget``: every card
  x model x precision -> weights, free bytes, max resident tokens (or "does not fit"),
  users at the chosen context. ``users_by_context``: the same budget split into users
  at several contexts. ``models``, ``precisions``, ``cards``, ``assumptions``: the
  inputs, also the calculator's presets.
* **Published facts, and what they give** (no model is loaded): ``configs``, public
  config.json files with the shape and parameter count measure/lab/model_config.py
  derives, next to the count each publisher states (and the run's own model's config
  next to the count of its real weights); ``architectures``, the layout rules that
  derivation uses, which the calculator reads; ``windowed``, what a sliding window
  does to one user's cache and to the users that fit; ``card_presets``, cards with
  their memory and bandwidth; ``speed_floor``, the decode step's floor on each card;
  ``cache_precisions``, the cache's bytes per element.
* **Measured** (``formula_check``): the run's model actually prefills T tokens; the
  peak memory (CUDA allocator, or on a CPU the process's peak resident set) is put next
  to the formula's weights + cache + reserve, and the gap is shown.

Writes ``site_data/memory_budget/``. Alone: ``python -m measure run --only memory_budget``.
"""

from __future__ import annotations

from dataclasses import dataclass

from measure.lab.budget import budget_kv_bytes_per_token, gib_to_bytes
from measure.lab.context import Context
from measure.lab.memory_budget_check import formula_check
from measure.lab.memory_budget_rows import budget_row, config_row, speed_row, users_row, windowed_row
from measure.lab.model_config import rule_rows, shape_from_config
from measure.reference.cards import CARDS
from measure.reference.public_configs import PUBLIC_CONFIGS
from sitedata.schema import Column, Result, Table, Value

TITLE = "The memory budget, and the calculator"

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
# defaults in every profile, and the declared column names and labels below.
CONTEXT_PER_USER = 4096
USER_CONTEXTS: tuple[int, ...] = (4096, 8192, 32768, 131072)

# The measured check runs in the run's dtype (its bytes per weight and per cached
# element): those bytes reproduce on the same device type and dtype.
_RUN_DTYPE = dict(compare="exact", scope="device")
_TIMING = dict(compare="timing")
_CARD = Column("card_gib", "GiB", "card")

TABLES = (
    Table(
        "models",
        "Model shapes (spec assumptions, and the measured model)",
        (
            Column("model"),
            Column("params", "parameters", "count"),
            Column("layers", label="L"),
            Column("heads", label="H"),
            Column("kv_heads", label="H_kv"),
            Column("head_dim", label="d"),
            Column("kv_bytes_per_element", "bytes", "KV bytes/element"),
            Column("kv_bytes_per_token", "bytes", "KV bytes/token"),
            Column("window", "tokens", "sliding window"),
            Column("windowed_layers", label="layers with the window"),
            Column("source"),
        ),
    ),
    Table(
        "precisions",
        "Weight precisions (spec assumptions)",
        (Column("precision"), Column("weight_bits", "bits", "bits per weight")),
    ),
    Table("cards", "Cards", (_CARD, Column("card_bytes", "bytes", "bytes"))),
    Table(
        "assumptions",
        "Budget assumptions",
        (
            Column("reserve_gib", "GiB", "runtime reserve"),
            Column("reserve_bytes", "bytes", "reserve"),
            Column("kv_bytes_per_element", "bytes", "KV bytes/element"),
            Column("context_per_user", "tokens", "context per user"),
            Column("gib_bytes", "bytes", "1 GiB"),
        ),
    ),
    Table(
        "budget",
        "The budget of every card, computed from the stated assumptions",
        (
            _CARD,
            Column("model"),
            Column("precision"),
            Column("weight_bits", "bits", "bits/weight"),
            Column("weights_bytes", "bytes", "weights"),
            Column("kv_bytes_per_token", "bytes", "KV/token"),
            Column("free_bytes", "bytes", "left for the cache"),
            Column("max_tokens", "tokens", "max resident tokens"),
            Column("users", "users", f"at {CONTEXT_PER_USER:,} tokens each"),
            Column("verdict"),
        ),
    ),
    Table(
        "users_by_context",
        "Concurrent users by context length, computed from the stated assumptions",
        (
            _CARD,
            Column("model"),
            Column("precision"),
            Column("max_tokens", "tokens", "max resident tokens"),
            *(Column(f"users_at_{c}", "users", f"at {c:,}") for c in USER_CONTEXTS),
        ),
    ),
    Table(
        "cache_precisions",
        "Cache precisions",
        (Column("precision"), Column("kv_bytes_per_element", "bytes", "bytes per element")),
    ),
    Table(
        "configs",
        "Public config.json files: what they give, against the published parameter count",
        (
            Column("model"),
            Column("model_type", label="model_type"),
            Column("params", "parameters", "from the config"),
            Column("reference_params", "parameters", "published, or counted"),
            Column("reference", label="checked against"),
            Column("params_agree", label="equal"),
            Column("layers", label="L"),
            Column("kv_heads", label="H_kv"),
            Column("head_dim", label="d"),
            Column("window", "tokens", "sliding window"),
            Column("windowed_layers", label="layers with the window"),
            Column("max_position", "tokens", "longest position"),
            Column("problems", label="not derived"),
            Column("source"),
        ),
    ),
    Table(
        "architectures",
        "How each architecture lays out its weights (the derivation's rules)",
        (
            Column("model_type", label="model_type"),
            Column("norms_per_layer", label="norms per layer"),
            Column("qk_norm", label="query/key norm"),
            Column("qkv_bias", label="q, k, v bias"),
            Column("o_bias", label="output bias"),
            Column("mlp_bias", label="MLP bias"),
            Column("tied_default", label="tied by default"),
            Column("windowed_layers", label="layers with the window"),
            Column("experts_field", label="experts"),
        ),
    ),
    Table(
        "windowed",
        "Sliding windows: one user's cache, and the users that fit, with and without the window",
        (
            Column("model"),
            Column("window", "tokens", "window"),
            Column("windowed_layers", label="layers with it"),
            Column("layers", label="L"),
            Column("context", "tokens", "context"),
            Column("cache_full_bytes", "bytes", "cache, no window"),
            Column("cache_windowed_bytes", "bytes", "cache, window"),
            Column("cache_fraction", "fraction", "with / without"),
            Column("users_full", "users", "users, no window"),
            Column("users_windowed", "users", "users, window"),
        ),
    ),
    Table(
        "card_presets",
        "Cards: memory and bandwidth as their vendors state them",
        (
            Column("card"),
            Column("memory_gib", "GiB", "memory"),
            Column("bandwidth_gb_s", "GB/s", "bandwidth"),
            Column("source"),
        ),
    ),
    Table(
        "calculator_defaults",
        "The calculator's starting card and users served",
        (Column("card"), Column("users_served", "users", "users served")),
    ),
    Table(
        "speed_floor",
        "The decode step's floor: the weights and every user's cache read once per step",
        (
            Column("card"),
            Column("bandwidth_gb_s", "GB/s", "bandwidth"),
            Column("model"),
            Column("users", "users", "users"),
            Column("bytes_per_step", "bytes", "bytes read per step"),
            Column("step_ms", "ms", "step floor"),
            Column("tokens_per_s_per_user", "tokens/s", "per user"),
            Column("tokens_per_s", "tokens/s", "in total"),
            Column("fits", label="fits in memory"),
        ),
    ),
    Table(
        "formula_check",
        "The formula against a measured prefill of the run's model",
        (
            Column("tokens", "tokens", "resident tokens"),
            Column("logits_kept", label="logits computed for"),
            Column("weights_bytes", "bytes", "weights (formula)", **_RUN_DTYPE),
            Column("cache_formula_bytes", "bytes", "cache (formula)", **_RUN_DTYPE),
            Column("cache_measured_bytes", "bytes", "cache (measured storage)", **_RUN_DTYPE),
            Column("predicted_bytes", "bytes", "weights + cache + reserve", **_RUN_DTYPE),
            Column("baseline_bytes", "bytes", "in use before", **_TIMING),
            Column("peak_bytes", "bytes", "measured peak", **_TIMING),
            Column("above_baseline_bytes", "bytes", "peak above before", **_TIMING),
            Column(
                "transient_bytes",
                "bytes",
                "of which not cache",
                description="peak above before, minus the cache: the pass's working memory",
                **_TIMING,
            ),
            Column(
                "beyond_weights_and_cache_bytes",
                "bytes",
                "peak − weights − cache",
                description="what the reserve has to cover",
                **_TIMING,
            ),
            Column("gap_bytes", "bytes", "peak − predicted", **_TIMING),
        ),
    ),
)
VALUES = (
    Value("reserve_gib", "GiB"),
    Value("context_per_user", "tokens"),
    Value("measured_model"),
    Value("check_largest_tokens", "tokens"),
    Value(
        "check_gap_bytes",
        "bytes",
        description="measured peak minus weights + cache + reserve, at the largest token count",
        **_TIMING,
    ),
    Value(
        "check_prediction_excess_bytes",
        "bytes",
        description="weights + cache + reserve minus the measured peak (positive: the formula over-predicts)",
        **_TIMING,
    ),
    Value(
        "check_overhead_bytes",
        "bytes",
        description="measured peak minus weights and cache, at the largest token count",
        **_TIMING,
    ),
    Value("cache_matches_formula", description="every measured cache storage equals the formula"),
    Value("check_dtype", **_RUN_DTYPE),
    Value("check_weight_bits", "bits", **_RUN_DTYPE),
    Value("check_params", "parameters"),
    Value("check_weights_bytes", "bytes", **_RUN_DTYPE),
    Value(
        "check_weights_storage_bytes",
        "bytes",
        description="bytes of the parameter storages actually held by the model",
        **_RUN_DTYPE,
    ),
    Value("check_kv_bytes_per_token", "bytes", **_RUN_DTYPE),
    Value(
        "all_logits_bytes",
        "bytes",
        description="logits of every position at the largest count: tokens x vocabulary x bytes",
        **_RUN_DTYPE,
    ),
    Value("vocabulary", "tokens"),
    Value("check_device", **_RUN_DTYPE),
    Value("configs_checked", "models", description="public configs whose derived parameter count is checked"),
    Value("configs_agree", description="every public config gives its published parameter count"),
    Value(
        "measured_config_params",
        "parameters",
        description="the run's model's parameter count as its config.json gives it",
    ),
    Value("measured_config_agrees", description="the run's model's config gives the count of its real weights"),
    Value("windowed_card_gib", "GiB"),
    Value("speed_context", "tokens"),
    Value("speed_model"),
)


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


def _model_rows(ctx: Context, cfg: Config) -> list[dict]:
    s = ctx.model.shape()
    params = sum(p.numel() for p in ctx.model.model.parameters())  # shared (tied) tensors once
    windows = shape_from_config(ctx.model.model.config.to_dict())
    own = {
        "model": ctx.model.name.split("/")[-1],
        "params": params,
        "layers": s["layers"],
        "heads": s["heads"],
        "kv_heads": s["kv_heads"],
        "head_dim": s["head_dim"],
        "window": windows.window,
        "windowed_layers": windows.windowed_layers,
    }
    rows = []
    for m, source in [
        *((m, "a usual shape of its class (assumed)") for m in SPEC_MODELS),
        (own, "measured model's shape"),
    ]:
        kv = budget_kv_bytes_per_token(
            layers=m["layers"],
            kv_heads=m["kv_heads"],
            head_dim=m["head_dim"],
            bytes_per_element=cfg.kv_bytes_per_element,
        )
        rows.append(
            {
                "model": m["model"],
                "params": int(m["params"]),
                "layers": m["layers"],
                "heads": m["heads"],
                "kv_heads": m["kv_heads"],
                "head_dim": m["head_dim"],
                "kv_bytes_per_element": cfg.kv_bytes_per_element,
                "kv_bytes_per_token": kv,
                "window": m.get("window", 0),
                "windowed_layers": m.get("windowed_layers", 0),
                "source": source,
            }
        )
    return rows


def run(cfg: Config, ctx: Context) -> Result:
    if cfg.default_card not in {c.name for c in CARDS}:
        raise ValueError(f"default_card {cfg.default_card!r} is not one of measure/reference/cards.py's cards")
    models = _model_rows(ctx, cfg)

    def row(card, m, precision, bits):
        return budget_row(card, m, precision, bits, reserve_gib=cfg.reserve_gib, context_per_user=cfg.context_per_user)

    budget = [row(card, m, p, bits) for card in cfg.cards_gib for m in models for p, bits in SPEC_PRECISIONS]
    users_rows = [
        users_row(row(card, m, p, bits), cfg.user_contexts)
        for card in cfg.user_context_cards
        for m in models[: len(SPEC_MODELS)]
        for p, bits in SPEC_PRECISIONS
    ]
    ctx.log("  formula against a measured prefill")
    check_rows, check_values = formula_check(
        ctx, reserve_gib=cfg.reserve_gib, check_tokens=cfg.check_tokens, check_all_logits=cfg.check_all_logits
    )

    configs = [
        config_row(p.model, p.config, reference_params=p.published_params, reference="published", source=p.source)
        for p in PUBLIC_CONFIGS
    ]
    own = ctx.model.model.config.to_dict()
    configs.append(
        config_row(
            ctx.model.name,
            own,
            reference_params=models[-1]["params"],
            reference="its weights counted",
            source="the run's model",
        )
    )
    windowed = [
        windowed_row(
            c,
            context,
            card_gib=cfg.windowed_card_gib,
            reserve_gib=cfg.reserve_gib,
            bits=16.0,
            kv_bytes=cfg.kv_bytes_per_element,
        )
        for c in configs[: len(PUBLIC_CONFIGS)]
        if c["windowed_layers"]
        for context in cfg.windowed_contexts
        if context <= c["max_position"]
    ]
    speed_model = next(m for m in models if m["model"] == cfg.speed_model)
    speed = [
        speed_row(card, speed_model, users, bits=16.0, reserve_gib=cfg.reserve_gib, context=cfg.context_per_user)
        for card in CARDS
        for users in cfg.speed_users
    ]

    tables = {
        "models": models,
        "precisions": [{"precision": p, "weight_bits": b} for p, b in SPEC_PRECISIONS],
        "cards": [{"card_gib": c, "card_bytes": gib_to_bytes(c)} for c in cfg.cards_gib],
        "assumptions": [
            {
                "reserve_gib": cfg.reserve_gib,
                "reserve_bytes": gib_to_bytes(cfg.reserve_gib),
                "kv_bytes_per_element": cfg.kv_bytes_per_element,
                "context_per_user": cfg.context_per_user,
                "gib_bytes": gib_to_bytes(1),
            }
        ],
        "budget": budget,
        "users_by_context": users_rows,
        "formula_check": check_rows,
        "cache_precisions": [{"precision": p, "kv_bytes_per_element": b} for p, b in CACHE_PRECISIONS],
        "configs": configs,
        "architectures": rule_rows(),
        "windowed": windowed,
        "card_presets": [
            {"card": c.name, "memory_gib": c.memory_gib, "bandwidth_gb_s": c.bandwidth_gb_s, "source": c.source}
            for c in CARDS
        ],
        "speed_floor": speed,
        "calculator_defaults": [{"card": cfg.default_card, "users_served": cfg.users_served}],
    }
    last = [r for r in check_rows if r["logits_kept"] == "last position"][-1]
    values = {
        "reserve_gib": cfg.reserve_gib,
        "context_per_user": cfg.context_per_user,
        "measured_model": models[-1]["model"],
        "check_largest_tokens": last["tokens"],
        "check_gap_bytes": last["gap_bytes"],
        "check_prediction_excess_bytes": -last["gap_bytes"],
        "check_overhead_bytes": last["beyond_weights_and_cache_bytes"],
        "cache_matches_formula": all(r["cache_measured_bytes"] == r["cache_formula_bytes"] for r in check_rows),
        **check_values,
        "configs_checked": len(PUBLIC_CONFIGS),
        "configs_agree": all(c["params_agree"] for c in configs[: len(PUBLIC_CONFIGS)]),
        "measured_config_params": configs[-1]["params"],
        "measured_config_agrees": configs[-1]["params_agree"],
        "windowed_card_gib": cfg.windowed_card_gib,
        "speed_context": cfg.context_per_user,
        "speed_model": cfg.speed_model,
    }
    return Result(tables=tables, values=values)
