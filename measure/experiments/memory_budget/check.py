"""§10's measured check: the run's model prefills T tokens, and its peak memory (CUDA
allocator, or on a CPU the process's peak resident set) is put next to the budget
formula's weights + cache + reserve."""

from __future__ import annotations

import gc

import torch

from measure.lab.budget import budget_kv_bytes_per_token, gib_to_bytes, weight_bytes
from measure.lab.context import Context
from measure.lab.generation import cache_storage_bytes
from measure.lab.memory import measure_peak


def _prefill_keeping(model, ids: torch.Tensor, keep: int) -> int:
    """One prefill pass that keeps logits for the last ``keep`` positions (0: all of
    them, the transformers default); returns the bytes of the cache it filled."""
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=keep)
        return cache_storage_bytes(out.past_key_values)


def formula_check(
    ctx: Context, *, reserve_gib: float, check_tokens: tuple[int, ...], check_all_logits: bool
) -> tuple[list[dict], dict]:
    """Rows of the ``formula_check`` table, and the ``check_*`` values that go with them."""
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
    reserve = gib_to_bytes(reserve_gib)
    limit = getattr(model.config, "max_position_embeddings", None) or max(check_tokens)
    tokens = [t for t in check_tokens if t <= limit]
    _prefill_keeping(model, ctx.prompt_ids(min(tokens)), 1)  # first pass: one-time thread pools, kernels
    plan = [(t, "last position", 1) for t in tokens]
    if check_all_logits:
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
    values = {
        "check_dtype": str(ctx.dtype).removeprefix("torch."),
        "check_weight_bits": 8 * elem,
        "check_params": params,
        "check_weights_bytes": w_formula,
        "check_weights_storage_bytes": w_storage,
        "check_kv_bytes_per_token": kv,
        "all_logits_bytes": max(tokens) * model.config.vocab_size * elem,
        "vocabulary": model.config.vocab_size,
        "check_device": ctx.device.type,
    }
    return rows, values
