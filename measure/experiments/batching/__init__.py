"""§4 Batching.

Measures, on the run's model:

* ``sweep``: one decode step for B requests at once, each holding a cache of 64
  positions: step latency, throughput (B / step), both relative to B = 1; the knee
  (``find_knee``). A batch that runs out of device memory is recorded as such and the
  sweep stops there (``sweep``). Beside each, the floor (the weights plus the B caches,
  over the run's one bandwidth, its calibration: ``ctx.calibration``), the same step
  compiled (static cache and torch.compile, CUDA graphs on a GPU;
  measure/lab/compiled_decode.py), and both steps' predictions by the run's roofline
  from what the eager step did, counted (``decomposition``). Every batch, eager and
  compiled, is timed in one interleaved sweep (measure/lab/sampling.py): each median
  with its 95 % interval and sample count.
* ``growths``: each batch against the one before it, the ratio paired round by round.
* ``step_costs``: the same measurement at every occupancy from 1 to the number of
  slots, the per-step costs the simulations below use (their medians; each round's
  costs for the ratios' ranges: ``simulations``).
* ``breakdown``: the step at B = 1 and at a larger batch, and a prefill of as many
  tokens, profiled by group of operators (``decomposition``).
* ``prefill_costs``: one prefill at a few prompt lengths, interleaved: the price of
  admitting a request under arrivals, with its prediction.

Simulates, with those measured costs (measure/sim/scheduler.py, measure/sim/arrivals.py,
measure/sim/paged_kv.py, rows built in measure/sim/batching_sim.py):

* ``workload``: 64 requests with skewed output lengths, a fixed seeded sample.
* ``policies`` / ``timeline``: static vs continuous batching of that workload on 8
  slots: total time, throughput, latency percentiles, slot utilisation; and who held
  which slot when.
* ``arrivals`` / ``arrival_ratios`` / ``arrival_requests``: the same requests arriving
  as a Poisson process at fractions of static batching's capacity, the lower one.
* ``paged`` / ``memory_steps``: the KV memory of the continuous schedule under a
  contiguous per-request reservation, fixed-size blocks with a block table, and blocks
  with a shared system prompt: reserved vs stored bytes, the waste.

The package: ``tables`` and ``sim_tables`` declare what is written, ``config`` holds the
parameters, ``steps`` measures the decode step at each batch size, ``sweep`` runs the
sweep (its stops, its knee, its rows), ``decomposition`` sets the steps against the
roofline and profiles, ``simulations`` runs the schedules; the rest is here.

Writes ``site_data/batching/``. Alone: ``python -m measure run --only batching``.
"""

from __future__ import annotations

from functools import partial

import torch

from measure.experiments.batching.config import Config
from measure.experiments.batching.decomposition import (
    arithmetic_cells,
    breakdown,
    cost_rows,
    predicted_sweep,
    step_cells,
)
from measure.experiments.batching.simulations import resimulate, simulations
from measure.experiments.batching.steps import floor_columns, measure_steps
from measure.experiments.batching.sweep import step_costs, sweep_rows
from measure.experiments.batching.tables import TABLES
from measure.experiments.batching.values import VALUES
from measure.lab.bandwidth import weight_bytes
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import prefill
from measure.lab.medians import MIN_ROUNDS
from measure.lab.sampling import interleaved
from measure.lab.step_counts import count_step, weight_storages
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "resimulate", "run", "work"]

TITLE = "Batching"


def _prefill_costs(cfg: Config, ctx: Context, roofline, dtype: str) -> tuple[list[dict], dict, dict]:
    """One prefill of P random tokens, alone, at each P (its time does not depend on which
    tokens), the lengths interleaved, each counted once before: rows of
    ``prefill_costs`` (with each prefill's prediction), the estimate at each P, and the
    sweep's notes."""
    model = ctx.model.model
    ids, counts, weights = {}, {}, weight_storages(model)
    for p in cfg.prefill_lengths:
        g = torch.Generator().manual_seed(p)
        ids[p] = torch.randint(0, ctx.model.config.vocab_size, (1, p), generator=g).to(ctx.device)
        counts[p] = count_step(partial(prefill, model, ids[p]), weights=weights)
    ctx.log(f"  prefill at {len(ids)} prompt lengths, interleaved (budget {cfg.prefill_budget_s:g} s)")
    sweep = interleaved(
        {p: partial(prefill, model, ids[p]) for p in cfg.prefill_lengths},
        device=ctx.device,
        seed=cfg.prefill_seed,
        budget_s=cfg.prefill_budget_s,
        target=cfg.target,
    )
    rows = [
        {
            "prompt_tokens": p,
            **est.columns("prefill_ms"),
            **arithmetic_cells(counts[p], est, roofline, rows=p, dtype=dtype),
            **step_cells("prefill", est, counts[p], roofline, rows=p, dtype=dtype),
        }
        for p, est in sweep.points.items()
    ]
    return rows, sweep.points, {"prefill_sweep": sweep.describe()}


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run at the fewest rounds (six, a warm-up, and each batch's
    preparing and counting calls), for the estimate printed before it starts."""
    batches = set(cfg.batch_sizes) | set(range(1, cfg.slots + 1))
    # Eager and compiled at every batch. B = 1 reuses the compilation of §2 when it ran
    # first in the same run (the GPU command's order); the batch becoming dynamic costs one.
    # The sweep's extension past its sizes is bounded by its own budget, not counted here.
    calls = MIN_ROUNDS + 2
    profiled = MIN_ROUNDS + 1  # the profiled passes: two steps and a prefill, a warm-up and six rounds
    return ForwardPasses(
        prefill_tokens=sum(cfg.prefill_lengths) * (MIN_ROUNDS + 2) + cfg.profiled_batch * profiled,
        decode_steps=(2 * calls + 1) * len(batches) + 2 * profiled,
        compiles=1,
    )


def run(cfg: Config, ctx: Context) -> Result:
    if ctx.calibration is None:
        raise ValueError("batching divides its floors by the run's calibration: run it through the runner")
    cal, dtype = ctx.calibration, str(ctx.dtype).removeprefix("torch.")
    roofline = cal.roofline()
    steps, bytes_per_token, v0, notes = measure_steps(cfg, ctx)
    swept = sorted(set(cfg.batch_sizes) | {b for b in steps if b > max(cfg.batch_sizes, default=0)})
    sweep_table, growths, v1 = sweep_rows(swept, cfg.cache_tokens, steps)
    weights = weight_bytes(ctx.model.model)
    per_request = cfg.cache_tokens * bytes_per_token

    def floor_s(b: int) -> tuple[float, float, float]:
        return cal.floor_s(weights + b * per_request)

    v0 |= floor_columns(sweep_table, steps, floor_s=floor_s)
    v0 |= predicted_sweep(sweep_table, steps, roofline, dtype=dtype, fused_bytes=lambda b: weights + b * per_request)
    v0 |= {"bandwidth_gb_s": cal.bandwidth_bytes_per_s / 1e9, "weight_bytes": weights}
    costs = step_costs(steps, cfg.slots)
    costs_table = cost_rows(costs, roofline, dtype=dtype)
    prefill_table, prefills, n_prefill = _prefill_costs(cfg, ctx, roofline, dtype)
    parts, v6, n_parts = breakdown(cfg, ctx, prefills[cfg.profiled_batch], steps[cfg.profiled_batch].eager)
    simulated, v2 = simulations(cfg, ctx, costs, prefills[cfg.prompt_tokens], bytes_per_token)
    tables = {
        "sweep": sweep_table,
        "growths": growths,
        "step_costs": costs_table,
        "breakdown": parts,
        "prefill_costs": prefill_table,
        **simulated,
    }
    notes |= n_prefill | n_parts
    return Result(tables=tables, values={**v0, **v1, **v2, **v6}, notes=notes)
