"""§2 prefill and decode: one cached generation, with the prefill and the decode steps
timed apart, and the ``split`` table made from it.

Two points sampled by ``sampling.interleaved``, one call each per round: ``prefill`` (the
prompt's one pass) and ``decode`` (the generation's steps after a prefill made untimed
just before, in ``before``). A decode sample is the whole generation's steps; the clock
also runs around each step, and every step of every timed generation is kept raw
(``split_step_samples_ms``): the steps are one generation's, their context growing by one
each, so they are not samples of one quantity, and their median is not taken.
"""

from __future__ import annotations

from functools import partial

import torch

from measure.lab.context import Context
from measure.lab.generation import decode_step, prefill
from measure.lab.medians import ratio_cells
from measure.lab.prediction import prediction_cells
from measure.lab.roofline import Roofline, summed
from measure.lab.roofline_in_rounds import BLOCK_S, RoundProbes
from measure.lab.sampling import host_timer, interleaved
from measure.lab.step_work import ModelCounts, decode_work, prefill_work
from measure.lab.timing import timed


def split_sweep(
    model,
    ids: torch.Tensor,
    *,
    steps: int,
    ctx: Context,
    seed: int,
    budget_s: float,
    target: float,
    probes: RoundProbes,
):
    """The sweep of the two points and of ``probes``, and every timed generation's per-step seconds."""
    device = ctx.device
    state: dict = {}
    generations: list[list[float]] = []

    def before(key: str) -> None:
        if key == "decode":
            state["start"] = prefill(model, ids)

    def generate() -> None:
        token, cache = state.pop("start")
        per_step = []
        for _ in range(steps):
            (token, cache), seconds = timed(partial(decode_step, model, token, cache), device=device)
            per_step.append(seconds)
        state["steps"] = per_step

    clock = host_timer(device)

    def timer(fn) -> float:
        seconds = clock(fn)
        if fn is generate:  # a timed generation (warm-up calls do not pass here)
            generations.append(state.pop("steps"))
        return seconds

    sweep = interleaved(
        {"prefill": lambda: prefill(model, ids), "decode": generate} | probes.points,
        device=device,
        seed=seed,
        budget_s=budget_s,
        target=target,
        before=before,
        timer=timer,
        min_sample_s=BLOCK_S,
    )
    return sweep, generations


def split_table(cfg, ctx: Context, *, counts: ModelCounts, ops: dict, roof: Roofline) -> tuple[list[dict], dict, dict]:
    """The ``split`` rows, their values, and the sweep's notes; ``ops`` holds the operators
    of a ``prefill`` and of a decode ``step``. The decode phase is predicted step by step:
    the context grows by one position each step; ``roof`` is the calibration's, whose
    memory and operator terms the sweep's own rounds replace."""
    model = ctx.model.model
    ids = ctx.prompt_ids(cfg.split_prompt_tokens)
    steps = cfg.split_new_tokens - 1
    ctx.log(f"  split: prefill {cfg.split_prompt_tokens} tokens, then {steps} decode steps, interleaved")
    probes = RoundProbes.of(model, ctx.device)
    sweep, generations = split_sweep(
        model,
        ids,
        steps=steps,
        ctx=ctx,
        seed=cfg.split_seed,
        budget_s=cfg.split_budget_s,
        target=cfg.target,
        probes=probes,
    )
    roof = probes.roofline(sweep, roof)  # the memory and operator terms of the same rounds
    pre, dec = sweep.points["prefill"], sweep.points["decode"]
    pre_tok, dec_tok = pre.scaled(1 / cfg.split_prompt_tokens), dec.scaled(1 / steps)
    p = cfg.split_prompt_tokens
    predicted = {
        "prefill": prefill_work(counts, prompt=p, ops=ops["prefill"]).predict(roof),
        "decode": summed(decode_work(counts, context=p + i, ops=ops["step"]).predict(roof) for i in range(steps)),
    }
    rows = []
    for phase, tokens, total, per_token, base, key in (
        ("prefill (prompt tokens, one pass)", cfg.split_prompt_tokens, pre, pre_tok, pre_tok, "prefill"),
        ("decode (one token per step)", steps, dec, dec_tok, pre_tok, "decode"),
    ):
        rows.append(
            {
                "phase": phase,
                "tokens": tokens,
                **total.columns("total_ms"),
                **_bounds(per_token.columns("ms_per_token")),
                **(
                    dict.fromkeys(
                        ("cost_vs_prompt_token", "cost_vs_prompt_token_low", "cost_vs_prompt_token_high"), 1.0
                    )
                    if per_token is base
                    else ratio_cells("cost_vs_prompt_token", per_token, base)
                ),
                **prediction_cells("total", total, predicted[key]),
            }
        )
    all_steps = [s for g in generations for s in g]
    values = {
        "split_prompt_tokens": cfg.split_prompt_tokens,
        "split_decode_steps": steps,
        "split_prefill_ms": pre.median_ms,
        "split_prefill_ms_per_token": pre_tok.median_ms,
        "split_decode_ms_per_token": dec_tok.median_ms,
        **ratio_cells("split_ratio", dec_tok, pre_tok),
        # what the roofline predicts for that ratio: a step's predicted time over a prompt token's
        "split_ratio_predicted": predicted["decode"].total.value / steps / (predicted["prefill"].total.value / p),
        "split_step_min_ms": min(all_steps) * 1e3,
        "split_step_max_ms": max(all_steps) * 1e3,
        "split_step_samples_ms": [[round(s * 1e3, 4) for s in g] for g in generations],
        **probes.values("split_round", sweep),
    }
    return rows, values, {"split_sweep": sweep.describe()}


def _bounds(cells: dict) -> dict:
    """An estimate's cells without its sample count (another column of the row has it)."""
    return {k: v for k, v in cells.items() if not k.endswith("_samples")}
