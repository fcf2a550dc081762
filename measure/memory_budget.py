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
* **Measured** (``formula_check``): the run's model actually prefills T tokens; the
  peak memory (CUDA allocator, or on a CPU the process's peak resident set) is put next
  to the formula's weights + cache + reserve, and the gap is shown.

Writes ``site_data/memory_budget/``. Alone: ``python -m measure run --only memory_budget``.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

import torch

from measure.context import Context
from measure.formulas import (
    budget_kv_bytes_per_token,
    concurrent_users,
    gib_to_bytes,
    max_resident_tokens,
    weight_bytes,
)
from measure.generation import cache_storage_bytes
from measure.memory import measure_peak
from measure.schema import Column, Result, Table, Value

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


@dataclass(frozen=True, kw_only=True)
class Config:
    cards_gib: tuple[float, ...] = (8, 16, 24, 48, 80, 141)  # spec §10, "more welcome" included
    reserve_gib: float = 1.5  # spec §10
    kv_bytes_per_element: float = 2  # spec §10: an fp16 cache
    context_per_user: int = 4096
    user_contexts: tuple[int, ...] = (4096, 8192, 32768, 131072)
    user_context_cards: tuple[float, ...] = (24, 80)
    check_tokens: tuple[int, ...] = (128, 512, 1024)
    # At the largest count, also the transformers default prefill, which computes the
    # logits of every position (tokens x vocabulary floats) where one row is needed.
    check_all_logits: bool = True

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
    own = {
        "model": ctx.model.name.split("/")[-1],
        "params": params,
        "layers": s["layers"],
        "heads": s["heads"],
        "kv_heads": s["kv_heads"],
        "head_dim": s["head_dim"],
    }
    rows = []
    for m, source in [*((m, "spec §10 assumption") for m in SPEC_MODELS), (own, "measured model's shape")]:
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
                "source": source,
            }
        )
    return rows


def _budget_row(card: float, m: dict, precision: str, bits: float, cfg: Config) -> dict:
    vram, reserve = gib_to_bytes(card), gib_to_bytes(cfg.reserve_gib)
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
        "users": concurrent_users(max_tokens=tokens, context_per_user=cfg.context_per_user),
        "verdict": verdict,
    }


def _prefill_keeping(model, ids: torch.Tensor, keep: int) -> int:
    """One prefill pass that keeps logits for the last ``keep`` positions (0: all of
    them, the transformers default); returns the bytes of the cache it filled."""
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=keep)
        return cache_storage_bytes(out.past_key_values)


def _formula_check(ctx: Context, cfg: Config) -> tuple[list[dict], list[Value]]:
    model = ctx.model.model
    s = ctx.model.shape()
    params = sum(p.numel() for p in model.parameters())
    elem = torch.empty((), dtype=ctx.dtype).element_size()
    w_formula = weight_bytes(params=params, bits_per_weight=8 * elem)
    storages = {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes() for p in model.parameters()}
    w_storage = sum(storages.values())  # tied tensors share one storage
    kv = budget_kv_bytes_per_token(
        layers=s["layers"], kv_heads=s["kv_heads"], head_dim=s["head_dim"], bytes_per_element=elem
    )
    reserve = gib_to_bytes(cfg.reserve_gib)
    limit = getattr(model.config, "max_position_embeddings", None) or max(cfg.check_tokens)
    tokens = [t for t in cfg.check_tokens if t <= limit]
    _prefill_keeping(model, ctx.prompt_ids(min(tokens)), 1)  # first pass: one-time thread pools, kernels
    plan = [(t, "last position", 1) for t in tokens]
    if cfg.check_all_logits:
        plan.append((max(tokens), "every position", 0))
    rows = []
    for t, method, keep in ctx.progress(plan, "peak memory of a prefill"):
        ids = ctx.prompt_ids(t)
        held = {}
        peak = measure_peak(lambda: held.update(cache=_prefill_keeping(model, ids, keep)), device=ctx.device)
        gc.collect()
        cache_formula = kv * t
        predicted = w_formula + cache_formula + reserve
        rows.append(
            {
                "tokens": t,
                "logits_kept": method,
                "weights_bytes": w_formula,
                "cache_formula_bytes": cache_formula,
                "cache_measured_bytes": held["cache"],
                "predicted_bytes": predicted,
                "baseline_bytes": peak.baseline_bytes,
                "peak_bytes": peak.peak_bytes,
                "above_baseline_bytes": peak.above_baseline_bytes,
                "transient_bytes": peak.above_baseline_bytes - held["cache"],
                "beyond_weights_and_cache_bytes": peak.peak_bytes - w_formula - cache_formula,
                "gap_bytes": peak.peak_bytes - predicted,
            }
        )
    values = [
        Value(name="check_dtype", value=str(ctx.dtype).removeprefix("torch.")),
        Value(name="check_weight_bits", value=8 * elem, unit="bits"),
        Value(name="check_params", value=params, unit="parameters"),
        Value(name="check_weights_bytes", value=w_formula, unit="bytes"),
        Value(
            name="check_weights_storage_bytes",
            value=w_storage,
            unit="bytes",
            description="bytes of the parameter storages actually held by the model",
        ),
        Value(name="check_kv_bytes_per_token", value=kv, unit="bytes"),
        Value(
            name="all_logits_bytes",
            value=max(tokens) * model.config.vocab_size * elem,
            unit="bytes",
            description="logits of every position at the largest count: tokens x vocabulary x bytes",
        ),
        Value(name="vocabulary", value=model.config.vocab_size, unit="tokens"),
        Value(name="check_device", value=ctx.device.type),
    ]
    return rows, values


def run(cfg: Config, ctx: Context) -> Result:
    models = _model_rows(ctx, cfg)
    budget = [
        _budget_row(card, m, precision, bits, cfg)
        for card in cfg.cards_gib
        for m in models
        for precision, bits in SPEC_PRECISIONS
    ]
    users_rows = []
    for card in cfg.user_context_cards:
        for m in models[: len(SPEC_MODELS)]:
            for precision, bits in SPEC_PRECISIONS:
                b = _budget_row(card, m, precision, bits, cfg)
                row = {"card_gib": card, "model": m["model"], "precision": precision, "max_tokens": b["max_tokens"]}
                for c in cfg.user_contexts:
                    row[f"users_at_{c}"] = concurrent_users(max_tokens=b["max_tokens"], context_per_user=c)
                users_rows.append(row)
    ctx.log("  formula against a measured prefill")
    check_rows, check_values = _formula_check(ctx, cfg)

    card_col = Column(name="card_gib", unit="GiB", label="card")
    tables = [
        Table(
            name="models",
            title="Model shapes (spec assumptions, and the measured model)",
            columns=(
                Column(name="model"),
                Column(name="params", unit="parameters", label="count"),
                Column(name="layers", label="L"),
                Column(name="heads", label="H"),
                Column(name="kv_heads", label="H_kv"),
                Column(name="head_dim", label="d"),
                Column(name="kv_bytes_per_element", unit="bytes", label="KV bytes/element"),
                Column(name="kv_bytes_per_token", unit="bytes", label="KV bytes/token"),
                Column(name="source"),
            ),
            rows=models,
        ),
        Table(
            name="precisions",
            title="Weight precisions (spec assumptions)",
            columns=(Column(name="precision"), Column(name="weight_bits", unit="bits", label="bits per weight")),
            rows=[{"precision": p, "weight_bits": b} for p, b in SPEC_PRECISIONS],
        ),
        Table(
            name="cards",
            title="Cards",
            columns=(card_col, Column(name="card_bytes", unit="bytes", label="bytes")),
            rows=[{"card_gib": c, "card_bytes": gib_to_bytes(c)} for c in cfg.cards_gib],
        ),
        Table(
            name="assumptions",
            title="Budget assumptions",
            columns=(
                Column(name="reserve_gib", unit="GiB", label="runtime reserve"),
                Column(name="reserve_bytes", unit="bytes", label="reserve"),
                Column(name="kv_bytes_per_element", unit="bytes", label="KV bytes/element"),
                Column(name="context_per_user", unit="tokens", label="context per user"),
                Column(name="gib_bytes", unit="bytes", label="1 GiB"),
            ),
            rows=[
                {
                    "reserve_gib": cfg.reserve_gib,
                    "reserve_bytes": gib_to_bytes(cfg.reserve_gib),
                    "kv_bytes_per_element": cfg.kv_bytes_per_element,
                    "context_per_user": cfg.context_per_user,
                    "gib_bytes": gib_to_bytes(1),
                }
            ],
        ),
        Table(
            name="budget",
            title="The budget of every card, computed from the stated assumptions",
            columns=(
                card_col,
                Column(name="model"),
                Column(name="precision"),
                Column(name="weight_bits", unit="bits", label="bits/weight"),
                Column(name="weights_bytes", unit="bytes", label="weights"),
                Column(name="kv_bytes_per_token", unit="bytes", label="KV/token"),
                Column(name="free_bytes", unit="bytes", label="left for the cache"),
                Column(name="max_tokens", unit="tokens", label="max resident tokens"),
                Column(name="users", unit="users", label=f"at {cfg.context_per_user:,} tokens each"),
                Column(name="verdict"),
            ),
            rows=budget,
        ),
        Table(
            name="users_by_context",
            title="Concurrent users by context length, computed from the stated assumptions",
            columns=(
                card_col,
                Column(name="model"),
                Column(name="precision"),
                Column(name="max_tokens", unit="tokens", label="max resident tokens"),
                *(Column(name=f"users_at_{c}", unit="users", label=f"at {c:,}") for c in cfg.user_contexts),
            ),
            rows=users_rows,
        ),
        Table(
            name="formula_check",
            title="The formula against a measured prefill of the run's model",
            columns=(
                Column(name="tokens", unit="tokens", label="resident tokens"),
                Column(name="logits_kept", label="logits computed for"),
                Column(name="weights_bytes", unit="bytes", label="weights (formula)"),
                Column(name="cache_formula_bytes", unit="bytes", label="cache (formula)"),
                Column(name="cache_measured_bytes", unit="bytes", label="cache (measured storage)"),
                Column(name="predicted_bytes", unit="bytes", label="weights + cache + reserve"),
                Column(name="baseline_bytes", unit="bytes", kind="timing", label="in use before"),
                Column(name="peak_bytes", unit="bytes", kind="timing", label="measured peak"),
                Column(name="above_baseline_bytes", unit="bytes", kind="timing", label="peak above before"),
                Column(
                    name="transient_bytes",
                    unit="bytes",
                    kind="timing",
                    label="of which not cache",
                    description="peak above before, minus the cache: the pass's working memory",
                ),
                Column(
                    name="beyond_weights_and_cache_bytes",
                    unit="bytes",
                    kind="timing",
                    label="peak − weights − cache",
                    description="what the reserve has to cover",
                ),
                Column(name="gap_bytes", unit="bytes", kind="timing", label="peak − predicted"),
            ),
            rows=check_rows,
        ),
    ]
    last = [r for r in check_rows if r["logits_kept"] == "last position"][-1]
    values = [
        Value(name="reserve_gib", value=cfg.reserve_gib, unit="GiB"),
        Value(name="context_per_user", value=cfg.context_per_user, unit="tokens"),
        Value(name="measured_model", value=models[-1]["model"]),
        Value(name="check_largest_tokens", value=last["tokens"], unit="tokens"),
        Value(
            name="check_gap_bytes",
            value=last["gap_bytes"],
            unit="bytes",
            kind="timing",
            description="measured peak minus weights + cache + reserve, at the largest token count",
        ),
        Value(
            name="check_prediction_excess_bytes",
            value=-last["gap_bytes"],
            unit="bytes",
            kind="timing",
            description="weights + cache + reserve minus the measured peak (positive: the formula over-predicts)",
        ),
        Value(
            name="check_overhead_bytes",
            value=last["beyond_weights_and_cache_bytes"],
            unit="bytes",
            kind="timing",
            description="measured peak minus weights and cache, at the largest token count",
        ),
        Value(
            name="cache_matches_formula",
            value=all(r["cache_measured_bytes"] == r["cache_formula_bytes"] for r in check_rows),
            description="every measured cache storage equals the formula",
        ),
        *check_values,
    ]
    return Result(tables=tables, values=values)
