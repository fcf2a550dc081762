"""§4's measurement: one decode step for B requests at every batch size, eager and
compiled, all interleaved in one sweep (``sampling.interleaved``), what each eager step
does, counted once before it is timed (``measure/lab/step_counts.py``), and the floor
beside each (the weights plus the B caches over the run's one bandwidth,
``ctx.calibration``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from measure.experiments.batching.config import Config
from measure.experiments.batching.sweep import available_bytes, extend_sweep, sweep
from measure.lab.compiled_decode import compiled_decoder, compiled_step_at, compiler_unavailable, static_cache
from measure.lab.context import Context
from measure.lab.generation import cache_storage_bytes, cache_tensors, crop_cache, decode_step, random_cache
from measure.lab.medians import Estimate, fraction_cells, ratio_cells
from measure.lab.sampling import Sweep, budget, interleaved
from measure.lab.step_counts import StepCounts, cache_storages, count_step, weight_storages


@dataclass(frozen=True)
class Steps:
    """One batch size's timings: the eager step, and the compiled one where it ran; what
    the eager step does, counted."""

    eager: Estimate
    compiled: Estimate | None
    counts: StepCounts


def measure_steps(cfg: Config, ctx: Context) -> tuple[dict[int, Steps | str], int, dict, dict]:
    """The decode step at every batch size, eager and compiled where the compiler runs,
    all in one interleaved sweep; then the sweep extended past its sizes while the knee is
    not established, each added batch its own interleaved sweep of its two points. Per
    batch its ``Steps`` or why it was not measured; the cache's bytes per token; the
    values that say how the sweep went; and the sweeps' notes."""
    model = ctx.model.model
    vocab = ctx.model.config.vocab_size
    per_token = {}
    reason = compiler_unavailable(ctx.device.type)
    if reason:
        ctx.log(f"  {reason}: the compiled step is not measured")
    decoder = None if reason else compiled_decoder(model, ctx.device)
    caches, counts, weights = {}, {}, weight_storages(model)

    def prepare(b: int) -> dict:
        """Batch ``b``'s points, each called once: a batch that does not fit runs out of
        memory here, before any sweep (``sweep`` records it), and the compiled step
        compiles here, not in a timed round."""
        cache = caches[b] = random_cache(model, batch=b, tokens=cfg.cache_tokens)
        per_token[b] = cache_storage_bytes(cache) // (b * cfg.cache_tokens)
        g = torch.Generator().manual_seed(b)
        token = torch.randint(0, vocab, (b, 1), generator=g).to(ctx.device)
        points = {("eager", b): partial(decode_step, model, token, cache)}
        counts[b] = count_step(points[("eager", b)], weights=weights, cache=cache_storages(cache_tensors(cache)))
        if decoder is not None:
            static = static_cache(model, batch=b, tokens=cfg.cache_tokens)
            points[("compiled", b)] = partial(compiled_step_at, decoder, token, static, cfg.cache_tokens)
        with torch.inference_mode():
            for key, fn in points.items():
                _before(key)
                fn()
        return points

    def _before(key) -> None:
        if key[0] == "eager":
            crop_cache(caches[key[1]], cfg.cache_tokens)  # the previous step grew it by one

    def sampled(points: dict, *, seed: int, budget_s: float) -> Sweep:
        return interleaved(points, device=ctx.device, seed=seed, budget_s=budget_s, target=cfg.target, before=_before)

    batches = sorted(set(cfg.batch_sizes) | set(range(1, cfg.slots + 1)))
    desc = f"decode step, eager and compiled, preparing {len(batches)} batches ({cfg.cache_tokens}-token caches)"
    if decoder is not None:
        ctx.log("  the compiled step compiles at B = 1 and again at B = 2 (then every larger B reuses it)")
    prepared = sweep(batches, prepare, progress=lambda items: ctx.progress(items, desc))
    points = {k: fn for p in prepared.values() if isinstance(p, dict) for k, fn in p.items()}
    ctx.log(f"  decode step at {len(points)} points interleaved (budget {cfg.decode_budget_s:g} s)")
    main = sampled(points, seed=cfg.decode_seed, budget_s=cfg.decode_budget_s)
    results = {b: _steps(main, b, counts[b]) if isinstance(p, dict) else p for b, p in prepared.items()}
    notes = {"decode_sweep": main.describe(), "extension_sweeps": {}}

    def measure_added(b: int) -> Steps:
        one = sampled(prepare(b), seed=cfg.extend_seed + b, budget_s=cfg.extend_point_budget_s)
        notes["extension_sweeps"][str(b)] = one.describe()
        return _steps(one, b, counts[b])

    bytes_per_token = per_token[min(per_token)]
    largest = max(cfg.batch_sizes)
    added, stop, spent = extend_sweep(
        results,
        cfg.batch_sizes,
        measure_added,
        seconds=lambda r: r.eager.median_s,
        last_cost_s=_cost_s(results.get(largest)),
        cap=cfg.extend_cap,
        confirmations=cfg.knee_confirmations,
        fits=lambda b: (
            estimated_bytes(ctx.model.config, b, cfg.cache_tokens, bytes_per_token)
            <= _HEADROOM * available_bytes(ctx.device)
        ),
        budget_s=budget(cfg.extend_budget_s),
    )
    ctx.log(f"  sweep extended by {added or 'nothing'} in {spent:.1f} s; stopped: {stop}")
    method = {
        "compiled_available": decoder is not None,
        "compiled_method": reason or decoder.method,
        "sweep_stop_reason": stop,
        "sweep_extended": bool(added),
        "sweep_extension_s": spent,
        "sweep_cap": cfg.extend_cap,
        "sweep_budget_s": cfg.extend_budget_s,
    }
    return results, bytes_per_token, method, notes


def _steps(sw: Sweep, b: int, counts: StepCounts) -> Steps:
    return Steps(sw.points[("eager", b)], sw.points.get(("compiled", b)), counts)


def _cost_s(r) -> float:
    """What measuring one batch alone would take: its samples and, per point, two more
    calls (the preparing call and the warm-up)."""
    if not isinstance(r, Steps):
        return 0.0
    ests = [e for e in (r.eager, r.compiled) if e is not None]
    return sum(sum(e.samples_s) + 2 * e.median_s for e in ests)


# Only part of the memory a system reports free is safe to fill: the estimate below
# leaves out the allocator's slack and the step's transient buffers.
_HEADROOM = 0.5


def estimated_bytes(config, batch: int, cache_tokens: int, bytes_per_token: int) -> int:
    """Memory a sweep point at ``batch`` needs beyond the weights: each request's cache
    twice (the eager step's cache, one position longer after a step, and the compiled
    step's static cache), and its activations, dominated by the logits and the MLP's
    intermediate vector (taken in fp32, the larger case)."""
    cache = 2 * (cache_tokens + 1) * bytes_per_token
    activations = 4 * (config.vocab_size + config.intermediate_size + 4 * config.hidden_size)
    return batch * (cache + activations)


def floor_columns(rows: list[dict], results: dict, *, floor_s) -> dict:
    """Adds the floor and the compiled step to the sweep's rows; their values.
    ``floor_s(b)`` is the floor at batch ``b`` in seconds, with its low and high bound
    (the calibration's bandwidth interval)."""
    measured = []
    for row in rows:
        r = results[row["batch"]]
        if not isinstance(r, Steps):
            row |= dict.fromkeys(("floor_ms", *_FRACTION_COLUMNS, *COMPILED_COLUMNS))
            continue
        floor = floor_s(row["batch"])
        c = r.compiled
        row |= {"floor_ms": floor[0] * 1e3, **fraction_cells("fraction_of_floor", floor, r.eager)}
        if c is None:
            row |= dict.fromkeys(COMPILED_COLUMNS)
        else:
            row |= {
                **c.columns("compiled_step_ms"),
                "compiled_throughput_tok_s": row["batch"] / c.median_s,
                **fraction_cells("compiled_fraction_of_floor", floor, c),
                **ratio_cells("compiled_speedup", r.eager, c),
            }
        measured.append(row)
    first, last = measured[0], measured[-1]
    speedups = [r["compiled_speedup"] for r in measured if r["compiled_speedup"] is not None]
    return {
        "fraction_smallest_batch": first["fraction_of_floor"],
        "fraction_largest_batch": last["fraction_of_floor"],
        "compiled_fraction_smallest_batch": first["compiled_fraction_of_floor"],
        "compiled_fraction_largest_batch": last["compiled_fraction_of_floor"],
        "compiled_speedup_best": max(speedups) if speedups else None,
        "compiled_speedup_worst": min(speedups) if speedups else None,
        "compiled_samples_ms": {
            str(b): r.compiled.samples_ms() for b, r in results.items() if isinstance(r, Steps) and r.compiled
        },
    }


_FRACTION_COLUMNS = ("fraction_of_floor", "fraction_of_floor_low", "fraction_of_floor_high")
_SPEEDUP = ("compiled_speedup", "compiled_speedup_low", "compiled_speedup_high")
COMPILED_COLUMNS = (
    "compiled_step_ms",
    "compiled_step_low_ms",
    "compiled_step_high_ms",
    "compiled_step_samples",
    "compiled_throughput_tok_s",
    "compiled_fraction_of_floor",
    "compiled_fraction_of_floor_low",
    "compiled_fraction_of_floor_high",
    *_SPEEDUP,
)
