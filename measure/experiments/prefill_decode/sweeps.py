"""§2's two sweeps: the prefill at each prompt length, and the decode step at each cache
length, eager and compiled interleaved in one sweep (``sampling.interleaved``), every
floor divided by the run's one bandwidth (``ctx.calibration``), and every step set
against its prediction by the run's roofline (``measure/lab/step_work.py`` counts it),
whose bandwidth and cost per operator were timed in the sweep's own rounds
(``measure/lab/roofline_in_rounds.py``)."""

from __future__ import annotations

import math
from functools import partial

from measure.experiments.prefill_decode.tables import FLAT_UP_TO
from measure.lab.compiled_decode import compiled_decoder, compiled_step_at, compiler_unavailable, static_cache
from measure.lab.context import Context
from measure.lab.generation import cache_storage_bytes, crop_cache, decode_step, prefill, random_cache
from measure.lab.medians import Estimate, fraction_cells, ratio, ratio_cells
from measure.lab.prediction import no_prediction, prediction_cells
from measure.lab.roofline import Roofline
from measure.lab.roofline_in_rounds import BLOCK_S, RoundProbes, measured
from measure.lab.sampling import interleaved
from measure.lab.step_work import STATIC_CACHE_PASSES, ModelCounts, decode_work, prefill_work
from measure.lab.timing import timed


def _no_count(cells: dict) -> dict:
    return {k: v for k, v in cells.items() if not k.endswith("_samples")}


def prefill_sweep(cfg, ctx: Context, *, counts: ModelCounts, ops: int, roof: Roofline) -> tuple[list[dict], dict, dict]:
    """``ops``: the operators of one prefill (their number does not depend on the prompt's
    length); ``roof``: the calibration's, whose memory and operator terms the sweep's own
    rounds replace."""
    model = ctx.model.model
    ids = {p: ctx.prompt_ids(p) for p in cfg.prompt_lengths}
    probes = RoundProbes.of(model, ctx.device)
    ctx.log(f"  prefill at {len(ids)} prompt lengths, interleaved (budget {cfg.prefill_budget_s:.0f} s)")
    sweep = interleaved(
        {p: partial(prefill, model, ids[p]) for p in cfg.prompt_lengths} | probes.points,
        device=ctx.device,
        seed=cfg.prefill_seed,
        budget_s=cfg.prefill_budget_s,
        target=cfg.target,
        min_rounds=cfg.prefill_min_rounds,
        min_sample_s=BLOCK_S,
    )
    roof = probes.roofline(sweep, roof)
    rows = []
    for p, est in measured(sweep.points).items():
        work = prefill_work(counts, prompt=p, ops=ops)
        rows.append(
            {
                "prompt_tokens": p,
                **est.columns("time_ms"),
                **_no_count(est.scaled(1 / p).columns("ms_per_token")),
                "tokens_per_s": p / est.median_s,
                "flops": work.flops,
                "flops_per_byte": work.flops / counts.weight_bytes,
                "achieved_gflop_s": work.flops / est.median_s / 1e9,
                **prediction_cells("time", est, work.predict(roof)),
            }
        )
    first, before, last = rows[0], rows[-2] if len(rows) > 1 else rows[0], rows[-1]
    # the longest prompt's cost per token over the one before it: the two prefills per
    # token (scaled samples keep their rounds), paired round by round
    longest, previous = (sweep.points[r["prompt_tokens"]].scaled(1 / r["prompt_tokens"]) for r in (last, before))
    values = {
        "ttft_smallest_ms": first["time_ms"],
        "ttft_largest_ms": last["time_ms"],
        "prompt_smallest": first["prompt_tokens"],
        "prompt_largest": last["prompt_tokens"],
        "prompt_before_largest": before["prompt_tokens"],
        "ttft_growth": last["time_ms"] / first["time_ms"],
        **ratio_cells("per_token_change", longest, previous),
        "prefill_samples_ms": {str(p): est.samples_ms() for p, est in measured(sweep.points).items()},
        **probes.values("prefill_round", sweep),
    }
    return rows, values, {"prefill_sweep": sweep.describe()}


def _compiled_points(cfg, ctx: Context, token) -> tuple[dict, dict, dict]:
    """The compiled step's points (none where the compiler cannot run here), compiled
    before the sweep: each context's first call, and what it took."""
    model = ctx.model.model
    reason = compiler_unavailable(ctx.device.type)
    if reason:
        ctx.log(f"  {reason}: the compiled step is not measured")
        return {}, {}, {"compiled_available": False, "compiled_method": reason}
    decoder = compiled_decoder(model, ctx.device)
    points, first = {}, {}
    ctx.log("  compiling the decode step: about a minute on two CPU cores, once per run")
    for c in cfg.cache_lengths:
        cache = static_cache(model, batch=1, tokens=c)
        points[("compiled", c)] = partial(compiled_step_at, decoder, token, cache, c)
        _, first[c] = timed(points[("compiled", c)], device=ctx.device)
    return points, first, {"compiled_available": True, "compiled_method": decoder.method}


def decode_sweep(
    cfg, ctx: Context, *, counts: ModelCounts, ops: int, roof: Roofline
) -> tuple[list[dict], dict, dict, Roofline]:
    """``ops``: the operators of one eager step (counted at the smallest context);
    ``roof``: the calibration's. Returns the rows, values and notes, and the roofline the
    steps were set against: ``roof`` with the memory and operator terms of the sweep's own
    rounds."""
    model = ctx.model.model
    cal = ctx.calibration
    weight_bytes, weight_macs = counts.weight_bytes, counts.weight_macs
    floor = cal.floor_s(weight_bytes)  # seconds: the floor, and its 95 % range
    token = ctx.prompt_ids(1)
    caches = {c: random_cache(model, batch=1, tokens=c) for c in cfg.cache_lengths}
    cache_bytes = {c: cache_storage_bytes(caches[c]) for c in caches}  # before a step grows them
    points = {("eager", c): partial(decode_step, model, token, caches[c]) for c in cfg.cache_lengths}
    compiled, first, v_compiled = _compiled_points(cfg, ctx, token)
    probes = RoundProbes.of(model, ctx.device)

    def before(key) -> None:
        if key[0] == "eager":
            crop_cache(caches[key[1]], key[1])  # the previous step grew it by one

    ctx.log(f"  decode step at {len(caches)} cache lengths, eager and compiled interleaved")
    sweep = interleaved(
        points | compiled | probes.points,
        device=ctx.device,
        seed=cfg.decode_seed,
        budget_s=cfg.decode_budget_s,
        target=cfg.target,
        warmup=2,
        before=before,
        min_sample_s=BLOCK_S,
    )
    roof = probes.roofline(sweep, roof)
    rows, predicted = [], {}
    for c in cfg.cache_lengths:
        est = sweep.points[("eager", c)]
        kv = cache_bytes[c]
        comp = sweep.points.get(("compiled", c))
        eager = decode_work(counts, context=c, ops=ops)
        predicted[c] = eager.predict(roof)
        attention = counts.attention_macs(1, c + 1)
        rows.append(
            {
                "cache_tokens": c,
                **est.columns("step_ms"),
                "tokens_per_s": 1.0 / est.median_s,
                "cache_bytes": kv,
                "floor_ms": floor[0] * 1e3,
                **fraction_cells("fraction_of_floor", floor, est),
                "floor_with_cache_ms": cal.floor_s(weight_bytes + kv)[0] * 1e3,
                "attention_macs": attention,
                "attention_share": attention / weight_macs,
                "flops_per_byte": eager.flops / (weight_bytes + kv),
                **prediction_cells("step", est, predicted[c]),
                **_compiled_cells(comp, est, floor),
                **_compiled_prediction(comp, decode_work(counts, context=c, cache_passes=STATIC_CACHE_PASSES), roof),
            }
        )
    compiling = sum(max(0.0, first[c] - sweep.points[("compiled", c)].median_s) for c in first)
    values = _decode_values(cfg, rows, sweep, v_compiled, compile_s=compiling if first else None)
    lo, hi = flat_range(rows, FLAT_UP_TO)
    first, last = predicted[lo["cache_tokens"]].total, predicted[hi["cache_tokens"]].total
    # each end of the predicted rise from the same end of both predictions (one bandwidth)
    ends = sorted(b / a - 1 for a, b in ((first.value, last.value), (first.low, last.low), (first.high, last.high)))
    values |= {
        "step_rise_predicted": last.value / first.value - 1,
        "step_rise_predicted_low": ends[0],
        "step_rise_predicted_high": ends[-1],
        "cache_share": counts.kv_bytes_per_token / counts.weight_bytes,
        "attention_added": (hi["attention_macs"] - lo["attention_macs"]) / (weight_macs + lo["attention_macs"]),
        "cache_bytes_added": (hi["cache_bytes"] - lo["cache_bytes"]) / (weight_bytes + lo["cache_bytes"]),
        "bandwidth_gb_s": cal.bandwidth_bytes_per_s / 1e9,
        **{name: s * 1e3 for name, s in zip(("floor_ms", "floor_low_ms", "floor_high_ms"), floor, strict=True)},
        **probes.values("decode_round", sweep),
    }
    return rows, values, {"decode_sweep": sweep.describe()}, roof


def _compiled_cells(comp: Estimate | None, eager: Estimate, floor: tuple[float, float, float]) -> dict:
    names = ("compiled_ms", "compiled_low_ms", "compiled_high_ms", "compiled_samples")
    fraction = ("compiled_fraction_of_floor", "compiled_fraction_of_floor_low", "compiled_fraction_of_floor_high")
    speedup = ("compiled_speedup", "compiled_speedup_low", "compiled_speedup_high")
    if comp is None:
        return dict.fromkeys((*names, *fraction, *speedup))
    return {
        **comp.columns("compiled_ms"),
        **fraction_cells("compiled_fraction_of_floor", floor, comp),
        **ratio_cells("compiled_speedup", eager, comp),
    }


def _compiled_prediction(comp: Estimate | None, work, roof: Roofline) -> dict:
    """The compiled step's prediction: its static cache read once, its operators not
    counted (fused into kernels the dispatch mode does not see). Empty with no compiler."""
    if comp is None:
        return no_prediction("compiled")
    return prediction_cells("compiled", comp, work.predict(roof))


def flat_range(rows: list[dict], up_to: int) -> tuple[dict, dict]:
    """The rows of the smallest context and of the largest up to ``up_to``."""
    within = [r for r in rows if r["cache_tokens"] <= up_to] or rows[:1]
    return within[0], within[-1]


def _decode_values(cfg, rows: list[dict], sweep, v_compiled: dict, *, compile_s: float | None) -> dict:
    first, last = rows[0], rows[-1]
    lo, hi = flat_range(rows, FLAT_UP_TO)
    doublings = math.log2(hi["cache_tokens"] / lo["cache_tokens"])
    # the two steps were sampled in the same rounds: their ratio is paired, so drift cancels
    rise = ratio(sweep.points[("eager", hi["cache_tokens"])], sweep.points[("eager", lo["cache_tokens"])])
    per_doubling = [r ** (1 / doublings) - 1 if doublings else 0.0 for r in rise]
    compiled = v_compiled["compiled_available"]
    speedups = [r["compiled_speedup"] for r in rows] if compiled else []
    return {
        "cache_smallest": first["cache_tokens"],
        "cache_largest": last["cache_tokens"],
        "step_smallest_ms": first["step_ms"],
        "step_largest_ms": last["step_ms"],
        "tok_s_smallest": first["tokens_per_s"],
        "tok_s_largest": last["tokens_per_s"],
        "fraction_smallest": first["fraction_of_floor"],
        "fraction_largest": last["fraction_of_floor"],
        "flat_up_to": hi["cache_tokens"],
        "flat_doublings": doublings,
        "flat_spread": max(r["step_ms"] for r in rows if r["cache_tokens"] <= hi["cache_tokens"])
        / min(r["step_ms"] for r in rows if r["cache_tokens"] <= hi["cache_tokens"]),
        "step_rise": rise[0] - 1,
        "step_rise_low": rise[1] - 1,
        "step_rise_high": rise[2] - 1,
        "rise_per_doubling": per_doubling[0],
        "rise_per_doubling_low": per_doubling[1],
        "rise_per_doubling_high": per_doubling[2],
        "step_growth": last["step_ms"] / first["step_ms"],
        "decode_samples_ms": {str(c): sweep.points[("eager", c)].samples_ms() for c in cfg.cache_lengths},
        **v_compiled,
        "compile_s": compile_s,
        "compiled_fraction_smallest": first["compiled_fraction_of_floor"],
        "compiled_fraction_largest": last["compiled_fraction_of_floor"],
        "compiled_speedup_smallest": first["compiled_speedup"],
        "compiled_speedup_largest": last["compiled_speedup"],
        "compiled_speedup_best": max(speedups) if speedups else None,
        "compiled_speedup_worst": min(speedups) if speedups else None,
        "compiled_worst_cache": min(rows, key=lambda r: r["compiled_speedup"])["cache_tokens"] if speedups else None,
        "compiled_samples_ms": {
            str(c): sweep.points[("compiled", c)].samples_ms() for c in cfg.cache_lengths if compiled
        },
    }
