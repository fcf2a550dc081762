"""§4 Batching.

Measures, on the run's model:

* ``sweep``: one decode step for B requests at once, each holding a cache of 64
  positions: step latency, throughput (B / step), both relative to B = 1 and to the
  previous batch size; the knee (``find_knee``). A batch that runs out of device memory
  is recorded as such and the sweep stops there (``sweep``).
  Beside each, the floor (the weights plus the B caches, over the run's one bandwidth,
  its calibration: ``ctx.calibration``) and the same step compiled (static cache and
  torch.compile, CUDA graphs on a GPU; measure/lab/compiled_decode.py). Every batch,
  eager and compiled, is timed in one interleaved sweep (measure/lab/sampling.py): each
  median with its 95 % interval and sample count.
* ``step_costs``: the same measurement at every occupancy from 1 to the number of
  slots, the per-step costs the simulations below use (their medians; the ratios of the
  two policies also come simulated with every cost at its interval's low and high bound).
* ``prefill_costs``: one prefill at a few prompt lengths, interleaved: the price of
  admitting a request under arrivals.

Simulates, with those measured costs (measure/sim/scheduler.py, measure/sim/arrivals.py,
measure/sim/paged_kv.py, rows built in measure/sim/batching_sim.py):

* ``workload``: 64 requests with skewed output lengths, a fixed seeded sample.
* ``policies`` / ``timeline``: static vs continuous batching of that workload on 8
  slots: total time, throughput, latency percentiles, slot utilisation; and who held
  which slot when.
* ``paged`` / ``memory_steps``: the KV memory of the continuous schedule under a
  contiguous per-request reservation, fixed-size blocks with a block table, and blocks
  with a shared system prompt: reserved vs stored bytes, the waste.

The package: ``tables`` declares what is written, ``config`` holds the parameters,
``steps`` measures the decode step at each batch size, ``sweep`` runs the sweep (its
stops, its knee, its rows); the rest is here.

Writes ``site_data/batching/``. Alone: ``python -m measure run --only batching``.
"""

from __future__ import annotations

import statistics
from functools import partial

import torch

from measure.experiments.batching.config import Config
from measure.experiments.batching.steps import Steps, floor_columns, measure_steps
from measure.experiments.batching.sweep import step_costs, sweep_rows
from measure.experiments.batching.tables import ARRIVAL_RATIOS, POLICY_RATIOS, TABLES
from measure.experiments.batching.values import VALUES
from measure.lab.bandwidth import weight_bytes
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import prefill
from measure.lab.medians import MIN_ROUNDS, Estimate
from measure.lab.sampling import interleaved
from measure.sim.batching_sim import arrival_rows, memory_rows, policy_rows
from measure.sim.scheduler import skewed_lengths
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "Batching"


def _workload(cfg: Config) -> tuple[list[int], list[dict], dict]:
    lengths = skewed_lengths(cfg.requests, median=cfg.output_median, sigma=cfg.output_sigma, seed=cfg.workload_seed)
    rows = [{"request": i, "prompt_tokens": cfg.prompt_tokens, "output_tokens": n} for i, n in enumerate(lengths)]
    values = {
        "requests": cfg.requests,
        "slots": cfg.slots,
        "output_median": statistics.median(lengths),
        "output_max": max(lengths),
        "output_min": min(lengths),
        "output_total": sum(lengths),
        "output_top_share": sum(sorted(lengths)[-cfg.requests // 10 :]) / sum(lengths),
    }
    return lengths, rows, values


def _prefill_costs(cfg: Config, ctx: Context) -> tuple[list[dict], Estimate, dict]:
    """One prefill of P random tokens, alone, at each P (its time does not depend on which
    tokens), the lengths interleaved: rows of ``prefill_costs``, the estimate at the
    workload's prompt, and the sweep's notes."""
    model = ctx.model.model
    ids = {}
    for p in cfg.prefill_lengths:
        g = torch.Generator().manual_seed(p)
        ids[p] = torch.randint(0, ctx.model.config.vocab_size, (1, p), generator=g).to(ctx.device)
    ctx.log(f"  prefill at {len(ids)} prompt lengths, interleaved (budget {cfg.prefill_budget_s:g} s)")
    sweep = interleaved(
        {p: partial(prefill, model, ids[p]) for p in cfg.prefill_lengths},
        device=ctx.device,
        seed=cfg.prefill_seed,
        budget_s=cfg.prefill_budget_s,
        target=cfg.target,
    )
    rows = [{"prompt_tokens": p, **est.columns("prefill_ms")} for p, est in sweep.points.items()]
    return rows, sweep.points[cfg.prompt_tokens], {"prefill_sweep": sweep.describe()}


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run at the fewest rounds (six, a warm-up, and each batch's
    preparing call), for the estimate printed before it starts."""
    batches = set(cfg.batch_sizes) | set(range(1, cfg.slots + 1))
    # Eager and compiled at every batch. B = 1 reuses the compilation of §2 when it ran
    # first in the same run (the GPU command's order); the batch becoming dynamic costs one.
    # The sweep's extension past its sizes is bounded by its own budget, not counted here.
    calls = MIN_ROUNDS + 2
    return ForwardPasses(
        prefill_tokens=sum(cfg.prefill_lengths) * (MIN_ROUNDS + 1),
        decode_steps=2 * len(batches) * calls,
        compiles=1,
    )


def _at(costs: dict[int, Estimate], bound: str) -> dict[int, float]:
    """The step costs in seconds at their medians, or every one at its interval's bound."""
    return {k: getattr(e, f"{bound}_s") for k, e in costs.items()}


def _ranges(median: dict, low: dict, high: dict, names) -> dict:
    """Each ratio of ``names`` with ``_low`` and ``_high``: the smallest and the largest of
    the ratio simulated with every cost at its median, at its low and at its high bound."""
    out = {}
    for n in names:
        three = (median[n], low[n], high[n])
        out |= {n: median[n], f"{n}_low": min(three), f"{n}_high": max(three)}
    return out


def run(cfg: Config, ctx: Context) -> Result:
    if ctx.calibration is None:
        raise ValueError("batching divides its floors by the run's calibration: run it through the runner")
    cal = ctx.calibration
    steps, bytes_per_token, v0, notes = measure_steps(cfg, ctx)
    results = {b: r.eager if isinstance(r, Steps) else r for b, r in steps.items()}
    swept = sorted(set(cfg.batch_sizes) | {b for b in results if b > max(cfg.batch_sizes, default=0)})
    sweep_table, v1 = sweep_rows(swept, cfg.cache_tokens, results)
    weights = weight_bytes(ctx.model.model)
    per_request = cfg.cache_tokens * bytes_per_token

    def floor_s(b: int) -> tuple[float, float, float]:
        return cal.floor_s(weights + b * per_request)

    v0 |= floor_columns(sweep_table, steps, floor_s=floor_s)
    v0 |= {"bandwidth_gb_s": cal.bandwidth_bytes_per_s / 1e9, "weight_bytes": weights}
    costs = step_costs(results, cfg.slots)
    costs_table = [{"occupancy": k, **e.columns("step_ms")} for k, e in costs.items()]
    lengths, workload, v2 = _workload(cfg)
    ctx.log(f"  simulating static and continuous batching of {len(lengths)} requests on {cfg.slots} slots")
    policies, timeline, v3, continuous = policy_rows(lengths, cfg.slots, _at(costs, "median"))
    bounds = {b: policy_rows(lengths, cfg.slots, _at(costs, b))[2] for b in ("low", "high")}
    v3 |= _ranges(v3, bounds["low"], bounds["high"], POLICY_RATIOS)
    prefill_table, prefill_est, n_prefill = _prefill_costs(cfg, ctx)
    loads = ", ".join(f"{x:g}" for x in cfg.loads)
    ctx.log(f"  simulating the same requests arriving over time, at {loads} of the estimated capacity")

    def arrive(bound: str):
        prefill_s = getattr(prefill_est, f"{bound}_s")
        return arrival_rows(
            lengths, cfg.slots, _at(costs, bound), prefill_s=prefill_s, loads=cfg.loads, seed=cfg.arrival_seed
        )

    arrivals, ratios, arrival_requests, v5 = arrive("median")
    low, high = arrive("low")[1], arrive("high")[1]
    ratios = [_ranges(m, lo, hi, ARRIVAL_RATIOS) | m for m, lo, hi in zip(ratios, low, high, strict=True)]
    ratios = [{k: r[k] for k in _ARRIVAL_ORDER} for r in ratios]
    v5["knee_confirmations"] = cfg.knee_confirmations
    paged, memory_steps, v4 = memory_rows(
        lengths,
        continuous,
        prompt_tokens=cfg.prompt_tokens,
        shared_prefix_tokens=cfg.shared_prefix_tokens,
        block_tokens=cfg.block_tokens,
        bytes_per_token=bytes_per_token,
    )
    v4 |= {
        "kv_bytes_per_token": bytes_per_token,
        "prompt_tokens": cfg.prompt_tokens,
        "shared_prefix_tokens": cfg.shared_prefix_tokens,
        "block_tokens": cfg.block_tokens,
    }
    tables = {
        "sweep": sweep_table,
        "step_costs": costs_table,
        "workload": workload,
        "policies": policies,
        "timeline": timeline,
        "prefill_costs": prefill_table,
        "arrivals": arrivals,
        "arrival_ratios": ratios,
        "arrival_requests": arrival_requests,
        "paged": paged,
        "memory_steps": memory_steps,
    }
    return Result(tables=tables, values={**v0, **v1, **v2, **v3, **v4, **v5}, notes={**notes, **n_prefill})


_ARRIVAL_ORDER = (
    "load",
    "rate_req_s",
    *(f"{n}{s}" for n in ARRIVAL_RATIOS for s in ("", "_low", "_high")),
)
