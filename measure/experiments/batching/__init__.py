"""§4 Batching.

Measures, on the run's model:

* ``sweep``: one decode step for B requests at once, each holding a cache of 64
  positions: step latency, throughput (B / step), both relative to B = 1 and to the
  previous batch size; the knee (``find_knee``). A batch that runs out of device memory
  is recorded as such and the sweep stops there (``sweep``).
  Beside each, the floor (the weights plus the B caches, over the memory bandwidth
  measured by the same copy as §2) and the same step compiled (static cache and
  torch.compile, CUDA graphs on a GPU; measure/lab/compiled_decode.py).
* ``step_costs``: the same measurement at every occupancy from 1 to the number of
  slots, the per-step costs the simulations below use.

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

import torch

from measure.experiments.batching.config import Config
from measure.experiments.batching.steps import Steps, floor_columns, measure_steps
from measure.experiments.batching.sweep import step_costs, sweep_rows
from measure.experiments.batching.tables import TABLES, VALUES
from measure.lab.bandwidth import copy_bandwidth, weight_bytes
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import prefill
from measure.lab.timing import time_call
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


def _prefill_costs(cfg: Config, ctx: Context) -> tuple[list[dict], float]:
    """One prefill of P random tokens, alone, at each P (its time does not depend on which
    tokens): rows of ``prefill_costs``, and the seconds at the workload's prompt."""
    model = ctx.model.model
    rows, at_prompt = [], None
    for p in ctx.progress(cfg.prefill_lengths, "prefill against prompt length"):
        g = torch.Generator().manual_seed(p)
        ids = torch.randint(0, ctx.model.config.vocab_size, (1, p), generator=g).to(ctx.device)
        t = time_call(lambda ids=ids: prefill(model, ids), device=ctx.device, warmup=cfg.warmup, repeats=cfg.repeats)
        rows.append({"prompt_tokens": p, "prefill_ms": t.median_ms, "spread_ms": t.spread_ms})
        if p == cfg.prompt_tokens:
            at_prompt = t.median_s
    return rows, at_prompt


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run, for the estimate printed before it starts."""
    batches = set(cfg.batch_sizes) | set(range(1, cfg.slots + 1))
    # Eager and compiled at every batch. B = 1 reuses the compilation of §2 when it ran
    # first in the same run (the GPU command's order); the batch becoming dynamic costs one.
    # The sweep's extension past its sizes is bounded by its own budget, not counted here.
    calls = cfg.warmup + cfg.repeats
    return ForwardPasses(
        prefill_tokens=sum(cfg.prefill_lengths) * calls, decode_steps=2 * len(batches) * calls, compiles=1
    )


def run(cfg: Config, ctx: Context) -> Result:
    steps, bytes_per_token, v0 = measure_steps(cfg, ctx)
    results = {b: r.eager if isinstance(r, Steps) else r for b, r in steps.items()}
    swept = sorted(set(cfg.batch_sizes) | {b for b in results if b > max(cfg.batch_sizes, default=0)})
    sweep_table, v1 = sweep_rows(swept, cfg.cache_tokens, results)
    ctx.log(f"  memory bandwidth: {cfg.copy_repeats} samples of {cfg.copy_bytes >> 20} MiB copies")
    bw = copy_bandwidth(copy_bytes=cfg.copy_bytes, device=ctx.device, repeats=cfg.copy_repeats).bytes_per_s
    weights = weight_bytes(ctx.model.model)
    per_request = cfg.cache_tokens * bytes_per_token
    v0 |= floor_columns(sweep_table, steps, floor_ms=lambda b: (weights + b * per_request) / bw * 1e3)
    v0 |= {"bandwidth_gb_s": bw / 1e9, "weight_bytes": weights}
    costs = step_costs(results, cfg.slots)
    costs_table = [{"occupancy": k, "step_ms": results[k].median_ms, "spread_ms": results[k].spread_ms} for k in costs]
    lengths, workload, v2 = _workload(cfg)
    ctx.log(f"  simulating static and continuous batching of {len(lengths)} requests on {cfg.slots} slots")
    policies, timeline, v3, continuous = policy_rows(lengths, cfg.slots, costs)
    prefill_table, prefill_s = _prefill_costs(cfg, ctx)
    loads = ", ".join(f"{x:g}" for x in cfg.loads)
    ctx.log(f"  simulating the same requests arriving over time, at {loads} of the estimated capacity")
    arrivals, ratios, arrival_requests, v5 = arrival_rows(
        lengths, cfg.slots, costs, prefill_s=prefill_s, loads=cfg.loads, seed=cfg.arrival_seed
    )
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
    return Result(tables=tables, values={**v0, **v1, **v2, **v3, **v4, **v5})
