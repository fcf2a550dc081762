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

The package: ``tables`` declares what is written; ``head``, ``macs``, ``identity`` (the
float32 check) and ``memory`` build their tables; the rest is here.

Writes ``site_data/kv_cache/``. Alone: ``python -m measure run --only kv_cache``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from measure.experiments.kv_cache.head import head_step_rows
from measure.experiments.kv_cache.identity import float32_identity, split_finding
from measure.experiments.kv_cache.macs import mac_tables
from measure.experiments.kv_cache.memory import memory_rows
from measure.experiments.kv_cache.tables import TABLES, VALUES
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import greedy_cached, greedy_recompute
from measure.lab.timing import time_call
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "The KV cache: exact, and the biggest single saving"
PROMPT = "Why is the sky blue? Answer in two sentences."


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
    memory, v4 = memory_rows(ctx, ids, lengths=cfg.memory_tokens, whole_up_to=cfg.memory_whole_up_to)
    tables = {
        "identical_output": identical,
        "generated_tokens": tokens,
        "head_step": head,
        "macs_total": total,
        "macs_per_step": per_step,
        "memory": memory,
    }
    return Result(tables=tables, values={**v1, **v2, **v3, **v4})
