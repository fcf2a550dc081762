"""§1 The KV cache: exact, and the biggest single saving.

Measures, on the run's model:

* ``identical_output``: greedy generation recomputing everything each step vs with the
  cache; the token ids must be identical; wall time, time per token, speed ratio.
* ``generated_tokens``: the two token streams side by side (the proof, shown).
* ``head_step``: one attention head (d = 64), one generation step at context n, both
  ways: time and the bytes of the score matrix actually built.
* ``macs_total`` / ``macs_per_step``: multiply-accumulates, counted, for the model (its
  weight MACs per token counted by hooks on every Linear layer) and for the lone head.
* ``memory``: peak memory above the resident weights while generating, with and
  without the cache (method in meta.json: CUDA allocator or Linux peak RSS).

Writes ``site_data/kv_cache/``. Alone: ``python -m measure run --only kv_cache``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure.context import Context
from measure.formulas import generation_macs, step_macs
from measure.generation import greedy_cached, greedy_recompute
from measure.memory import measure_peak
from measure.schema import Column, Result, Table, Value
from measure.timing import time_call

TITLE = "The KV cache: exact, and the biggest single saving"
PROMPT = "Why is the sky blue? Answer in two sentences."


@dataclass(frozen=True, kw_only=True)
class Config:
    new_tokens: int = 48  # spec §1.1
    generation_repeats: int = 3
    head_dim: int = 64  # spec §1.2
    head_contexts: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192)
    head_repeats: int = 7
    mac_totals: tuple[int, ...] = (64, 256, 1024, 4096)  # spec §1.3
    mac_step_contexts: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096)
    memory_tokens: int = 256  # spec §1.4

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # Recompute costs O(n^2) forwards on two cores: fewer repeats and a shorter
            # memory run keep §1 near a minute without changing what is shown.
            return cls(generation_repeats=2, memory_tokens=96)
        return cls(
            new_tokens=6,
            generation_repeats=1,
            head_contexts=(16, 32),
            head_repeats=2,
            mac_totals=(4, 16),
            mac_step_contexts=(1, 8),
            memory_tokens=6,
        )


def _prompt(ctx: Context) -> torch.Tensor:
    tok = ctx.model.tokenizer
    if tok is None:
        return ctx.prompt_ids(41)  # the chat prompt's length under SmolLM2's template
    enc = tok.apply_chat_template(
        [{"role": "user", "content": PROMPT}], add_generation_prompt=True, return_tensors="pt"
    )
    return enc["input_ids"].to(ctx.device)


def _identical_output(cfg: Config, ctx: Context, ids: torch.Tensor) -> tuple[Table, Table, list[Value]]:
    model = ctx.model.model
    outputs = {}

    def runner(name, fn):
        def go():
            outputs[name] = fn(model, ids, cfg.new_tokens)

        return go

    ctx.log(f"  generating {cfg.new_tokens} tokens by recomputing every step ({cfg.generation_repeats} repeats)")
    t_re = time_call(runner("recompute", greedy_recompute), device=ctx.device, warmup=0, repeats=cfg.generation_repeats)
    ctx.log(f"  generating {cfg.new_tokens} tokens with the cache")
    t_ca = time_call(
        runner("cached", greedy_cached), device=ctx.device, warmup=1, repeats=max(3, cfg.generation_repeats)
    )
    a, b = outputs["recompute"][0].tolist(), outputs["cached"][0].tolist()
    identical = a == b
    mismatch = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), -1)
    speedup = t_re.median_s / t_ca.median_s
    cols = (
        Column(name="method", label="method"),
        Column(name="new_tokens", unit="tokens", label="new tokens"),
        Column(name="total_ms", unit="ms", kind="timing", label="wall time"),
        Column(name="spread_ms", unit="ms", kind="timing", label="spread (IQR)"),
        Column(name="ms_per_token", unit="ms", kind="timing", label="per token"),
        Column(name="speed_ratio", unit="x", kind="timing", label="speed vs recompute"),
        Column(name="repeats", unit="runs", label="repeats"),
        Column(name="tokens_identical", label="same tokens as recompute"),
    )
    rows = [
        {
            "method": "recompute",
            "new_tokens": cfg.new_tokens,
            "total_ms": t_re.median_ms,
            "spread_ms": t_re.spread_ms,
            "ms_per_token": t_re.median_ms / cfg.new_tokens,
            "speed_ratio": 1.0,
            "repeats": len(t_re.samples_s),
            "tokens_identical": True,
        },
        {
            "method": "cached",
            "new_tokens": cfg.new_tokens,
            "total_ms": t_ca.median_ms,
            "spread_ms": t_ca.spread_ms,
            "ms_per_token": t_ca.median_ms / cfg.new_tokens,
            "speed_ratio": speedup,
            "repeats": len(t_ca.samples_s),
            "tokens_identical": identical,
        },
    ]
    table = Table(name="identical_output", title="Greedy generation, recomputing vs cached", columns=cols, rows=rows)
    tok = ctx.model.tokenizer
    decode = (lambda i: tok.decode([i])) if tok is not None else (lambda i: f"<{i}>")
    tokens = Table(
        name="generated_tokens",
        title="The two token streams, position by position",
        columns=(
            Column(name="position", unit="", label="position"),
            Column(name="recompute_id", label="recompute: id", kind="numeric"),
            Column(name="cached_id", label="cached: id", kind="numeric"),
            Column(name="text", label="token text", kind="numeric"),
            Column(name="same", label="same"),
        ),
        rows=[
            {"position": i, "recompute_id": x, "cached_id": y, "text": decode(x), "same": x == y}
            for i, (x, y) in enumerate(zip(a, b, strict=False))
        ],
    )
    text = tok.decode(b) if tok is not None else " ".join(map(str, b))
    values = [
        Value(
            name="speedup",
            value=speedup,
            unit="x",
            kind="timing",
            description="cached generation is this many times faster than recomputing",
        ),
        Value(name="tokens_identical", value=identical, description="the two token streams are equal"),
        Value(name="first_mismatch", value=mismatch, description="first differing position, -1 if none"),
        Value(name="prompt_tokens", value=int(ids.shape[1]), unit="tokens"),
        Value(name="new_tokens", value=cfg.new_tokens, unit="tokens"),
        Value(name="prompt", value=PROMPT if tok is not None else "(random token ids)"),
        Value(name="generated_text", value=text, kind="numeric", description="the cached run's output, decoded"),
        Value(name="recompute_samples_ms", value=t_re.samples_ms(), unit="ms", kind="timing"),
        Value(name="cached_samples_ms", value=t_ca.samples_ms(), unit="ms", kind="timing"),
    ]
    return table, tokens, values


def _head_step(cfg: Config, ctx: Context) -> tuple[Table, list[Value]]:
    """One head, plain tensor ops (no fused kernel), so the score matrix really exists."""
    d = cfg.head_dim
    g = torch.Generator().manual_seed(0)
    rows = []
    for n in ctx.progress(cfg.head_contexts, "one head, context sweep"):
        q, k, v = (torch.randn(n, d, generator=g, dtype=torch.float32).to(ctx.device) for _ in range(3))
        mask = torch.full((n, n), float("-inf"), device=ctx.device).triu(1)
        built = {}

        def recompute():
            scores = (q @ k.T) / math.sqrt(d) + mask  # every query against every key
            built["recompute"] = scores.numel() * scores.element_size()
            return torch.softmax(scores, dim=-1) @ v

        def cached():
            scores = (q[-1:] @ k.T) / math.sqrt(d)  # the newest query against the cached keys
            built["cached"] = scores.numel() * scores.element_size()
            return torch.softmax(scores, dim=-1) @ v

        t_re = time_call(recompute, device=ctx.device, warmup=1, repeats=cfg.head_repeats)
        t_ca = time_call(cached, device=ctx.device, warmup=1, repeats=cfg.head_repeats)
        rows.append(
            {
                "context": n,
                "recompute_ms": t_re.median_ms,
                "recompute_spread_ms": t_re.spread_ms,
                "cached_ms": t_ca.median_ms,
                "cached_spread_ms": t_ca.spread_ms,
                "speed_ratio": t_re.median_s / t_ca.median_s,
                "recompute_scores_bytes": built["recompute"],
                "cached_scores_bytes": built["cached"],
            }
        )
    cols = (
        Column(name="context", unit="tokens", label="context n"),
        Column(name="recompute_ms", unit="ms", kind="timing", label="recompute step"),
        Column(name="recompute_spread_ms", unit="ms", kind="timing", label="spread"),
        Column(name="cached_ms", unit="ms", kind="timing", label="cached step"),
        Column(name="cached_spread_ms", unit="ms", kind="timing", label="spread"),
        Column(name="speed_ratio", unit="x", kind="timing", label="ratio"),
        Column(name="recompute_scores_bytes", unit="bytes", label="scores built, recompute"),
        Column(name="cached_scores_bytes", unit="bytes", label="scores built, cached"),
    )
    last = rows[-1]
    values = [
        Value(name="head_dim", value=d),
        Value(name="head_largest_context", value=last["context"], unit="tokens"),
        Value(name="head_scores_bytes_recompute", value=last["recompute_scores_bytes"], unit="bytes"),
        Value(name="head_scores_bytes_cached", value=last["cached_scores_bytes"], unit="bytes"),
        Value(name="head_ratio_at_largest", value=last["speed_ratio"], unit="x", kind="timing"),
    ]
    return Table(name="head_step", title=f"One attention head (d = {d}), one step", columns=cols, rows=rows), values


def count_weight_macs_per_token(model, ctx: Context, tokens: int = 8) -> int:
    """Count multiply-accumulates of every Linear layer in a real forward pass (hooks see
    the actual input shapes), per input token. Embedding lookups are not MACs."""
    total = 0

    def hook(module, inputs, _output):
        nonlocal total
        x = inputs[0]
        total += (x.numel() // x.shape[-1]) * module.in_features * module.out_features

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    try:
        with torch.inference_mode():
            model(input_ids=ctx.prompt_ids(tokens), use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return total // tokens


def _macs(cfg: Config, ctx: Context) -> tuple[Table, Table, list[Value]]:
    shape = ctx.model.shape()
    w = count_weight_macs_per_token(ctx.model.model, ctx)
    dims = {"layers": shape["layers"], "heads": shape["heads"], "head_dim": shape["head_dim"]}
    head = {"layers": 1, "heads": 1, "head_dim": cfg.head_dim}
    rows = []
    for who, wmacs, dd in (("model", w, dims), ("one head", 0, head)):
        for t in cfg.mac_totals:
            unc = generation_macs(weight_macs_per_token=wmacs, new_tokens=t, cached=False, **dd)
            cac = generation_macs(weight_macs_per_token=wmacs, new_tokens=t, cached=True, **dd)
            rows.append({"scope": who, "new_tokens": t, "recompute_macs": unc, "cached_macs": cac, "ratio": unc / cac})
    total = Table(
        name="macs_total",
        title="Multiply-accumulates to generate T tokens from a one-token start",
        columns=(
            Column(name="scope", label="what"),
            Column(name="new_tokens", unit="tokens", label="T"),
            Column(name="recompute_macs", unit="MAC", label="recompute"),
            Column(name="cached_macs", unit="MAC", label="cached"),
            Column(name="ratio", unit="x", kind="numeric", label="ratio"),
        ),
        rows=rows,
    )
    per_step = Table(
        name="macs_per_step",
        title="Multiply-accumulates of one step at context n (model)",
        columns=(
            Column(name="context", unit="tokens", label="context n"),
            Column(name="recompute_macs", unit="MAC", label="recompute step"),
            Column(name="cached_macs", unit="MAC", label="cached step"),
        ),
        rows=[
            {
                "context": n,
                "recompute_macs": step_macs(weight_macs_per_token=w, context=n, cached=False, **dims),
                "cached_macs": step_macs(weight_macs_per_token=w, context=n, cached=True, **dims),
            }
            for n in cfg.mac_step_contexts
        ],
    )
    values = [
        Value(
            name="weight_macs_per_token",
            value=w,
            unit="MAC",
            description="counted by hooks on every Linear layer during a real forward pass",
        ),
        Value(name="macs_ratio_largest", value=rows[len(cfg.mac_totals) - 1]["ratio"], unit="x", kind="numeric"),
    ]
    return total, per_step, values


def _memory(cfg: Config, ctx: Context, ids: torch.Tensor) -> tuple[Table, list[Value]]:
    model = ctx.model.model
    rows = []
    for method, fn in (("recompute", greedy_recompute), ("cached", greedy_cached)):
        ctx.log(f"  peak memory while generating {cfg.memory_tokens} tokens, {method}")
        peak = measure_peak(lambda: fn(model, ids, cfg.memory_tokens), device=ctx.device)
        rows.append(
            {
                "method": method,
                "new_tokens": cfg.memory_tokens,
                "baseline_bytes": peak.baseline_bytes,
                "peak_bytes": peak.peak_bytes,
                "above_baseline_bytes": peak.above_baseline_bytes,
            }
        )
    ratio = rows[0]["above_baseline_bytes"] / max(1, rows[1]["above_baseline_bytes"])
    for r in rows:
        r["relative_to_cached"] = r["above_baseline_bytes"] / max(1, rows[1]["above_baseline_bytes"])
    cols = (
        Column(name="method", label="method"),
        Column(name="new_tokens", unit="tokens", label="new tokens"),
        Column(name="baseline_bytes", unit="bytes", kind="timing", label="in use before (weights)"),
        Column(name="peak_bytes", unit="bytes", kind="timing", label="peak"),
        Column(name="above_baseline_bytes", unit="bytes", kind="timing", label="peak above weights"),
        Column(name="relative_to_cached", unit="x", kind="timing", label="relative to cached"),
    )
    return (
        Table(name="memory", title="Peak memory while generating, above the resident weights", columns=cols, rows=rows),
        [
            Value(
                name="memory_ratio",
                value=ratio,
                unit="x",
                kind="timing",
                description="recompute's peak above weights / cached's",
            )
        ],
    )


def run(cfg: Config, ctx: Context) -> Result:
    ids = _prompt(ctx)
    identical, tokens, v1 = _identical_output(cfg, ctx, ids)
    ctx.log("  one attention head, recompute vs cached step")
    head, v2 = _head_step(cfg, ctx)
    total, per_step, v3 = _macs(cfg, ctx)
    memory, v4 = _memory(cfg, ctx, ids)
    return Result(tables=[identical, tokens, head, total, per_step, memory], values=v1 + v2 + v3 + v4)
