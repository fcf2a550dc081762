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
  without the cache, at each generation length of ``memory_tokens`` (method in
  meta.json: CUDA allocator or Linux peak RSS). Where recomputing a whole generation
  would take too long (beyond ``memory_whole_up_to``), only its last two steps are run:
  nothing survives a recompute step but the token ids and the previous step's logits,
  and every step is larger than the one before, so the peak of the whole loop is the
  peak of its final step. At the longest length run whole, both are measured, to show
  that they agree.

Writes ``site_data/kv_cache/``. Alone: ``python -m measure run --only kv_cache``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import greedy_cached, greedy_recompute
from measure.lab.kv_cache_head import head_step_rows
from measure.lab.kv_cache_identity import float32_identity, split_finding
from measure.lab.kv_cache_macs import mac_tables
from measure.lab.memory import measure_peak
from measure.lab.timing import time_call
from sitedata.schema import Column, Result, Table, Value

TITLE = "The KV cache: exact, and the biggest single saving"
PROMPT = "Why is the sky blue? Answer in two sentences."

# Token streams and what follows from them reproduce on the same device type and dtype
# (fp32 on any CPU); in fp16 near-tied logits may split the two streams.
_TOKENS = dict(compare="exact", scope="device")
_TIMING = dict(compare="timing")
_FLOAT = dict(compare="numeric")

TABLES = (
    Table(
        "identical_output",
        "Greedy generation, recomputing vs cached",
        (
            Column("method", label="method"),
            Column("new_tokens", "tokens", "new tokens"),
            Column("total_ms", "ms", "wall time", **_TIMING),
            Column("spread_ms", "ms", "spread (IQR)", **_TIMING),
            Column("ms_per_token", "ms", "per token", **_TIMING),
            Column("speed_ratio", "x", "speed vs recompute", **_TIMING),
            Column("repeats", "runs", "repeats"),
            Column("tokens_identical", label="same tokens as recompute", **_TOKENS),
        ),
    ),
    Table(
        "generated_tokens",
        "The two token streams, position by position",
        (
            Column("position", label="position"),
            Column("recompute_id", label="recompute: id", **_TOKENS),
            Column("cached_id", label="cached: id", **_TOKENS),
            Column("text", label="token text", **_TOKENS),
            Column("same", label="same", **_TOKENS),
        ),
    ),
    Table(
        "head_step",
        "One attention head (d = {head_dim}), one step",
        (
            Column("context", "tokens", "context n"),
            Column("recompute_ms", "ms", "recompute step", **_TIMING),
            Column("recompute_spread_ms", "ms", "spread", **_TIMING),
            Column("cached_ms", "ms", "cached step", **_TIMING),
            Column("cached_spread_ms", "ms", "spread", **_TIMING),
            Column("speed_ratio", "x", "ratio", **_TIMING),
            Column("recompute_scores_bytes", "bytes", "scores built, recompute"),
            Column("cached_scores_bytes", "bytes", "scores built, cached"),
        ),
    ),
    Table(
        "macs_total",
        "Multiply-accumulates to generate T tokens from a one-token start",
        (
            Column("scope", label="what"),
            Column("new_tokens", "tokens", "T"),
            Column("recompute_macs", "MAC", "recompute"),
            Column("cached_macs", "MAC", "cached"),
            Column("ratio", "x", "ratio", compare="numeric", scope="any"),
        ),
    ),
    Table(
        "macs_per_step",
        "Multiply-accumulates of one step at context n (model)",
        (
            Column("context", "tokens", "context n"),
            Column("recompute_macs", "MAC", "recompute step"),
            Column("cached_macs", "MAC", "cached step"),
        ),
    ),
    Table(
        "memory",
        "Peak memory while generating, above the resident weights",
        (
            Column("method", label="method"),
            Column("new_tokens", "tokens", "new tokens"),
            Column("steps_run", label="steps run"),
            Column("baseline_bytes", "bytes", "in use before (the whole process)", **_TIMING),
            Column("peak_bytes", "bytes", "peak", **_TIMING),
            Column("above_baseline_bytes", "bytes", "peak above weights", **_TIMING),
            Column("relative_to_cached", "x", "relative to cached", **_TIMING),
        ),
    ),
)
VALUES = (
    Value("speedup", "x", description="cached generation is this many times faster than recomputing", **_TIMING),
    Value("tokens_identical", description="the two token streams are equal", **_TOKENS),
    Value("first_mismatch", description="first differing position, -1 if none", **_TOKENS),
    Value("split_gap", description="top-two logit gap of the recompute path where the streams split", **_FLOAT),
    Value("split_logit_diff", description="largest logit difference of the two paths there", **_FLOAT),
    Value("split_at_near_tie", description="the split gap is within twice that difference", **_TOKENS),
    Value("identical_float32", description="the two streams are equal in float32", **_TOKENS),
    Value("float32_first_mismatch", description="first differing position in float32, -1 if none", **_TOKENS),
    Value("prompt_tokens", "tokens"),
    Value("new_tokens", "tokens"),
    Value("prompt"),
    Value("generated_text", description="the cached run's output, decoded", **_TOKENS),
    Value("recompute_samples_ms", "ms", **_TIMING),
    Value("cached_samples_ms", "ms", **_TIMING),
    Value("head_dim"),
    Value("head_largest_context", "tokens"),
    Value("head_scores_bytes_recompute", "bytes"),
    Value("head_scores_bytes_cached", "bytes"),
    Value("head_ratio_at_largest", "x", **_TIMING),
    Value(
        "weight_macs_per_token", "MAC", description="counted by hooks on every Linear layer during a real forward pass"
    ),
    Value("macs_ratio_largest", "x", compare="numeric", scope="any"),
    Value(
        "memory_ratio",
        "x",
        description="recompute's peak above weights / cached's, at the longest generation",
        **_TIMING,
    ),
    Value("memory_tokens", "tokens", description="the longest generation of the memory table"),
    Value("memory_ratio_shortest", "x", description="the same ratio at the shortest generation", **_TIMING),
    Value("memory_tokens_shortest", "tokens"),
    Value("memory_whole_up_to", "tokens", description="the longest generation recomputed whole for memory"),
    Value(
        "memory_last_steps_share",
        "x",
        description="at that length, the last two steps' peak above weights / the whole loop's (0 if not checked)",
        **_TIMING,
    ),
)


@dataclass(frozen=True, kw_only=True)
class Config:
    new_tokens: int = 48  # spec §1.1
    generation_repeats: int = 5  # an interquartile range needs at least four samples
    head_dim: int = 64  # spec §1.2
    head_contexts: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192)
    head_repeats: int = 7
    mac_totals: tuple[int, ...] = (64, 256, 1024, 4096)  # spec §1.3
    mac_step_contexts: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096)
    memory_tokens: tuple[int, ...] = (96, 256)  # 256: spec §1.4; 96: a shorter point beside it
    memory_whole_up_to: int = 256  # recompute runs whole up to here; beyond, its last steps

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # Recompute costs O(n^2) forwards on two cores (a whole 256-token run, over a
            # minute): fewer repeats, and at 256 tokens its last two steps alone, keep §1
            # near a minute without changing what is shown.
            return cls(generation_repeats=2, memory_whole_up_to=96)
        return cls(
            new_tokens=6,
            generation_repeats=1,
            head_contexts=(16, 32),
            head_repeats=2,
            mac_totals=(4, 16),
            mac_step_contexts=(1, 8),
            memory_tokens=(4, 6),
            memory_whole_up_to=4,
        )


def _prompt(ctx: Context) -> torch.Tensor:
    tok = ctx.model.tokenizer
    if tok is None:
        return ctx.prompt_ids(41)  # the chat prompt's length under SmolLM2's template
    enc = tok.apply_chat_template(
        [{"role": "user", "content": PROMPT}], add_generation_prompt=True, return_tensors="pt"
    )
    return enc["input_ids"].to(ctx.device)


def _identical_output(cfg: Config, ctx: Context, ids: torch.Tensor) -> tuple[list, list, dict]:
    model = ctx.model.model
    outputs = {}

    def runner(name, fn):
        def go():
            outputs[name] = fn(model, ids, cfg.new_tokens)

        return go

    ctx.log(f"  generating {cfg.new_tokens} tokens by recomputing every step ({cfg.generation_repeats} repeats)")
    greedy_recompute(model, ids, 2)  # warm-up, discarded: device start-up, first-call allocations
    t_re = time_call(runner("recompute", greedy_recompute), device=ctx.device, warmup=0, repeats=cfg.generation_repeats)
    ctx.log(f"  generating {cfg.new_tokens} tokens with the cache")
    t_ca = time_call(
        runner("cached", greedy_cached), device=ctx.device, warmup=1, repeats=max(3, cfg.generation_repeats)
    )
    a, b = outputs["recompute"][0].tolist(), outputs["cached"][0].tolist()
    identical = a == b
    split = split_finding(model, ids, a, b)
    fp32_mismatch = float32_identity(model, ids, cfg.new_tokens, (a, b))
    speedup = t_re.median_s / t_ca.median_s
    rows = [
        {
            "method": method,
            "new_tokens": cfg.new_tokens,
            "total_ms": t.median_ms,
            "spread_ms": t.spread_ms,
            "ms_per_token": t.median_ms / cfg.new_tokens,
            "speed_ratio": ratio,
            "repeats": len(t.samples_s),
            "tokens_identical": same,
        }
        for method, t, ratio, same in (("recompute", t_re, 1.0, True), ("cached", t_ca, speedup, identical))
    ]
    tok = ctx.model.tokenizer
    decode = (lambda i: tok.decode([i])) if tok is not None else (lambda i: f"<{i}>")
    tokens = [
        {"position": i, "recompute_id": x, "cached_id": y, "text": decode(x), "same": x == y}
        for i, (x, y) in enumerate(zip(a, b, strict=False))
    ]
    text = tok.decode(b) if tok is not None else " ".join(map(str, b))
    values = {
        "speedup": speedup,
        "tokens_identical": identical,
        **split,
        "identical_float32": fp32_mismatch < 0,
        "float32_first_mismatch": fp32_mismatch,
        "prompt_tokens": int(ids.shape[1]),
        "new_tokens": cfg.new_tokens,
        "prompt": PROMPT if tok is not None else "(random token ids)",
        "generated_text": text,
        "recompute_samples_ms": t_re.samples_ms(),
        "cached_samples_ms": t_ca.samples_ms(),
    }
    return rows, tokens, values


def last_steps_prefix(ids: torch.Tensor, generated: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """The sequence from which two recompute steps are the last two steps of generating
    ``new_tokens`` after ``ids``: the prompt and the first ``new_tokens - 2`` tokens."""
    return torch.cat([ids, generated[:, : new_tokens - 2]], dim=1)


def _memory(cfg: Config, ctx: Context, ids: torch.Tensor) -> tuple[list, dict]:
    model = ctx.model.model
    lengths = sorted(cfg.memory_tokens)
    # the longest generation recomputed whole, where the last-steps probe is checked
    # against it when some longer one is probed only
    checked = max((n for n in lengths if n <= cfg.memory_whole_up_to), default=0)
    if lengths[-1] <= cfg.memory_whole_up_to:
        checked = 0
    rows: list[dict] = []

    def point(method: str, n: int, steps: str, fn) -> dict:
        ctx.log(f"  peak memory, {n} new tokens, {method} ({steps})")
        peak = measure_peak(fn, device=ctx.device)
        row = {
            "method": method,
            "new_tokens": n,
            "steps_run": steps,
            "baseline_bytes": peak.baseline_bytes,
            "peak_bytes": peak.peak_bytes,
            "above_baseline_bytes": peak.above_baseline_bytes,
        }
        rows.append(row)
        return row

    ratios, share = {}, 0.0
    for n in lengths:
        tokens = {}
        cached = point("cached", n, "all", lambda n=n: tokens.setdefault("ids", greedy_cached(model, ids, n)))
        recompute = []
        if n <= cfg.memory_whole_up_to:
            recompute.append(point("recompute", n, "all", lambda n=n: greedy_recompute(model, ids, n)))
        if n > cfg.memory_whole_up_to or n == checked:
            prefix = last_steps_prefix(ids, tokens["ids"], n)
            recompute.append(
                point("recompute", n, "last two", lambda prefix=prefix: greedy_recompute(model, prefix, 2))
            )
        for r in (*recompute, cached):
            r["relative_to_cached"] = r["above_baseline_bytes"] / max(1, cached["above_baseline_bytes"])
        ratios[n] = recompute[0]["relative_to_cached"]
        if n == checked:
            share = recompute[1]["above_baseline_bytes"] / max(1, recompute[0]["above_baseline_bytes"])
    order = {"recompute": 0, "cached": 1}
    rows.sort(key=lambda r: (r["new_tokens"], order[r["method"]], r["steps_run"] != "all"))
    values = {
        "memory_ratio": ratios[lengths[-1]],
        "memory_tokens": lengths[-1],
        "memory_ratio_shortest": ratios[lengths[0]],
        "memory_tokens_shortest": lengths[0],
        "memory_whole_up_to": min(cfg.memory_whole_up_to, lengths[-1]),
        "memory_last_steps_share": share,
    }
    return rows, values


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run, for the estimate printed before it starts (the prompt
    is about 41 tokens; the head and MAC tables are small and left out)."""
    prompt = 41

    def recompute(n: int) -> ForwardPasses:
        return ForwardPasses(prefill_tokens=sum(prompt + i for i in range(n)))

    def cached(n: int) -> ForwardPasses:
        return ForwardPasses(prompt, n - 1)

    total = ForwardPasses()
    # Outputs once, timed repeats, the float32 check (at most once more), the memory run.
    for _ in range(cfg.generation_repeats + 2):
        total += recompute(cfg.new_tokens)
    for _ in range(max(3, cfg.generation_repeats) + 3):
        total += cached(cfg.new_tokens)
    for n in cfg.memory_tokens:
        total += cached(n)
        total += recompute(n) if n <= cfg.memory_whole_up_to else ForwardPasses(prefill_tokens=2 * (prompt + n))
    return total


def run(cfg: Config, ctx: Context) -> Result:
    ids = _prompt(ctx)
    identical, tokens, v1 = _identical_output(cfg, ctx, ids)
    ctx.log("  one attention head, recompute vs cached step")
    head, v2 = head_step_rows(ctx, head_dim=cfg.head_dim, contexts=cfg.head_contexts, repeats=cfg.head_repeats)
    total, per_step, v3 = mac_tables(
        ctx, head_dim=cfg.head_dim, totals=cfg.mac_totals, step_contexts=cfg.mac_step_contexts
    )
    memory, v4 = _memory(cfg, ctx, ids)
    tables = {
        "identical_output": identical,
        "generated_tokens": tokens,
        "head_step": head,
        "macs_total": total,
        "macs_per_step": per_step,
        "memory": memory,
    }
    return Result(tables=tables, values={**v1, **v2, **v3, **v4})
