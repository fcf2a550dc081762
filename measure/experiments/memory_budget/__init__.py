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

The package: ``tables`` declares what is written, ``config`` holds the assumptions and
parameters, ``rows`` computes the budget's rows and ``check`` measures; the rest is here.

Writes ``site_data/memory_budget/``. Alone: ``python -m measure run --only memory_budget``.
"""

from __future__ import annotations

from measure.experiments.memory_budget.check import formula_check
from measure.experiments.memory_budget.config import CACHE_PRECISIONS, SPEC_MODELS, SPEC_PRECISIONS, Config
from measure.experiments.memory_budget.rows import budget_row, config_row, speed_row, users_row, windowed_row
from measure.experiments.memory_budget.tables import TABLES, VALUES
from measure.lab.architecture_rules import rule_rows
from measure.lab.budget import budget_kv_bytes_per_token, gib_to_bytes
from measure.lab.context import Context
from measure.lab.model_config import shape_from_config
from measure.reference.cards import CARDS
from measure.reference.public_configs import PUBLIC_CONFIGS
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run"]

TITLE = "The memory budget, and the calculator"


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
        config_row(
            p.model,
            p.config,
            reference_params=p.published_params,
            reference="published",
            source=p.source,
            stated_active_params=p.stated_active_params,
        )
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
            {
                "card": c.name,
                "memory_gib": c.memory_gib,
                "bandwidth_gb_s": c.bandwidth_gb_s,
                "peak_tflops": c.peak.dense_tflops if c.peak else None,
                "source": c.source,
                "peak_source": c.peak.source if c.peak else c.source,  # where its vendor states none
            }
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
