"""Reusing the prompt: prefix caching and chunked prefill.

Measures, on the run's model, every timing in interleaved rounds
(``measure/lab/sampling.py``: each median with the 95 % interval of that median):

* ``first_token``: the time to a prompt's first token, a shared prefix of each length of
  ``prefix_tokens`` followed by ``question_tokens`` of its own, read whole or as the
  question alone against the prefix's cache kept from before (prefix caching); the
  speedup paired round by round; the two first tokens must be the same.
* ``passes`` and ``admission``: a prompt of ``prompt_tokens`` prefilled in one pass or
  in chunks of ``chunk_tokens``, each chunk against the cache its earlier chunks wrote;
  the chunks timed one by one and all together, the whole pass, and one decode step of
  a running batch (``running_batch`` requests at ``running_context`` tokens). What
  admitting the prompt does to that batch is then simulated from those costs
  (``measure/sim/chunked_prefill.py``): the prompt's first token and the longest wait
  of a running request between two of its tokens, each with the range its costs'
  intervals give.
* ``shared_blocks``: the KV memory of requests that share the longest prefix, in paged
  blocks of ``block_tokens``, counted from the model's shape (``blocks.py``).

Writes ``site_data/prompt_reuse/``. Alone: ``make measure ONLY=prompt_reuse``.
"""

from __future__ import annotations

from dataclasses import dataclass

from measure.experiments.prompt_reuse.blocks import shared_block_rows
from measure.experiments.prompt_reuse.chunking import admission_rows, chunk_sweep, pass_rows
from measure.experiments.prompt_reuse.tables import TABLES, VALUES
from measure.experiments.prompt_reuse.timings import first_token_rows, prefix_sweep
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.formulas import kv_bytes_per_token
from measure.lab.medians import MIN_ROUNDS
from sitedata.schema import Result

__all__ = ["CHAPTER_COUNTERPART", "TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "Reusing the prompt: prefix caching and chunked prefill"
# The source chapter has no section on this: its page has no "Beside the chapter".
CHAPTER_COUNTERPART = False


@dataclass(frozen=True, kw_only=True)
class Config:
    prefix_tokens: tuple[int, ...] = (64, 128, 256)
    question_tokens: int = 16
    prompt_tokens: int = 256
    chunk_tokens: int = 64
    running_batch: int = 4
    running_context: int = 256
    block_tokens: int = 16  # vLLM's default block size, as on the batching page
    requests: tuple[int, ...] = (1, 4, 16, 64)
    seed: int = 1  # the order of the sweeps' rounds
    # each sweep's time, warm-up included (six rounds are always completed): on two quiet
    # cores a round of the prefix sweep takes under a second, of the chunk sweep about one
    prefix_budget_s: float = 6.0
    chunk_budget_s: float = 8.0
    target: float = 0.03  # the relative half-width of every interval asked for

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile in ("full", "cpu"):
            return cls()
        # smoke: the tests' tiny model, in a second or two
        return cls(
            prefix_tokens=(8, 16),
            question_tokens=4,
            prompt_tokens=16,
            chunk_tokens=8,
            running_batch=2,
            running_context=8,
            block_tokens=4,
            requests=(1, 4),
            prefix_budget_s=0.1,
            chunk_budget_s=0.1,
        )


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run at the fewest rounds (six, and a warm-up), with the
    passes that prepare the caches and check the first tokens."""
    rounds = MIN_ROUNDS + 1
    q, p, c = cfg.question_tokens, cfg.prompt_tokens, cfg.chunk_tokens
    prefix = sum(n + q + q for n in cfg.prefix_tokens) * rounds + sum(2 * n + 2 * q for n in cfg.prefix_tokens)
    chunks = (3 * p) * rounds + 4 * p
    return ForwardPasses(prefill_tokens=prefix + chunks + c, decode_steps=rounds + 1)


def run(cfg: Config, ctx: Context) -> Result:
    if cfg.prompt_tokens % cfg.chunk_tokens:
        raise ValueError(f"chunks of {cfg.chunk_tokens} tokens do not divide a prompt of {cfg.prompt_tokens}")
    sweep, same = prefix_sweep(cfg, ctx)
    first = first_token_rows(cfg, sweep, same)
    chunked, chunk_same = chunk_sweep(cfg, ctx)
    decode = chunked.points["decode"]
    values = {
        "shortest_prefix_tokens": min(cfg.prefix_tokens),
        "longest_prefix_tokens": max(cfg.prefix_tokens),
        "question_tokens": cfg.question_tokens,
        "prompt_tokens": cfg.prompt_tokens,
        "chunk_tokens": cfg.chunk_tokens,
        "chunk_passes": cfg.prompt_tokens // cfg.chunk_tokens,
        "running_batch": cfg.running_batch,
        "running_context": cfg.running_context,
        **decode.columns("decode_ms"),
        "block_tokens": cfg.block_tokens,
        "largest_requests": max(cfg.requests),
    }
    values.pop("decode_samples")  # the sweep's sample counts are in its notes
    shape = ctx.model.shape()
    values["kv_bytes_per_token"] = kv_bytes = kv_bytes_per_token(
        layers=shape["layers"],
        kv_heads=shape["kv_heads"],
        head_dim=shape["head_dim"],
        bytes_per_element=ctx.dtype.itemsize,
    )
    memory = shared_block_rows(
        requests=cfg.requests,
        prefix_tokens=max(cfg.prefix_tokens),
        prompt_tokens=max(cfg.prefix_tokens) + cfg.question_tokens,
        block_tokens=cfg.block_tokens,
        kv_bytes_per_token=kv_bytes,
    )
    return Result(
        tables={
            "first_token": first,
            "passes": pass_rows(cfg, chunked),
            "admission": admission_rows(cfg, chunked, chunk_same),
            "shared_blocks": memory,
        },
        values=values,
        notes={"prefix_sweep": sweep.describe(), "chunk_sweep": chunked.describe()},
    )
