"""§1's two generations timed against each other over ``new_tokens`` (the chapter's 48),
step by step, and counted as the chapter counted them.

A generation is a sum of steps whose time depends only on their length: recomputing,
``new_tokens`` passes over the whole sequence, of ``prompt`` to ``prompt + new_tokens - 1``
tokens; with the cache, one prefill of the prompt and ``new_tokens - 1`` decode steps
against ``prompt`` to ``prompt + new_tokens - 2`` cached positions. On two CPU cores a
recompute generation of 48 tokens takes seconds, and six rounds of it would take minutes;
so the steps are timed instead, every point in one interleaved sweep
(``sampling.interleaved``): the prefill, the decode step at a few contexts and the
recompute pass at a few lengths spread over the generation, first and last included.
Each round then gives one sample of each whole generation, the sum of its steps, each
step read off the straight line between the two lengths timed around it
(``interpolated_sum``): the steps of a round were timed moments apart, so the round's two
generations and their ratio are paired as two points of one sweep are. The medians and
their intervals are over those rounds; the time of a step is linear enough in its length
over the few dozen tokens of a generation (a pass's weights are the same at every length)
that the line's error is far below the interval's width.

The speed-up is given twice: as the chapter counted it, the cached generation's prefill
included (its first token costs a pass over the prompt either way), and over the steps
after the first token alone. Each total is set against its prediction by the run's
roofline, step by step (``measure/lab/step_work.py``), with the bandwidth and the cost per
operator timed in the sweep's own rounds (``measure/lab/roofline_in_rounds.py``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial

import torch

from measure.lab.context import Context
from measure.lab.generation import crop_cache, decode_step, greedy_cached, greedy_recompute, prefill, random_cache
from measure.lab.generation import recompute_step as one_recompute_step
from measure.lab.medians import Estimate, median_interval
from measure.lab.prediction import prediction_cells, step_value_cells
from measure.lab.roofline import Prediction, Roofline, summed
from measure.lab.roofline_in_rounds import BLOCK_S, RoundProbes, measured
from measure.lab.sampling import interleaved
from measure.lab.step_work import ModelCounts, decode_work, prefill_work

METHODS = {"recompute": greedy_recompute, "cached": greedy_cached}


def streams(model, ids: torch.Tensor, new_tokens: int) -> dict[str, list[int]]:
    """Each method's token ids, ``new_tokens`` of them, from one untimed generation."""
    return {name: fn(model, ids, new_tokens)[0].tolist() for name, fn in METHODS.items()}


def spaced(first: int, last: int, count: int) -> tuple[int, ...]:
    """``count`` whole numbers spread evenly from ``first`` to ``last``, both included
    (fewer where the range holds fewer)."""
    if last < first or count < 1:
        raise ValueError(f"no lengths from {first} to {last}")
    if count == 1 or last == first:
        return (first,) if last == first else (first, last)
    return tuple(sorted({round(first + (last - first) * i / (count - 1)) for i in range(count)}))


def interpolated_sum(times: Mapping[int, float], lengths: Iterable[int]) -> float:
    """The sum, over ``lengths``, of each length's time on the straight line between the
    two measured lengths around it (a measured length's own time where it was measured)."""
    xs = sorted(times)
    total = 0.0
    for n in lengths:
        if not xs[0] <= n <= xs[-1]:
            raise ValueError(f"length {n} lies outside the lengths timed, {xs[0]} to {xs[-1]}")
        hi = next(i for i, x in enumerate(xs) if x >= n)
        if xs[hi] == n:
            total += times[n]
            continue
        a, b = xs[hi - 1], xs[hi]
        total += times[a] + (times[b] - times[a]) * (n - a) / (b - a)
    return total


@dataclass(frozen=True)
class Plan:
    """What one generation is made of, and which of its steps are timed."""

    prompt: int
    new_tokens: int
    recompute_lengths: tuple[int, ...]  # recompute passes timed (sequence lengths)
    step_contexts: tuple[int, ...]  # decode steps timed (cached positions)

    @property
    def passes(self) -> range:
        """The recompute generation's passes, by sequence length."""
        return range(self.prompt, self.prompt + self.new_tokens)

    @property
    def steps(self) -> range:
        """The cached generation's decode steps, by cached positions (after its prefill)."""
        return range(self.prompt, self.prompt + self.new_tokens - 1)


def plan(prompt: int, new_tokens: int, *, recompute_points: int, step_points: int) -> Plan:
    last_step = prompt + max(0, new_tokens - 2)
    return Plan(
        prompt,
        new_tokens,
        spaced(prompt, prompt + new_tokens - 1, recompute_points),
        spaced(prompt, last_step, step_points),
    )


def round_totals(points: Mapping, p: Plan) -> dict[str, list[float]]:
    """Per round in which every point was sampled: each whole generation (seconds), with
    and without its first token's pass (the prompt's prefill, the recompute's first pass)."""
    rounds = min(e.n for e in points.values())
    out: dict[str, list[float]] = {"recompute": [], "cached": [], "recompute_steps": [], "cached_steps": []}
    for r in range(rounds):
        passes = {n: points[("recompute", n)].samples_s[r] for n in p.recompute_lengths}
        steps = {c: points[("step", c)].samples_s[r] for c in p.step_contexts}
        decode = interpolated_sum(steps, p.steps) if p.new_tokens > 1 else 0.0
        out["recompute"].append(interpolated_sum(passes, p.passes))
        out["recompute_steps"].append(interpolated_sum(passes, p.passes[1:]))
        out["cached"].append(points[("prefill",)].samples_s[r] + decode)
        out["cached_steps"].append(decode)
    return out


def paired(num: list[float], den: list[float]) -> tuple[float, float | None, float | None]:
    """The median of the ratios round by round and that median's 95 % interval (no bound,
    None, where too few rounds give none: a check times each point once)."""
    ratios = [a / b for a, b in zip(num, den, strict=True)]
    low, high = median_interval(ratios)
    return statistics.median(ratios), *(None if math.isnan(b) else b for b in (low, high))


def generation_sweep(
    cfg, ctx: Context, ids: torch.Tensor, stream: list[int], roof: Roofline
) -> tuple[dict, Plan, dict, Roofline, dict]:
    """The sweep's points by key, the plan, the sweep's notes, ``roof`` (the calibration's)
    with the memory and operator terms of the sweep's own rounds, and those terms as
    values. ``stream``: the tokens the generation writes (the recompute passes run over
    the prompt and them)."""
    model = ctx.model.model
    probes = RoundProbes.of(model, ctx.device)
    p = plan(int(ids.shape[1]), cfg.new_tokens, recompute_points=cfg.recompute_points, step_points=cfg.step_points)
    seq = torch.cat([ids, torch.tensor([stream], dtype=ids.dtype, device=ids.device)], dim=1)
    token = ids[:, -1:]
    caches = {c: random_cache(model, batch=1, tokens=c) for c in p.step_contexts}
    points = {("prefill",): partial(prefill, model, ids)}
    points |= {("step", c): partial(decode_step, model, token, caches[c]) for c in p.step_contexts}
    # a pass at length n recomputes the first n tokens to produce token n + 1
    points |= {("recompute", n): partial(one_recompute_step, model, seq[:, :n]) for n in p.recompute_lengths}

    def before(key) -> None:
        if key[0] == "step":
            crop_cache(caches[key[1]], key[1])  # the previous step grew it by one

    ctx.log(
        f"  {cfg.new_tokens} tokens both ways, step by step: the prefill, {len(p.step_contexts)} decode steps and "
        f"{len(p.recompute_lengths)} recompute passes, interleaved (budget {cfg.generation_budget_s:.0f} s)"
    )
    sweep = interleaved(
        points | probes.points,
        device=ctx.device,
        seed=cfg.generation_seed,
        budget_s=cfg.generation_budget_s,
        target=cfg.target,
        min_rounds=cfg.generation_min_rounds,
        before=before,
        min_sample_s=BLOCK_S,
    )
    notes = {"generation_sweep": sweep.describe()}
    return measured(sweep.points), p, notes, probes.roofline(sweep, roof), probes.values("generation_round", sweep)


@dataclass(frozen=True)
class Predicted:
    """The roofline's prediction of each generation, whole and after its first token."""

    recompute: Prediction
    cached: Prediction
    recompute_steps: Prediction
    cached_steps: Prediction


def predicted(counts: ModelCounts, p: Plan, roof: Roofline, ops: Mapping[str, int]) -> Predicted:
    """Every step of both generations predicted (``ops``: the operators of a ``recompute``
    pass, a ``prefill`` and a decode ``step``)."""
    passes = [prefill_work(counts, prompt=n, ops=ops["recompute"], writes_cache=False).predict(roof) for n in p.passes]
    steps = [decode_work(counts, context=c, ops=ops["step"]).predict(roof) for c in p.steps]
    first = prefill_work(counts, prompt=p.prompt, ops=ops["prefill"]).predict(roof)
    return Predicted(
        recompute=summed(passes),
        cached=summed([first, *steps]),
        recompute_steps=summed(passes[1:]) if len(passes) > 1 else first,
        cached_steps=summed(steps) if steps else first,
    )


def _ratio_cells(name: str, triple: tuple[float, float, float]) -> dict[str, float]:
    return dict(zip((name, f"{name}_low", f"{name}_high"), triple, strict=True))


def identical_rows(cfg, totals: dict[str, list[float]], same: bool, pred: Predicted) -> tuple[list[dict], dict]:
    """The ``identical_output`` rows and the speed-up's values."""
    rows = []
    for name in ("recompute", "cached"):
        whole = Estimate.of(totals[name], cfg.target)
        rest = Estimate.of(totals[f"{name}_steps"], cfg.target)
        ones = dict.fromkeys(("speedup", "speedup_low", "speedup_high"), 1.0)
        rest_ones = dict.fromkeys(("steps_speedup", "steps_speedup_low", "steps_speedup_high"), 1.0)
        rows.append(
            {
                "method": name,
                "new_tokens": cfg.new_tokens,
                **whole.columns("total_ms"),
                **{
                    k: v
                    for k, v in whole.scaled(1 / cfg.new_tokens).columns("ms_per_token").items()
                    if not k.endswith("_samples")
                },
                **(
                    ones
                    if name == "recompute"
                    else _ratio_cells("speedup", paired(totals["recompute"], totals["cached"]))
                ),
                **{k: v for k, v in rest.columns("steps_ms").items() if not k.endswith("_samples")},
                **(
                    rest_ones
                    if name == "recompute"
                    else _ratio_cells("steps_speedup", paired(totals["recompute_steps"], totals["cached_steps"]))
                ),
                "tokens_identical": same if name == "cached" else True,
                **prediction_cells("total", whole, getattr(pred, name)),
            }
        )
    cached = rows[1]
    values = {
        **{k: cached[k] for k in ("speedup", "speedup_low", "speedup_high")},
        **{k: cached[k] for k in ("steps_speedup", "steps_speedup_low", "steps_speedup_high")},
        "speedup_predicted": pred.recompute.total.value / pred.cached.total.value,
        "steps_speedup_predicted": pred.recompute_steps.total.value / pred.cached_steps.total.value,
        "flops_ratio": pred.recompute.flops / pred.cached.flops,
        "timed_tokens": cfg.new_tokens,
        "recompute_samples_ms": [round(x * 1e3, 4) for x in totals["recompute"]],
        "cached_samples_ms": [round(x * 1e3, 4) for x in totals["cached"]],
    }
    return rows, values


def step_values(points: Mapping, p: Plan, counts: ModelCounts, roof: Roofline, ops: Mapping[str, int]) -> dict:
    """One recompute pass and one cached step from the middle of the generation, measured
    and decomposed by the roofline: the page's why-sentence reads these."""
    n = p.recompute_lengths[len(p.recompute_lengths) // 2]
    c = p.step_contexts[len(p.step_contexts) // 2]
    out = {"recompute_points": len(p.recompute_lengths), "step_points": len(p.step_contexts)}
    for name, key, work in (
        ("recompute_pass", ("recompute", n), prefill_work(counts, prompt=n, ops=ops["recompute"], writes_cache=False)),
        ("cached_step", ("step", c), decode_work(counts, context=c, ops=ops["step"])),
    ):
        out |= {f"{name}_tokens": key[1], **step_value_cells(name, points[key], work.predict(roof))}
    return out
