"""§1 The KV cache: exact, and the biggest single saving.

Measures, on the run's model, every timing in interleaved rounds
(``measure/lab/sampling.py``: each median with its 95 % interval and sample count):

* ``identical_output``: greedy generation recomputing everything each step vs with the
  cache, over the chapter's 48 new tokens; the token ids must be identical; the time of
  each whole generation (with and without its first token's pass), time per token, and
  the speedup paired round by round, with its interval, each generation timed as the
  sum of its steps (``speedup``: the steps interleaved in one sweep) and set against its
  prediction by the run's roofline.
* ``generated_tokens``: the two token streams side by side (the proof, shown).
* ``head_step``: one attention head (d = 64), one generation step at context n, both
  ways, every point in one sweep: time and the bytes of the score matrix actually built.
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

The package: ``tables`` declares what is written; ``speedup``, ``head``, ``macs``,
``identity`` (the float32 check) and ``memory`` build their tables; the rest is here.

Writes ``site_data/kv_cache/``. Alone: ``python -m measure run --only kv_cache``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from measure.experiments.kv_cache.head import head_step_rows
from measure.experiments.kv_cache.identity import float32_identity, split_finding
from measure.experiments.kv_cache.macs import mac_tables
from measure.experiments.kv_cache.memory import memory_rows
from measure.experiments.kv_cache.speedup import (
    METHODS,
    generation_sweep,
    identical_rows,
    plan,
    predicted,
    round_totals,
    step_values,
)
from measure.experiments.kv_cache.speedup import streams as generated_streams
from measure.experiments.kv_cache.tables import TABLES, VALUES
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import decode_step, prefill, random_cache, recompute_step
from measure.lab.op_counting import count_ops
from measure.lab.step_work import model_counts
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "The KV cache: exact, and the biggest single saving"
PROMPT = "Why is the sky blue? Answer in two sentences."


@dataclass(frozen=True, kw_only=True)
class Config:
    new_tokens: int = 48  # spec §1.1: the generations compared, timed and shown
    # the steps timed of each generation (speed.py): the recompute pass at this many
    # lengths and the decode step at this many contexts, first and last included
    recompute_points: int = 5
    step_points: int = 3
    head_dim: int = 64  # spec §1.2
    head_contexts: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192)
    mac_totals: tuple[int, ...] = (64, 256, 1024, 4096)  # spec §1.3
    mac_step_contexts: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096)
    memory_tokens: tuple[int, ...] = (96, 256)  # 256: spec §1.4; 96: a shorter point beside it
    memory_whole_up_to: int = 256  # recompute runs whole up to here; beyond, its last steps
    target: float = 0.03  # the relative half-width of every interval asked for
    # One seed per sweep (the order of its rounds), and its time budget (warm-up
    # included; the first six rounds, or head_min_rounds, are always completed).
    generation_seed: int = 10
    head_seed: int = 11
    generation_budget_s: float = 30.0
    # the generations' totals are paired on the rounds every step shares: ten, so that
    # their intervals leave out the smallest and the largest round (nine is the least)
    generation_min_rounds: int = 10
    head_budget_s: float = 10.0
    # Every point of the head's sweep stays for at least this many rounds, even once its
    # own interval is narrow: each context's ratio is paired on the rounds the two steps
    # share, and the recompute step at the largest context reaches its width in as few as
    # six while the quick, noisier cached step needs dozens. Six pairs give the widest
    # interval a median has, the smallest ratio to the largest (in one run 1,433 to 2,629
    # at 8,192 tokens, and whether the gap widens undecided); twelve leave out the two
    # extremes at each end. A round costs about half a second, all in the recompute steps.
    head_min_rounds: int = 12

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # A whole 48-token recompute generation takes seconds on two cores, and ten
            # rounds of it minutes: its steps are timed instead (speed.py), a round of
            # eight of them (the prefill, three decode steps, five recompute passes) about
            # 0.7 s, ten rounds well inside the budget the 8-token generations had. The
            # streams shown come from the memory table's whole generations at 48.
            return cls(
                memory_tokens=(48, 256),
                memory_whole_up_to=48,
                generation_budget_s=10.0,
                # a round of the lone head is about a second (the recompute at 8,192 alone
                # is two thirds of it): twenty seconds give about eighteen rounds, not six,
                # and an interval well inside the extremes of the samples (at ten, nine
                # rounds left the cached step at 8,192 between 0.26 and 0.55 ms in one run
                # of two, and whether the gap widens undecided)
                head_budget_s=20.0,
            )
        return cls(
            new_tokens=6,
            recompute_points=3,
            step_points=2,
            generation_min_rounds=6,
            head_contexts=(16, 32),
            mac_totals=(4, 16),
            mac_step_contexts=(1, 8),
            memory_tokens=(4, 6),
            memory_whole_up_to=4,
            generation_budget_s=0.1,
            head_budget_s=0.1,
            head_min_rounds=6,
        )


def _prompt(ctx: Context) -> torch.Tensor:
    tok = ctx.model.tokenizer
    if tok is None:
        return ctx.prompt_ids(41)  # the chat prompt's length under SmolLM2's template
    enc = tok.apply_chat_template(
        [{"role": "user", "content": PROMPT}], add_generation_prompt=True, return_tensors="pt"
    )
    return enc["input_ids"].to(ctx.device)


def _identical_output(cfg: Config, ctx: Context, ids: torch.Tensor, generated: dict) -> tuple[list, list, dict, dict]:
    model = ctx.model.model
    streams = {m: generated[(m, cfg.new_tokens)][0].tolist() for m in METHODS if (m, cfg.new_tokens) in generated}
    if len(streams) < len(METHODS):
        ctx.log(f"  generating the {cfg.new_tokens}-token streams once each way")
        streams = generated_streams(model, ids, cfg.new_tokens)
    a, b = streams["recompute"], streams["cached"]
    identical = a == b
    counts = model_counts(model)
    points, p, notes, roof, v_round = generation_sweep(cfg, ctx, ids, b, ctx.calibration.roofline())
    cache = random_cache(model, batch=1, tokens=p.prompt)
    ops = {
        "recompute": count_ops(partial(recompute_step, model, ids)),
        "prefill": count_ops(partial(prefill, model, ids)),
        "step": count_ops(partial(decode_step, model, ids[:, -1:], cache)),
    }
    rows, v_speedup = identical_rows(cfg, round_totals(points, p), identical, predicted(counts, p, roof, ops))
    split = split_finding(model, ids, a, b)
    fp32_mismatch = float32_identity(model, ids, cfg.new_tokens, (a, b))
    tok = ctx.model.tokenizer
    decode = (lambda i: tok.decode([i])) if tok is not None else (lambda i: f"<{i}>")
    tokens = [
        {"position": i, "recompute_id": x, "cached_id": y, "text": decode(x), "same": x == y}
        for i, (x, y) in enumerate(zip(a, b, strict=False))
    ]
    text = tok.decode(b) if tok is not None else " ".join(map(str, b))
    values = {
        **v_speedup,
        **step_values(points, p, counts, roof, ops),
        **v_round,
        "tokens_identical": identical,
        **split,
        "identical_float32": fp32_mismatch < 0,
        "float32_first_mismatch": fp32_mismatch,
        "prompt_tokens": int(ids.shape[1]),
        "new_tokens": cfg.new_tokens,
        "prompt": PROMPT if tok is not None else "(random token ids)",
        "generated_text": text,
    }
    return rows, tokens, values, notes


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run at the fewest rounds (and a warm-up), for the estimate
    printed before it starts (the prompt is about 41 tokens; the head and MAC tables are
    small and left out)."""
    prompt = 41
    rounds = cfg.generation_min_rounds + 1
    p = plan(prompt, cfg.new_tokens, recompute_points=cfg.recompute_points, step_points=cfg.step_points)

    def recompute(n: int) -> ForwardPasses:
        return ForwardPasses(prefill_tokens=sum(prompt + i for i in range(n)))

    def cached(n: int) -> ForwardPasses:
        return ForwardPasses(prompt, n - 1)

    # each round: the prefill, the decode steps and the recompute passes timed; then
    # three steps whose operators are counted
    total = ForwardPasses(rounds * (prompt + sum(p.recompute_lengths)), rounds * len(p.step_contexts))
    total += ForwardPasses(2 * prompt, 1)
    if cfg.new_tokens not in cfg.memory_tokens:
        total += recompute(cfg.new_tokens) + cached(cfg.new_tokens)  # the streams, once
    for n in cfg.memory_tokens:
        total += cached(n)
        total += recompute(n) if n <= cfg.memory_whole_up_to else ForwardPasses(prefill_tokens=2 * (prompt + n))
    return total


def run(cfg: Config, ctx: Context) -> Result:
    ids = _prompt(ctx)
    generated: dict = {}  # the memory table's whole generations, whose streams are reused
    memory, v_memory = memory_rows(
        ctx, ids, lengths=cfg.memory_tokens, whole_up_to=cfg.memory_whole_up_to, generated=generated
    )
    identical, tokens, v_identical, n_identical = _identical_output(cfg, ctx, ids, generated)
    head, v_head, n_head = head_step_rows(cfg, ctx)
    total, per_step, v_macs = mac_tables(
        ctx, head_dim=cfg.head_dim, totals=cfg.mac_totals, step_contexts=cfg.mac_step_contexts
    )
    tables = {
        "identical_output": identical,
        "generated_tokens": tokens,
        "head_step": head,
        "macs_total": total,
        "macs_per_step": per_step,
        "memory": memory,
    }
    values = {**v_identical, **v_head, **v_macs, **v_memory}
    return Result(tables=tables, values=values, notes={**n_identical, **n_head})
