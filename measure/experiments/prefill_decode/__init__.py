"""§2 Two phases: prefill and decode.

Measures, on the run's model:

* ``split``: one cached generation (a prompt of book text, then one token per step),
  the prefill and the decode steps timed apart: cost per prompt token, per generated
  token, and their ratio.
* ``prefill``: one prefill at prompt length P: time (= time to first token), ms per
  prompt token, prompt tokens per second.
* ``bandwidth``: the device's memory bandwidth, from a large copy (measure/lab/bandwidth.py).
* ``decode``: one decode step against a cache of C positions: step time, tokens per
  second (= 1 / step), and the step's floor, the model's weight bytes over the measured
  bandwidth, with the fraction of it achieved (and the floor with the cache's bytes
  added, which is what the step must read in full). Beside it, the same step compiled
  (measure/lab/compiled_decode.py: a static cache and torch.compile, with CUDA graphs on
  a GPU) at every C, against the same floor.

The package: ``tables`` declares what is written, ``split`` is the split's clocked
generation, and the rest is here.

Writes ``site_data/prefill_decode/``. Alone: ``python -m measure run --only prefill_decode``.
"""

from __future__ import annotations

from dataclasses import dataclass

from measure.experiments.prefill_decode.split import split_runs
from measure.experiments.prefill_decode.tables import FLAT_UP_TO, TABLES, VALUES
from measure.lab.bandwidth import copy_bandwidth, weight_bytes
from measure.lab.compiled_decode import compiled_decoder, compiled_step_at, compiler_unavailable, static_cache
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import cache_storage_bytes, decode_step_at, prefill, random_cache
from measure.lab.timing import Timing, time_call, timed
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "Two phases: prefill and decode"


@dataclass(frozen=True, kw_only=True)
class Config:
    split_prompt_tokens: int = 40  # spec §2.1: the source's run had 40 prompt tokens
    split_new_tokens: int = 48  # and generated 48 (47 decode steps after the prefill)
    split_repeats: int = 5
    prompt_lengths: tuple[int, ...] = (16, 64, 256, 1024, 2048)  # spec §2.2
    prefill_repeats: int = 7
    cache_lengths: tuple[int, ...] = (16, 64, 256, 1024, 4096)  # spec §2.3
    decode_repeats: int = 15
    copy_bytes: int = 2**30  # 1 GiB: far beyond any GPU's L2 cache
    copy_repeats: int = 10
    copies_per_sample: int = 4  # several copies per clock reading, so its overhead is spread thin

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # Same sweeps; fewer repeats keep §2 near a minute on two cores. 512 MiB is
            # the size of the default model's fp32 weights, and beyond any CPU cache.
            return cls(split_repeats=3, prefill_repeats=3, decode_repeats=7, copy_bytes=2**29, copy_repeats=7)
        return cls(
            split_prompt_tokens=6,
            split_new_tokens=4,
            split_repeats=2,
            prompt_lengths=(4, 16),
            prefill_repeats=2,
            cache_lengths=(4, 16),
            decode_repeats=2,
            copy_bytes=2**22,
            copy_repeats=3,
        )


def _split(cfg: Config, ctx: Context) -> tuple[list[dict], dict]:
    """A cached generation with a clock around the prefill and around each decode step."""
    model = ctx.model.model
    ids = ctx.prompt_ids(cfg.split_prompt_tokens)
    steps = cfg.split_new_tokens - 1
    ctx.log(f"  prefill {cfg.split_prompt_tokens} tokens, then {steps} decode steps ({cfg.split_repeats} runs)")
    runs = split_runs(model, ids, steps=steps, repeats=cfg.split_repeats, device=ctx.device)
    t_pre = Timing(tuple(r[0] for r in runs))
    t_dec = Timing(tuple(sum(r[1]) for r in runs))
    pre_tok = t_pre.median_ms / cfg.split_prompt_tokens
    dec_tok = t_dec.median_ms / steps
    rows = [
        {
            "phase": "prefill (prompt tokens, one pass)",
            "tokens": cfg.split_prompt_tokens,
            "total_ms": t_pre.median_ms,
            "spread_ms": t_pre.spread_ms,
            "ms_per_token": pre_tok,
            "cost_vs_prompt_token": 1.0,
        },
        {
            "phase": "decode (one token per step)",
            "tokens": steps,
            "total_ms": t_dec.median_ms,
            "spread_ms": t_dec.spread_ms,
            "ms_per_token": dec_tok,
            "cost_vs_prompt_token": dec_tok / pre_tok,
        },
    ]
    all_steps = [s for r in runs for s in r[1]]
    values = {
        "split_prompt_tokens": cfg.split_prompt_tokens,
        "split_decode_steps": steps,
        "split_prefill_ms": t_pre.median_ms,
        "split_prefill_ms_per_token": pre_tok,
        "split_decode_ms_per_token": dec_tok,
        "split_ratio": dec_tok / pre_tok,
        "split_step_min_ms": min(all_steps) * 1e3,
        "split_step_max_ms": max(all_steps) * 1e3,
        "split_prefill_samples_ms": t_pre.samples_ms(),
        "split_decode_samples_ms": t_dec.samples_ms(),
    }
    return rows, values


def _prefill_sweep(cfg: Config, ctx: Context) -> tuple[list[dict], dict]:
    model = ctx.model.model
    rows, samples = [], {}
    for p in ctx.progress(cfg.prompt_lengths, "prefill, prompt length sweep"):
        ids = ctx.prompt_ids(p)
        t = time_call(lambda: prefill(model, ids), device=ctx.device, warmup=1, repeats=cfg.prefill_repeats)
        samples[str(p)] = t.samples_ms()
        rows.append(
            {
                "prompt_tokens": p,
                "time_ms": t.median_ms,
                "spread_ms": t.spread_ms,
                "ms_per_token": t.median_ms / p,
                "tokens_per_s": p / t.median_s,
            }
        )
    first, last = rows[0], rows[-1]
    values = {
        "ttft_smallest_ms": first["time_ms"],
        "ttft_largest_ms": last["time_ms"],
        "prompt_smallest": first["prompt_tokens"],
        "prompt_largest": last["prompt_tokens"],
        "ttft_growth": last["time_ms"] / first["time_ms"],
        "prefill_samples_ms": samples,
    }
    return rows, values


def _bandwidth(cfg: Config, ctx: Context) -> tuple[list[dict], float, dict]:
    copies = f"{cfg.copy_repeats} samples of {cfg.copies_per_sample} copies"
    ctx.log(f"  memory bandwidth: {copies} of {cfg.copy_bytes >> 20} MiB")
    bw = copy_bandwidth(
        copy_bytes=cfg.copy_bytes, device=ctx.device, repeats=cfg.copy_repeats, copies_per_sample=cfg.copies_per_sample
    )
    values = {"bandwidth_gb_s": bw.bytes_per_s / 1e9, "bandwidth_samples_ms": bw.timing.samples_ms()}
    return [bw.row()], bw.bytes_per_s, values


def _compiled_steps(cfg: Config, ctx: Context, token) -> tuple[dict[int, Timing], dict]:
    """The compiled step at every C (empty where the compiler cannot run here), and the
    time spent compiling: what each context's first call took beyond a timed step (the
    first context compiles, and the second compiles again with its length made dynamic)."""
    model = ctx.model.model
    reason = compiler_unavailable(ctx.device.type)
    if reason:
        ctx.log(f"  {reason}: the compiled step is not measured")
        return {}, {"compiled_available": False, "compiled_method": reason, "compile_s": None}
    decoder = compiled_decoder(model, ctx.device)
    out, compiling = {}, 0.0
    ctx.log("  compiling the decode step: about a minute on two CPU cores, once per run")
    for c in ctx.progress(cfg.cache_lengths, "compiled decode step, cache length sweep"):
        cache = static_cache(model, batch=1, tokens=c)
        _, first = timed(lambda: compiled_step_at(decoder, token, cache, c), device=ctx.device)
        out[c] = time_call(
            lambda: compiled_step_at(decoder, token, cache, c), device=ctx.device, warmup=1, repeats=cfg.decode_repeats
        )
        compiling += max(0.0, first - out[c].median_s)
    return out, {"compiled_available": True, "compiled_method": decoder.method, "compile_s": compiling}


def _decode_sweep(cfg: Config, ctx: Context, bytes_per_s: float) -> tuple[list[dict], dict]:
    model = ctx.model.model
    weights = weight_bytes(model)
    floor_ms = weights / bytes_per_s * 1e3
    token = ctx.prompt_ids(1)
    rows, samples = [], {}
    for c in ctx.progress(cfg.cache_lengths, "decode, cache length sweep"):
        cache = random_cache(model, batch=1, tokens=c)
        kv = cache_storage_bytes(cache)
        t = time_call(
            lambda: decode_step_at(model, token, cache, c), device=ctx.device, warmup=2, repeats=cfg.decode_repeats
        )
        samples[str(c)] = t.samples_ms()
        with_cache = (weights + kv) / bytes_per_s * 1e3
        rows.append(
            {
                "cache_tokens": c,
                "step_ms": t.median_ms,
                "spread_ms": t.spread_ms,
                "tokens_per_s": 1.0 / t.median_s,
                "cache_bytes": kv,
                "floor_ms": floor_ms,
                "fraction_of_floor": floor_ms / t.median_ms,
                "floor_with_cache_ms": with_cache,
            }
        )
    compiled, v_compiled = _compiled_steps(cfg, ctx, token)
    for row in rows:
        t = compiled.get(row["cache_tokens"])
        row |= {
            "compiled_ms": t.median_ms if t else None,
            "compiled_spread_ms": t.spread_ms if t else None,
            "compiled_fraction_of_floor": floor_ms / t.median_ms if t else None,
            "compiled_speedup": row["step_ms"] / t.median_ms if t else None,
        }
    first, last = rows[0], rows[-1]
    flat = [r["step_ms"] for r in rows if r["cache_tokens"] <= FLAT_UP_TO]
    speedups = [r["compiled_speedup"] for r in rows if compiled]
    values = {
        "weight_bytes": weights,
        "floor_ms": floor_ms,
        "cache_smallest": first["cache_tokens"],
        "cache_largest": last["cache_tokens"],
        "step_smallest_ms": first["step_ms"],
        "step_largest_ms": last["step_ms"],
        "tok_s_smallest": first["tokens_per_s"],
        "tok_s_largest": last["tokens_per_s"],
        "fraction_smallest": first["fraction_of_floor"],
        "fraction_largest": last["fraction_of_floor"],
        "flat_up_to": FLAT_UP_TO,
        "flat_spread": max(flat) / min(flat),
        "step_growth": last["step_ms"] / first["step_ms"],
        "decode_samples_ms": samples,
        **v_compiled,
        "compiled_fraction_smallest": first["compiled_fraction_of_floor"],
        "compiled_fraction_largest": last["compiled_fraction_of_floor"],
        "compiled_speedup_smallest": first["compiled_speedup"],
        "compiled_speedup_largest": last["compiled_speedup"],
        "compiled_speedup_best": max(speedups) if speedups else None,
        "compiled_speedup_worst": min(speedups) if speedups else None,
        "compiled_worst_cache": min(rows, key=lambda r: r["compiled_speedup"])["cache_tokens"] if speedups else None,
        "compiled_samples_ms": {str(c): t.samples_ms() for c, t in compiled.items()},
    }
    return rows, values


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run, for the estimate printed before it starts."""
    runs = cfg.split_repeats + 1  # and one warm-up
    split = ForwardPasses(cfg.split_prompt_tokens * runs, (cfg.split_new_tokens - 1) * runs)
    prefills = ForwardPasses(prefill_tokens=sum(cfg.prompt_lengths) * (cfg.prefill_repeats + 1))
    # Eager and compiled, each warmed up twice, at every C; compiled at the first C, then again
    # when the length becomes dynamic.
    steps = ForwardPasses(decode_steps=2 * len(cfg.cache_lengths) * (cfg.decode_repeats + 2), compiles=2)
    return split + prefills + steps


def run(cfg: Config, ctx: Context) -> Result:
    split, v1 = _split(cfg, ctx)
    pre, v2 = _prefill_sweep(cfg, ctx)
    bw, bytes_per_s, v3 = _bandwidth(cfg, ctx)
    dec, v4 = _decode_sweep(cfg, ctx, bytes_per_s)
    return Result(
        tables={"split": split, "prefill": pre, "bandwidth": bw, "decode": dec}, values={**v1, **v2, **v3, **v4}
    )
