"""§4 Batching.

Measures, on the run's model:

* ``sweep``: one decode step for B requests at once, each holding a cache of 64
  positions: step latency, throughput (B / step), both relative to B = 1 and to the
  previous batch size; the knee (``find_knee``). A batch that runs out of device memory
  is recorded as such and the sweep stops there (measure/lab/batching_sweep.py).
* ``step_costs``: the same measurement at every occupancy from 1 to the number of
  slots, the per-step costs the simulations below use.

Simulates, with those measured costs (measure/sim/scheduler.py, measure/sim/paged_kv.py,
rows built in measure/sim/batching_sim.py):

* ``workload``: 64 requests with skewed output lengths, a fixed seeded sample.
* ``policies`` / ``timeline``: static vs continuous batching of that workload on 8
  slots: total time, throughput, latency percentiles, slot utilisation; and who held
  which slot when.
* ``paged`` / ``memory_steps``: the KV memory of the continuous schedule under a
  contiguous per-request reservation, fixed-size blocks with a block table, and blocks
  with a shared system prompt: reserved vs stored bytes, the waste.

Writes ``site_data/batching/``. Alone: ``python -m measure run --only batching``.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch

from measure.lab.batching_sweep import step_costs, sweep, sweep_rows
from measure.lab.context import Context
from measure.lab.generation import cache_storage_bytes, decode_step_at, random_cache
from measure.lab.timing import Timing, time_call
from measure.sim.batching_sim import memory_rows, policy_rows
from measure.sim.scheduler import skewed_lengths
from sitedata.schema import Column, Result, Table, Value

TITLE = "Batching"
SLOTS = 8  # spec §4.2

_TIMING = dict(compare="timing")
# Whether a batch ran out of memory: this machine's memory, the same on every rerun here.
_BY_MACHINE = dict(compare="exact", scope="machine")
# Chosen by timings (the knee): may move with timing noise even on this machine, so
# compared only when timings are.
_BY_TIMING = dict(compare="timing")
# The seeded workload's schedules and allocators are pure arithmetic: any machine.
_SIM = dict(compare="numeric", scope="any")
# Bytes of the KV cache: the model's shape times the run's dtype (fp16 on a GPU, fp32 on a CPU).
_BYTES = dict(compare="exact", scope="device")

TABLES = (
    Table(
        "sweep",
        "One decode step for B requests, each with a {cache_tokens}-token cache",
        (
            Column("batch", "requests", "batch B"),
            Column("cache_tokens", "tokens", "cache per request"),
            Column("status", label="status", **_BY_MACHINE),
            Column("step_ms", "ms", "step latency", **_TIMING),
            Column("spread_ms", "ms", "spread (IQR)", **_TIMING),
            Column("throughput_tok_s", "tokens/s", "throughput", **_TIMING),
            Column("throughput_gain", "x", "throughput vs B = 1", **_TIMING),
            Column("latency_factor", "x", "latency vs B = 1", **_TIMING),
            Column("gain_vs_previous", "x", "throughput vs previous B", **_TIMING),
            Column("slowdown_vs_previous", "x", "latency vs previous B", **_TIMING),
        ),
    ),
    Table(
        "step_costs",
        "Measured step cost at each occupancy ({cache_tokens}-token caches): the simulations' input",
        (
            Column("occupancy", "requests", "requests in the step"),
            Column("step_ms", "ms", "step", **_TIMING),
            Column("spread_ms", "ms", "spread (IQR)", **_TIMING),
        ),
    ),
    Table(
        "workload",
        "The workload: {requests} requests, output lengths drawn once (seed {workload_seed})",
        (
            Column("request", label="request"),
            Column("prompt_tokens", "tokens", "prompt"),
            Column("output_tokens", "tokens", "output"),
        ),
    ),
    Table(
        "policies",
        "Static vs continuous batching, {requests} requests on {slots} slots (simulated)",
        (
            Column("policy", label="policy"),
            Column("requests", "requests", "requests"),
            Column("slots", "slots", "slots"),
            Column("output_tokens", "tokens", "useful tokens"),
            Column("steps", "steps", "steps"),
            Column("slot_utilisation", "fraction", "slot utilisation", **_SIM),
            Column("mean_latency_steps", "steps", "mean latency in steps", **_SIM),
            Column("total_ms", "ms", "total time", **_TIMING),
            Column("throughput_tok_s", "tokens/s", "throughput", **_TIMING),
            Column("mean_latency_ms", "ms", "mean latency", **_TIMING),
            Column("p50_latency_ms", "ms", "p50 latency", **_TIMING),
            Column("p95_latency_ms", "ms", "p95 latency", **_TIMING),
        ),
    ),
    Table(
        "timeline",
        "Who held which slot when (steps, and times from the measured step costs)",
        (
            Column("policy", label="policy"),
            Column("request", label="request"),
            Column("slot", label="slot"),
            Column("output_tokens", "tokens", "output"),
            Column("start_step", "step", "starts"),
            Column("finish_step", "step", "last token after"),
            Column("release_step", "step", "slot freed after"),
            Column("start_ms", "ms", "starts", **_TIMING),
            Column("finish_ms", "ms", "last token", **_TIMING),
            Column("release_ms", "ms", "result returned", **_TIMING),
        ),
    ),
    Table(
        "paged",
        "KV memory of the continuous schedule under three allocators (simulated)",
        (
            Column("scheme", label="allocator"),
            Column("unit_tokens", "tokens", "allocation unit"),
            Column("peak_reserved_bytes", "bytes", "reserved, peak", **_BYTES),
            Column("peak_stored_bytes", "bytes", "holding tokens, peak", **_BYTES),
            Column("waste_at_peak", "fraction", "waste at peak", **_SIM),
            Column("waste", "fraction", "waste over the run", **_SIM),
            Column("peak_vs_contiguous", "fraction", "peak vs contiguous", **_SIM),
        ),
    ),
    Table(
        "memory_steps",
        "KV memory after every step of the continuous schedule",
        (
            Column("step", "step", "step"),
            Column("context_bytes", "bytes", "contexts (unshared)", **_BYTES),
            Column("contiguous_reserved_bytes", "bytes", "contiguous: reserved", **_BYTES),
            Column("paged_reserved_bytes", "bytes", "paged: reserved", **_BYTES),
            Column("shared_reserved_bytes", "bytes", "paged + shared prefix: reserved", **_BYTES),
            Column("shared_stored_bytes", "bytes", "paged + shared prefix: stored", **_BYTES),
        ),
    ),
)
VALUES = (
    Value("knee_found", description="a knee lies inside the sweep", **_BY_TIMING),
    Value(
        "knee_batch", "requests", description="the knee, or the largest batch measured when there is none", **_BY_TIMING
    ),
    Value("knee_next_batch", "requests", description="the batch size after the knee", **_BY_TIMING),
    Value("knee_next_gain", "x", description="throughput factor from the knee to the next batch size", **_TIMING),
    Value("knee_next_slowdown", "x", description="step-time factor from the knee to the next batch size", **_TIMING),
    Value("largest_measured_batch", "requests", **_BY_MACHINE),
    Value("out_of_memory", **_BY_MACHINE),
    Value("sweep_samples_ms", "ms", **_TIMING),
    Value("requests", "requests"),
    Value("slots", "slots"),
    Value("output_median", "tokens", **_SIM),
    Value("output_max", "tokens"),
    Value("output_min", "tokens"),
    Value("output_total", "tokens"),
    Value(
        "output_top_share",
        "fraction",
        description="share of all output tokens in the longest tenth of the requests",
        **_SIM,
    ),
    Value("throughput_ratio", "x", description="continuous throughput / static throughput", **_TIMING),
    Value("mean_latency_ratio", "x", description="static mean latency / continuous mean latency", **_TIMING),
    Value("p95_latency_ratio", "x", description="static p95 latency / continuous p95 latency", **_TIMING),
    Value("padding_slot_steps", "slot-steps", description="slot-steps static batching spent computing padding"),
    Value("step_cost_ratio", "x", description=f"a step with {SLOTS} requests / a step with one", **_TIMING),
    Value("stored_within_reserved", description="at every step, under every allocator"),
    Value("kv_bytes_per_token", "bytes", description="read from the sweep's cache", **_BYTES),
    Value("max_context_tokens", "tokens"),
    Value("longest_request_tokens", "tokens"),
    Value("prompt_tokens", "tokens"),
    Value("shared_prefix_tokens", "tokens"),
    Value("block_tokens", "tokens"),
    Value("contiguous_waste", "fraction", **_SIM),
    Value("paged_waste", "fraction", **_SIM),
    Value("shared_waste", "fraction", **_SIM),
    Value("shared_peak_vs_contiguous", "fraction", **_SIM),
    Value("paged_peak_vs_contiguous", "fraction", **_SIM),
)


@dataclass(frozen=True, kw_only=True)
class Config:
    batch_sizes: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)  # spec §4.1
    cache_tokens: int = 64  # spec §4.1: each request holds a 64-token cache
    warmup: int = 2
    repeats: int = 10
    requests: int = 64  # spec §4.2
    slots: int = SLOTS
    # spec §4.2: the source's sample had median 18, longest 231, 1,874 tokens in all.
    # A lognormal with that median; sigma 1.0 and seed 2 (the first seed, counting from
    # 0, whose sample has a median of 18-19 and a total within 5% of the source's).
    output_median: float = 18.0
    output_sigma: float = 1.0
    workload_seed: int = 2
    prompt_tokens: int = 64  # each request's prompt: the sweep's 64-token context
    shared_prefix_tokens: int = 32  # of which a common system prompt (an assumption)
    block_tokens: int = 16  # spec §4.3, and vLLM's default block size

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            return cls(repeats=5)  # the whole sweep fits; fewer repeats
        return cls(batch_sizes=(1, 2, 4, 8), warmup=1, repeats=2)


def _measure(cfg: Config, ctx: Context) -> tuple[dict[int, Timing | str], int]:
    model = ctx.model.model
    vocab = ctx.model.config.vocab_size
    per_token = {}

    def measure(b: int) -> Timing:
        cache = random_cache(model, batch=b, tokens=cfg.cache_tokens)
        per_token[b] = cache_storage_bytes(cache) // (b * cfg.cache_tokens)
        g = torch.Generator().manual_seed(b)
        token = torch.randint(0, vocab, (b, 1), generator=g).to(ctx.device)
        return time_call(
            lambda: decode_step_at(model, token, cache, cfg.cache_tokens),
            device=ctx.device,
            warmup=cfg.warmup,
            repeats=cfg.repeats,
        )

    batches = sorted(set(cfg.batch_sizes) | set(range(1, cfg.slots + 1)))
    desc = f"decode step, batch sweep ({cfg.cache_tokens}-token caches)"
    results = sweep(batches, measure, progress=lambda items: ctx.progress(items, desc))
    return results, per_token[min(per_token)]


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


def run(cfg: Config, ctx: Context) -> Result:
    results, bytes_per_token = _measure(cfg, ctx)
    sweep_table, v1 = sweep_rows(cfg.batch_sizes, cfg.cache_tokens, results)
    costs = step_costs(results, cfg.slots)
    costs_table = [{"occupancy": k, "step_ms": results[k].median_ms, "spread_ms": results[k].spread_ms} for k in costs]
    lengths, workload, v2 = _workload(cfg)
    ctx.log(f"  simulating static and continuous batching of {len(lengths)} requests on {cfg.slots} slots")
    policies, timeline, v3, continuous = policy_rows(lengths, cfg.slots, costs)
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
        "paged": paged,
        "memory_steps": memory_steps,
    }
    return Result(tables=tables, values={**v1, **v2, **v3, **v4})
