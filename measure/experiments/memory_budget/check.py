"""§10's measured check: the run's model prefills T tokens, and its peak memory (CUDA
allocator, or on a CPU the process's peak resident set) is put next to the budget
formula's weights + cache + reserve."""

from __future__ import annotations

import statistics

import torch

from measure.lab.budget import budget_kv_bytes_per_token, gib_to_bytes, weight_bytes
from measure.lab.context import Context
from measure.lab.generation import cache_storage_bytes
from measure.lab.medians import MIN_ROUNDS, is_minimal, median_interval
from measure.lab.memory import measure_peak
from sitedata.schema import interval_names


def _prefill_keeping(model, ids: torch.Tensor, keep: int) -> int:
    """One prefill pass that keeps logits for the last ``keep`` positions (0: all of
    them, the transformers default); returns the bytes of the cache it filled."""
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=keep)
        return cache_storage_bytes(out.past_key_values)


def _median(name: str, samples: list[int]) -> dict:
    """``name`` (the median of ``samples``, the lower of the middle two: a byte count stays
    whole) and its 95 % interval's two bounds."""
    low, high, _ = interval_names(name)
    lo, hi = median_interval(samples)
    return {name: statistics.median_low(samples), low: lo, high: hi}


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
    # The peak of one pass moves from pass to pass by a third and more on a CPU (the heap's
    # state, the allocator's arenas): each pass is read in MIN_ROUNDS interleaved rounds,
    # and every reading below is a median with its 95 % interval.
    readings: dict[tuple, list[dict]] = {entry: [] for entry in plan}
    rounds = 1 if is_minimal() else MIN_ROUNDS
    for entry in ctx.progress([e for _ in range(rounds) for e in plan], "peak memory of a prefill"):
        t, _, keep = entry
        held = {}
        ids = ctx.prompt_ids(t)
        # (measure_peak collects the garbage before it reads the baseline: the last pass's too)
        peak = measure_peak(lambda: held.update(cache=_prefill_keeping(model, ids, keep)), device=ctx.device)
        readings[entry].append({"cache": held["cache"], "baseline": peak.baseline_bytes, "peak": peak.peak_bytes})
    rows = []
    for (t, method, _), samples in readings.items():
        cache_formula = kv * t
        predicted = w_formula + cache_formula + reserve
        cache = samples[0]["cache"]  # a storage's bytes: the same in every round
        rows.append(
            {
                "tokens": t,
                "logits_kept": method,
                "weights_bytes": w_formula,
                "cache_formula_bytes": cache_formula,
                "cache_measured_bytes": cache,
                "predicted_bytes": predicted,
                **_median("baseline_bytes", [r["baseline"] for r in samples]),
                **_median("peak_bytes", [r["peak"] for r in samples]),
                **_median("above_baseline_bytes", [r["peak"] - r["baseline"] for r in samples]),
                **_median("transient_bytes", [r["peak"] - r["baseline"] - cache for r in samples]),
                **_median("beyond_weights_and_cache_bytes", [r["peak"] - w_formula - cache_formula for r in samples]),
                **_median("gap_bytes", [r["peak"] - predicted for r in samples]),
                "readings": len(samples),
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
