"""§2 Two phases: prefill and decode.

Measures, on the run's model:

* ``split``: one cached generation (a prompt of book text, then one token per step),
  the prefill and the decode steps timed apart: cost per prompt token, per generated
  token, and their ratio.
* ``prefill``: one prefill at prompt length P: time (= time to first token), ms per
  prompt token, prompt tokens per second.
* ``bandwidth``: the device's memory bandwidth, from a large copy (measure/bandwidth.py).
* ``decode``: one decode step against a cache of C positions: step time, tokens per
  second (= 1 / step), and the step's floor, the model's weight bytes over the measured
  bandwidth, with the fraction of it achieved (and the floor with the cache's bytes
  added, which is what the step must read in full).

Writes ``site_data/prefill_decode/``. Alone: ``python -m measure run --only prefill_decode``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from measure.bandwidth import copy_bandwidth, weight_bytes
from measure.context import Context
from measure.generation import cache_storage_bytes, decode_step, decode_step_at, prefill, random_cache
from measure.schema import Column, Result, Table, Value
from measure.timing import Timing, time_call, timed

TITLE = "Two phases: prefill and decode"
FLAT_UP_TO = 1024  # spec §2.3: the source saw no change in step cost from C = 16 to 1,024


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


def _split(cfg: Config, ctx: Context) -> tuple[Table, list[Value]]:
    """A cached generation with a clock around the prefill and around each decode step."""
    model = ctx.model.model
    ids = ctx.prompt_ids(cfg.split_prompt_tokens)
    steps = cfg.split_new_tokens - 1

    def once() -> tuple[float, list[float]]:
        (token, cache), t_prefill = timed(lambda: prefill(model, ids), device=ctx.device)
        per_step = []
        for _ in range(steps):
            (token, cache), seconds = timed(lambda: decode_step(model, token, cache), device=ctx.device)
            per_step.append(seconds)
        return t_prefill, per_step

    ctx.log(f"  prefill {cfg.split_prompt_tokens} tokens, then {steps} decode steps ({cfg.split_repeats} runs)")
    with torch.inference_mode():
        once()  # warm-up, discarded
        runs = [once() for _ in range(cfg.split_repeats)]
    t_pre = Timing(tuple(r[0] for r in runs))
    t_dec = Timing(tuple(sum(r[1]) for r in runs))
    pre_tok = t_pre.median_ms / cfg.split_prompt_tokens
    dec_tok = t_dec.median_ms / steps
    cols = (
        Column(name="phase", label="phase"),
        Column(name="tokens", unit="tokens", label="tokens"),
        Column(name="total_ms", unit="ms", kind="timing", label="time"),
        Column(name="spread_ms", unit="ms", kind="timing", label="spread (IQR)"),
        Column(name="ms_per_token", unit="ms", kind="timing", label="per token"),
        Column(name="cost_vs_prompt_token", unit="x", kind="timing", label="per token, vs a prompt token"),
    )
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
    values = [
        Value(name="split_prompt_tokens", value=cfg.split_prompt_tokens, unit="tokens"),
        Value(name="split_decode_steps", value=steps, unit="steps"),
        Value(name="split_prefill_ms", value=t_pre.median_ms, unit="ms", kind="timing"),
        Value(name="split_prefill_ms_per_token", value=pre_tok, unit="ms", kind="timing"),
        Value(name="split_decode_ms_per_token", value=dec_tok, unit="ms", kind="timing"),
        Value(
            name="split_ratio",
            value=dec_tok / pre_tok,
            unit="x",
            kind="timing",
            description="a generated token costs this many prompt tokens",
        ),
        Value(
            name="split_step_min_ms", value=min(all_steps) * 1e3, unit="ms", kind="timing", description="fastest step"
        ),
        Value(
            name="split_step_max_ms", value=max(all_steps) * 1e3, unit="ms", kind="timing", description="slowest step"
        ),
        Value(name="split_prefill_samples_ms", value=t_pre.samples_ms(), unit="ms", kind="timing"),
        Value(name="split_decode_samples_ms", value=t_dec.samples_ms(), unit="ms", kind="timing"),
    ]
    return Table(name="split", title="One generation, prefill and decode timed apart", columns=cols, rows=rows), values


def _prefill_sweep(cfg: Config, ctx: Context) -> tuple[Table, list[Value]]:
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
    cols = (
        Column(name="prompt_tokens", unit="tokens", label="prompt P"),
        Column(name="time_ms", unit="ms", kind="timing", label="prefill = time to first token"),
        Column(name="spread_ms", unit="ms", kind="timing", label="spread (IQR)"),
        Column(name="ms_per_token", unit="ms", kind="timing", label="per prompt token"),
        Column(name="tokens_per_s", unit="tokens/s", kind="timing", label="prompt tokens/s"),
    )
    first, last = rows[0], rows[-1]
    values = [
        Value(name="ttft_smallest_ms", value=first["time_ms"], unit="ms", kind="timing"),
        Value(name="ttft_largest_ms", value=last["time_ms"], unit="ms", kind="timing"),
        Value(name="prompt_smallest", value=first["prompt_tokens"], unit="tokens"),
        Value(name="prompt_largest", value=last["prompt_tokens"], unit="tokens"),
        Value(
            name="ttft_growth",
            value=last["time_ms"] / first["time_ms"],
            unit="x",
            kind="timing",
            description="time to first token at the longest prompt / at the shortest",
        ),
        Value(name="prefill_samples_ms", value=samples, unit="ms", kind="timing"),
    ]
    return Table(name="prefill", title="Prefill against prompt length", columns=cols, rows=rows), values


def _bandwidth(cfg: Config, ctx: Context) -> tuple[Table, float, list[Value]]:
    ctx.log(f"  memory bandwidth: copying {cfg.copy_bytes / 2**20:.0f} MiB, {cfg.copy_repeats} times")
    bw = copy_bandwidth(copy_bytes=cfg.copy_bytes, device=ctx.device, repeats=cfg.copy_repeats)
    cols = (
        Column(name="copy_bytes", unit="bytes", label="buffer copied"),
        Column(name="moved_bytes", unit="bytes", label="bytes moved (read + write)"),
        Column(name="time_ms", unit="ms", kind="timing", label="copy time"),
        Column(name="spread_ms", unit="ms", kind="timing", label="spread (IQR)"),
        Column(name="bandwidth_gb_s", unit="GB/s", kind="timing", label="bandwidth (10⁹ bytes/s)"),
    )
    row = {
        "copy_bytes": bw.copy_bytes,
        "moved_bytes": bw.moved_bytes,
        "time_ms": bw.timing.median_ms,
        "spread_ms": bw.timing.spread_ms,
        "bandwidth_gb_s": bw.bytes_per_s / 1e9,
    }
    values = [
        Value(name="bandwidth_gb_s", value=bw.bytes_per_s / 1e9, unit="GB/s", kind="timing"),
        Value(name="bandwidth_samples_ms", value=bw.timing.samples_ms(), unit="ms", kind="timing"),
    ]
    table = Table(name="bandwidth", title="Memory bandwidth, from one large copy", columns=cols, rows=[row])
    return table, bw.bytes_per_s, values


def _decode_sweep(cfg: Config, ctx: Context, bytes_per_s: float) -> tuple[Table, list[Value]]:
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
    cols = (
        Column(name="cache_tokens", unit="tokens", label="cache C"),
        Column(name="step_ms", unit="ms", kind="timing", label="decode step"),
        Column(name="spread_ms", unit="ms", kind="timing", label="spread (IQR)"),
        Column(name="tokens_per_s", unit="tokens/s", kind="timing", label="tokens/s (1 / step)"),
        Column(name="cache_bytes", unit="bytes", label="cache size"),
        Column(name="floor_ms", unit="ms", kind="timing", label="floor: weights / bandwidth"),
        Column(name="fraction_of_floor", unit="fraction", kind="timing", label="floor / step"),
        Column(name="floor_with_cache_ms", unit="ms", kind="timing", label="floor with the cache"),
    )
    first, last = rows[0], rows[-1]
    flat = [r["step_ms"] for r in rows if r["cache_tokens"] <= FLAT_UP_TO]
    values = [
        Value(name="weight_bytes", value=weights, unit="bytes", description="bytes of the model's parameters"),
        Value(name="floor_ms", value=floor_ms, unit="ms", kind="timing", description="weight bytes / bandwidth"),
        Value(name="cache_smallest", value=first["cache_tokens"], unit="tokens"),
        Value(name="cache_largest", value=last["cache_tokens"], unit="tokens"),
        Value(name="step_smallest_ms", value=first["step_ms"], unit="ms", kind="timing"),
        Value(name="step_largest_ms", value=last["step_ms"], unit="ms", kind="timing"),
        Value(name="tok_s_smallest", value=first["tokens_per_s"], unit="tokens/s", kind="timing"),
        Value(name="tok_s_largest", value=last["tokens_per_s"], unit="tokens/s", kind="timing"),
        Value(name="fraction_smallest", value=first["fraction_of_floor"], unit="fraction", kind="timing"),
        Value(name="fraction_largest", value=last["fraction_of_floor"], unit="fraction", kind="timing"),
        Value(name="flat_up_to", value=FLAT_UP_TO, unit="tokens"),
        Value(
            name="flat_spread",
            value=max(flat) / min(flat),
            unit="x",
            kind="timing",
            description=f"slowest / fastest decode step for C up to {FLAT_UP_TO}",
        ),
        Value(
            name="step_growth",
            value=last["step_ms"] / first["step_ms"],
            unit="x",
            kind="timing",
            description="decode step at the largest cache / at the smallest",
        ),
        Value(name="decode_samples_ms", value=samples, unit="ms", kind="timing"),
    ]
    return Table(name="decode", title="One decode step against cache length", columns=cols, rows=rows), values


def run(cfg: Config, ctx: Context) -> Result:
    split, v1 = _split(cfg, ctx)
    pre, v2 = _prefill_sweep(cfg, ctx)
    bw, bytes_per_s, v3 = _bandwidth(cfg, ctx)
    dec, v4 = _decode_sweep(cfg, ctx, bytes_per_s)
    return Result(tables=[split, pre, bw, dec], values=v1 + v2 + v3 + v4)
