"""§4's measurement: one decode step for B requests at every batch size, eager and
compiled, and the floor beside each (the weights plus the B caches over the bandwidth)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from measure.experiments.batching.config import Config
from measure.experiments.batching.sweep import available_bytes, extend_sweep, sweep
from measure.lab.compiled_decode import compiled_decoder, compiled_step_at, compiler_unavailable, static_cache
from measure.lab.context import Context
from measure.lab.generation import cache_storage_bytes, decode_step_at, random_cache
from measure.lab.timing import Timing, time_call


@dataclass(frozen=True)
class Steps:
    """One batch size's timings: the eager step, and the compiled one where it ran."""

    eager: Timing
    compiled: Timing | None


def measure_steps(cfg: Config, ctx: Context) -> tuple[dict[int, Steps | str], int, dict]:
    """The decode step at every batch size, eager and compiled where the compiler runs,
    the sweep extended past its sizes while the knee is not established: per batch its
    ``Steps`` or why it was not measured; the cache's bytes per token; and the values
    that say how the sweep went."""
    model = ctx.model.model
    vocab = ctx.model.config.vocab_size
    per_token = {}
    reason = compiler_unavailable(ctx.device.type)
    if reason:
        ctx.log(f"  {reason}: the compiled step is not measured")
    decoder = None if reason else compiled_decoder(model, ctx.device)

    def timing(step) -> Timing:
        return time_call(step, device=ctx.device, warmup=cfg.warmup, repeats=cfg.repeats)

    def measure(b: int) -> Steps:
        cache = random_cache(model, batch=b, tokens=cfg.cache_tokens)
        per_token[b] = cache_storage_bytes(cache) // (b * cfg.cache_tokens)
        g = torch.Generator().manual_seed(b)
        token = torch.randint(0, vocab, (b, 1), generator=g).to(ctx.device)
        eager = timing(lambda: decode_step_at(model, token, cache, cfg.cache_tokens))
        if decoder is None:
            return Steps(eager, None)
        static = static_cache(model, batch=b, tokens=cfg.cache_tokens)
        return Steps(eager, timing(lambda: compiled_step_at(decoder, token, static, cfg.cache_tokens)))

    cost_s = {}

    def clocked(b: int) -> Steps:
        t0 = time.perf_counter()
        out = measure(b)
        cost_s[b] = time.perf_counter() - t0
        return out

    batches = sorted(set(cfg.batch_sizes) | set(range(1, cfg.slots + 1)))
    desc = f"decode step, eager and compiled, batch sweep ({cfg.cache_tokens}-token caches)"
    if decoder is not None:
        ctx.log("  the compiled step compiles at B = 1 and again at B = 2 (then every larger B reuses it)")
    results = sweep(batches, clocked, progress=lambda items: ctx.progress(items, desc))
    bytes_per_token = per_token[min(per_token)]
    added, stop, spent = extend_sweep(
        results,
        cfg.batch_sizes,
        clocked,
        seconds=lambda r: r.eager.median_s,
        last_cost_s=cost_s.get(max(cfg.batch_sizes), 0.0),
        cap=cfg.extend_cap,
        confirmations=cfg.knee_confirmations,
        fits=lambda b: (
            estimated_bytes(ctx.model.config, b, cfg.cache_tokens, bytes_per_token)
            <= _HEADROOM * available_bytes(ctx.device)
        ),
        budget_s=cfg.extend_budget_s,
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
    return results, bytes_per_token, method


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


def floor_columns(rows: list[dict], results: dict, *, floor_ms) -> dict:
    """Adds the floor and the compiled step to the sweep's rows; their values."""
    measured = []
    for row in rows:
        r = results[row["batch"]]
        if not isinstance(r, Steps):
            row |= dict.fromkeys(("floor_ms", "fraction_of_floor", *_COMPILED_COLUMNS))
            continue
        floor = floor_ms(row["batch"])
        c = r.compiled
        row |= {
            "floor_ms": floor,
            "fraction_of_floor": floor / row["step_ms"],
            "compiled_step_ms": c.median_ms if c else None,
            "compiled_throughput_tok_s": row["batch"] / c.median_s if c else None,
            "compiled_fraction_of_floor": floor / c.median_ms if c else None,
            "compiled_speedup": row["step_ms"] / c.median_ms if c else None,
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


_COMPILED_COLUMNS = ("compiled_step_ms", "compiled_throughput_tok_s", "compiled_fraction_of_floor", "compiled_speedup")
