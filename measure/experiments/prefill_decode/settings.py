"""Which setting brings a decode step closest to its floor on this device: the eager step
(batch 1, the smallest context) with every thread and with one, in the run's dtype and in
the other one (bfloat16 on a CPU, float32 on a GPU), and the compiled step, all sampled in
one interleaved sweep (``sampling.interleaved``).

Each setting's floor is its own weight bytes (in its dtype) over the run's one bandwidth
(``ctx.calibration``); its fraction of the floor, and its speed against the run's own
setting (every thread, the run's dtype, eager), come with the interval the two timings'
intervals (and the bandwidth's) give. The thread count is set untimed before each call
(``before``) and put back after the sweep.

Each setting is also set against its prediction by the run's roofline, in its dtype (the
calibration probes the other dtype's ceilings too), with the bandwidth and the cost per
operator the sweep's own rounds gave (``measure/lab/roofline_in_rounds.py``). One thread
moves fewer bytes per second than all of them: the sweep times, beside the settings and in
the same rounds, one thread copying a buffer as large as the weights, and the one-thread
setting is predicted with that bandwidth (``one_thread_copy``).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from functools import partial

import torch

from measure.lab.bandwidth import copier, weight_bytes
from measure.lab.compiled_decode import compiled_decoder, compiled_step_at, compiler_unavailable, static_cache
from measure.lab.context import Context
from measure.lab.generation import crop_cache, decode_step, random_cache
from measure.lab.medians import fraction_cells, ratio_cells
from measure.lab.op_counting import count_ops
from measure.lab.prediction import no_prediction, prediction_cells, step_value_cells
from measure.lab.roofline import Rate, Roofline
from measure.lab.roofline_in_rounds import BLOCK_S, PROBES, RoundProbes
from measure.lab.sampling import interleaved
from measure.lab.step_work import STATIC_CACHE_PASSES, decode_work, model_counts

_NAMES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}


def other_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype set beside the run's: bfloat16 beside float32 (a CPU), float32 beside
    a GPU's float16 or bfloat16."""
    return torch.bfloat16 if dtype == torch.float32 else torch.float32


def setting_points(run_threads: int) -> list[tuple[bool, str, int]]:
    """The settings measured, as (compiled, dtype, threads), the run's own first:
    ``"run"`` and ``"other"`` stand for the two dtypes. One thread is left out where the
    run has only one."""
    points = [(False, "run", run_threads), (False, "other", run_threads)]
    if run_threads > 1:
        points.append((False, "run", 1))
    return [*points, (True, "run", run_threads)]


ONE_THREAD_COPY = ("copy", "", 1)  # the sweep's point that copies the weights' bytes on one thread


def setting_sweep(cfg, ctx: Context) -> tuple[list[dict], dict, dict]:
    """The ``settings`` rows, their values and the sweep's notes."""
    model, device, cal = ctx.model.model, ctx.device, ctx.calibration
    c = cfg.cache_lengths[0]
    threads = torch.get_num_threads()
    models = {"run": model, "other": copy.deepcopy(model).to(other_dtype(ctx.dtype))}
    dtypes = {"run": ctx.dtype, "other": other_dtype(ctx.dtype)}
    caches = {k: random_cache(m, batch=1, tokens=c) for k, m in models.items()}
    token = ctx.prompt_ids(1)
    reason = compiler_unavailable(device.type)
    points, wanted = {}, setting_points(threads)
    for key in wanted:
        compiled, dtype, _ = key
        if not compiled:
            points[key] = partial(decode_step, models[dtype], token, caches[dtype])
        elif not reason:
            decoder, cache = compiled_decoder(model, device), static_cache(model, batch=1, tokens=c)
            points[key] = partial(compiled_step_at, decoder, token, cache, c)

    one_thread = threads > 1 and device.type == "cpu"
    if one_thread:
        points[ONE_THREAD_COPY] = copier(copy_bytes=weight_bytes(model), device=device, copies_per_sample=1)
    probes = RoundProbes.of(model, device)
    points |= probes.points

    def before(key) -> None:
        if key in PROBES:  # the run's own threads
            torch.set_num_threads(threads)
            return
        torch.set_num_threads(key[2])
        if key[0] is False:
            crop_cache(caches[key[1]], c)  # the previous step grew it by one

    ctx.log(
        f"  settings: the step at C = {c}, {len(points)} settings interleaved (budget {cfg.settings_budget_s:.0f} s)"
    )
    try:
        sweep = interleaved(
            points,
            device=device,
            seed=cfg.settings_seed,
            budget_s=cfg.settings_budget_s,
            target=cfg.target,
            warmup=2,
            before=before,
            min_sample_s=BLOCK_S,
        )
    finally:
        torch.set_num_threads(threads)
    base = sweep.points[wanted[0]]
    roofs = {threads: probes.roofline(sweep, cal.roofline())}
    if one_thread:
        copied = sweep.points[ONE_THREAD_COPY]
        moved = 2 * weight_bytes(model)  # a copy reads its bytes once and writes them once
        bw = Rate(moved / copied.median_s, moved / copied.high_s, moved / copied.low_s)
        roofs[1] = replace(roofs[threads], bandwidth=bw)
    ops = {k: count_ops(partial(decode_step, m, token, caches[k])) for k, m in models.items()}
    for k in caches:
        crop_cache(caches[k], c)
    rows, predictions = [], {}
    for key in wanted:
        predictions[key] = _predicted(key, sweep.points.get(key), models, ops, roofs, c)
        row = _row(key, sweep.points.get(key), base, models, dtypes, cal)
        est = sweep.points.get(key)
        rows.append(
            row | (prediction_cells("step", est, predictions[key]) if predictions[key] else no_prediction("step"))
        )
    best = max((r for r in rows if r["step_ms"] is not None), key=lambda r: r["fraction_of_floor"])
    values = {
        "settings_cache_tokens": c,
        "settings_best_compiled": best["compiled"],
        "settings_best_dtype": best["dtype"],
        "settings_best_threads": best["threads"],
        "settings_best_fraction": best["fraction_of_floor"],
        "settings_best_fraction_low": best["fraction_of_floor_low"],
        "settings_best_fraction_high": best["fraction_of_floor_high"],
        **_one_thread_values(roofs.get(1)),
        **probes.values("settings_round", sweep),
        "settings_other_dtype": rows[1]["dtype"],
        **step_value_cells("settings_other", sweep.points.get(wanted[1]), predictions[wanted[1]]),
        **step_value_cells(
            "settings_one_thread",
            sweep.points.get(wanted[2]) if threads > 1 else None,
            predictions[wanted[2]] if threads > 1 else None,
        ),
    }
    return rows, values, {"settings_sweep": sweep.describe()}


def _row(key, est, base, models: dict, dtypes: dict, cal) -> dict:
    """One setting's row; its timings empty where it was not measured (no compiler)."""
    compiled, dtype, threads = key
    w = weight_bytes(models[dtype])
    floor = cal.floor_s(w)
    row = {
        "compiled": compiled,
        "dtype": _NAMES.get(dtypes[dtype], str(dtypes[dtype]).removeprefix("torch.")),
        "threads": threads,
        "step_ms": None,
        "step_low_ms": None,
        "step_high_ms": None,
        "step_samples": None,
        "weight_bytes": w,
        "floor_ms": floor[0] * 1e3,
        "fraction_of_floor": None,
        "fraction_of_floor_low": None,
        "fraction_of_floor_high": None,
        "speedup": None,
        "speedup_low": None,
        "speedup_high": None,
    }
    if est is not None:
        row |= est.columns("step_ms")
        row |= fraction_cells("fraction_of_floor", floor, est)
        row |= ratio_cells("speedup", base, est)
    return row


def _predicted(key, est, models: dict, ops: dict, roofs: dict, context: int):
    """The setting's prediction: its dtype's ceilings, its threads' bandwidth, its own
    operators (none counted for the compiled step, whose static cache is read once); None
    where it was not measured or its dtype was not probed."""
    compiled, dtype, threads = key
    counts = model_counts(models[dtype])
    roof: Roofline = roofs.get(threads, roofs[max(roofs)])
    if est is None or counts.dtype not in roof.ceilings:
        return None
    if compiled:
        return decode_work(counts, context=context, cache_passes=STATIC_CACHE_PASSES).predict(roof)
    return decode_work(counts, context=context, ops=ops[dtype]).predict(roof)


def _one_thread_values(roof: Roofline | None) -> dict:
    names = ("one_thread_gb_s", "one_thread_low_gb_s", "one_thread_high_gb_s")
    if roof is None:
        return dict.fromkeys(names)
    bw = roof.bandwidth
    return dict(zip(names, (bw.value / 1e9, bw.low / 1e9, bw.high / 1e9), strict=True))
