"""§2 Two phases: prefill and decode.

Measures, on the run's model, every timing in interleaved rounds
(``measure/lab/sampling.py``: each median with its 95 % interval and sample count), and
every floor against the run's one bandwidth, its start calibration
(``ctx.calibration``):

* ``split``: one cached generation (a prompt of book text, then one token per step),
  the prefill and the decode steps timed apart: cost per prompt token, per generated
  token, and their ratio; every step of every timed generation kept raw.
* ``prefill``: one prefill at prompt length P: time (= time to first token), time per
  prompt token, prompt tokens per second; its FLOPs counted from the model's shape, per
  byte of weights (arithmetic intensity), and the FLOP/s it achieved.
* ``decode``: one decode step against a cache of C positions: step time, tokens per
  second (= 1 / step), and the step's floor, the model's weight bytes over the run's
  bandwidth, with the fraction of it achieved (and the floor with the cache's bytes
  added); the attention's multiply-adds at C against the weights', and the step's FLOPs
  per byte read. Beside it, interleaved with it, the same step compiled
  (measure/lab/compiled_decode.py: a static cache and torch.compile, with CUDA graphs on
  a GPU) at every C, against the same floor.
* ``breakdown``: where an eager step's time goes, by group of operators, under
  torch.profiler, at the smallest context and at ``flat_up_to``; with the values that set
  the step beside its three terms by the run's roofline (regime.py): its operators at the
  fixed cost of one, its arithmetic at the one-row compute ceiling, its bytes at the
  run's bandwidth.
* ``settings``: which setting brings the eager step closest to its floor (settings.py):
  every thread or one, the run's dtype or the other, eager or compiled, interleaved.

Every timed step (each decode step, each prefill, the split's two phases, each setting)
carries its prediction by the run's roofline (``ctx.calibration.roofline()``): what it
moves, computes and dispatches is counted by ``measure/lab/step_work.py``, and measured
over predicted comes with its range (``measure/lab/prediction.py``).

The package: ``tables`` declares what is written, ``split``, ``sweeps``, ``regime`` and
``settings`` measure, and ``run`` here puts them together.

Writes ``site_data/prefill_decode/``. Alone: ``python -m measure run --only prefill_decode``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from measure.experiments.chapter.predictions import qwen
from measure.experiments.prefill_decode.regime import breakdown, regime_values
from measure.experiments.prefill_decode.settings import setting_sweep
from measure.experiments.prefill_decode.split import split_table
from measure.experiments.prefill_decode.sweeps import decode_sweep, prefill_sweep
from measure.experiments.prefill_decode.tables import TABLES
from measure.experiments.prefill_decode.values import VALUES
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import decode_step, prefill, random_cache
from measure.lab.medians import MIN_ROUNDS
from measure.lab.op_counting import count_ops
from measure.lab.step_work import decode_work, linear_weight_bytes, model_counts
from measure.reference.gpus import datasheet_for
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "Two phases: prefill and decode"


@dataclass(frozen=True, kw_only=True)
class Config:
    split_prompt_tokens: int = 40  # spec §2.1: the source's run had 40 prompt tokens
    split_new_tokens: int = 48  # and generated 48 (47 decode steps after the prefill)
    prompt_lengths: tuple[int, ...] = (16, 64, 256, 1024, 2048)  # spec §2.2
    cache_lengths: tuple[int, ...] = (16, 64, 256, 1024, 4096)  # spec §2.3
    target: float = 0.03  # the relative half-width of every interval asked for
    # One seed per sweep (the order of its rounds), and its time budget (warm-up
    # included; the first six rounds are always completed).
    split_seed: int = 20
    prefill_seed: int = 21
    decode_seed: int = 22
    breakdown_seed: int = 23
    settings_seed: int = 25
    split_budget_s: float = 30.0
    prefill_budget_s: float = 60.0
    decode_budget_s: float = 30.0
    breakdown_budget_s: float = 5.0
    # the settings' sweep also copies the weights' bytes on one thread (the one-thread
    # setting's bandwidth): the three seconds the dispatch and matmul probes took, now the
    # calibration's, go to it
    settings_budget_s: float = 18.0
    # Every prompt length stays in the prefill's rounds for at least this many: the
    # cost per token at the longest prompt is compared with the one before it by their
    # ratio paired round by round, and with the six rounds after which the longest
    # could leave, that ratio's interval would run from its smallest sample to its
    # largest, too wide to tell a fall of a few per cent from none.
    prefill_min_rounds: int = 12

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # The 2,048-token prefill costs about 5 s a call on two cores (12 rounds and a
            # warm-up: a minute): the cpu profile stops at 1,024, the full profile keeps
            # it. Twelve rounds of the four lengths take about 25 s; the short prompts,
            # the noisiest, get the rest of the budget.
            return cls(
                prompt_lengths=(16, 64, 256, 1024),
                split_budget_s=20.0,
                prefill_budget_s=32.0,
                decode_budget_s=12.0,
                breakdown_budget_s=3.0,
                settings_budget_s=12.0,
            )
        return cls(
            split_prompt_tokens=6,
            split_new_tokens=4,
            prompt_lengths=(4, 16),
            cache_lengths=(4, 16),
            split_budget_s=0.1,
            prefill_budget_s=0.1,
            prefill_min_rounds=6,
            decode_budget_s=0.1,
            breakdown_budget_s=0.1,
            settings_budget_s=0.1,
        )


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run at the fewest rounds (six, and a warm-up), for the
    estimate printed before it starts; rounds the budgets allow beyond them are not counted."""
    rounds = MIN_ROUNDS + 1
    steps = cfg.split_new_tokens - 1
    # The split: a prefill point, and a generation after an untimed prefill.
    split = ForwardPasses(2 * cfg.split_prompt_tokens * rounds, steps * rounds)
    prefills = ForwardPasses(prefill_tokens=sum(cfg.prompt_lengths) * rounds)
    # Eager and compiled at every C, two warm-ups each, and each compiled C's first call;
    # compiled at the first C, then again when the length becomes dynamic.
    n = len(cfg.cache_lengths)
    decode = ForwardPasses(decode_steps=2 * n * (MIN_ROUNDS + 2) + n, compiles=2)
    # Two contexts profiled; one step and one prefill (the shortest) whose operators are counted.
    profiled = ForwardPasses(prefill_tokens=cfg.prompt_lengths[0], decode_steps=2 * rounds + 1)
    # Four settings (three where the run has one thread), two warm-ups each, and the two
    # dtypes' steps whose operators are counted.
    kinds = ForwardPasses(decode_steps=4 * (MIN_ROUNDS + 2) + 2)
    return split + prefills + decode + profiled + kinds


def run(cfg: Config, ctx: Context) -> Result:
    if ctx.calibration is None:
        raise ValueError("prefill_decode divides its floors by the run's calibration: run it through the runner")
    model = ctx.model.model
    roof = ctx.calibration.roofline()
    counts = model_counts(model)
    smallest = cfg.cache_lengths[0]
    cache = random_cache(model, batch=1, tokens=smallest)
    # one step's operators and one prefill's: their number depends on neither length
    ops = {
        "step": count_ops(partial(decode_step, model, ctx.prompt_ids(1), cache)),
        "prefill": count_ops(partial(prefill, model, ctx.prompt_ids(cfg.prompt_lengths[0]))),
    }
    split, v_split, n_split = split_table(cfg, ctx, counts=counts, ops=ops, roof=roof)
    pre, v_pre, n_pre = prefill_sweep(cfg, ctx, counts=counts, ops=ops["prefill"], roof=roof)
    dec, v_dec, n_dec, dec_roof = decode_sweep(cfg, ctx, counts=counts, ops=ops["step"], roof=roof)
    contexts = tuple(sorted({smallest, v_dec["flat_up_to"]}))
    parts, n_parts = breakdown(cfg, ctx, contexts)
    kinds, v_settings, n_settings = setting_sweep(cfg, ctx)
    v_regime = regime_values(
        roof=dec_roof,  # the terms the decode table's steps were set against
        calibrated=roof,
        ops=ops["step"],
        step_s=dec[0]["step_ms"] / 1e3,
        dtype=counts.dtype,
        counts={
            "step_flops": decode_work(counts, context=smallest).flops,
            "step_flops_per_byte": dec[0]["flops_per_byte"],
            "projection_bytes": linear_weight_bytes(model),
            "contexts": contexts,
        },
        rows=parts,
    )
    chapter = qwen()  # the chapter's model in fp16, from its config: its cache per token against its weights
    card = datasheet_for(str(ctx.machine.get("gpu", "")))  # a GPU run on a card the predictions name
    values = {
        **v_split,
        **v_pre,
        **v_dec,
        "weight_bytes": counts.weight_bytes,
        "weight_macs": counts.weight_macs,
        "ops_per_prefill": ops["prefill"],
        "cache_share_vs_chapter": v_dec["cache_share"] / (chapter.kv_bytes_per_token / chapter.weight_bytes),
        **v_regime,
        **v_settings,
        "datasheet_card": card.key if card else "",
        "datasheet_floor_ms": counts.weight_bytes / (card.bandwidth_gb_s * 1e9) * 1e3 if card else None,
    }
    return Result(
        tables={"split": split, "prefill": pre, "decode": dec, "breakdown": parts, "settings": kinds},
        values=values,
        notes={**n_split, **n_pre, **n_dec, **n_parts, **n_settings},
    )
