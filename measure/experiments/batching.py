"""§4 Batching.

Measures, on the run's model:

* ``sweep``: one decode step for B requests at once, each holding a cache of 64
  positions: step latency, throughput (B / step), both relative to B = 1 and to the
  previous batch size; the knee (``find_knee``). A batch that runs out of device memory
  is recorded as such and the sweep stops there (measure/lab/batching_sweep.py).
  Beside each, the floor (the weights plus the B caches, over the memory bandwidth
  measured by the same copy as §2) and the same step compiled (static cache and
  torch.compile, CUDA graphs on a GPU; measure/lab/compiled_decode.py).
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
import time
from dataclasses import dataclass

import torch

from measure.lab.bandwidth import copy_bandwidth, weight_bytes
from measure.lab.batching_sweep import available_bytes, extend_sweep, step_costs, sweep, sweep_rows
from measure.lab.compiled_decode import compiled_decoder, compiled_step_at, compiler_unavailable, static_cache
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import cache_storage_bytes, decode_step_at, prefill, random_cache
from measure.lab.timing import Timing, time_call
from measure.sim.batching_sim import arrival_rows, memory_rows, policy_rows
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

# Mean and percentiles of the requests' latency, in the static and the arrivals tables alike.
_LATENCY_COLUMNS = tuple(
    Column(f"{k}_latency_ms", "ms", f"{k} latency", **_TIMING) for k in ("mean", "p50", "p95", "p99")
)

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
            Column("floor_ms", "ms", "floor: weights and caches / bandwidth", **_TIMING),
            Column("fraction_of_floor", "fraction", "floor / step", **_TIMING),
            Column("compiled_step_ms", "ms", "compiled step", **_TIMING),
            Column("compiled_throughput_tok_s", "tokens/s", "compiled throughput", **_TIMING),
            Column("compiled_fraction_of_floor", "fraction", "compiled: floor / step", **_TIMING),
            Column("compiled_speedup", "x", "eager step / compiled step", **_TIMING),
        ),
        length="timing",  # past the chapter's sizes, the timings decide where the sweep stops
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
            *_LATENCY_COLUMNS,
        ),
    ),
    Table(
        "prefill_costs",
        "One prefill of P prompt tokens, alone: the price of admitting a request",
        (
            Column("prompt_tokens", "tokens", "prompt P"),
            Column("prefill_ms", "ms", "prefill", **_TIMING),
            Column("spread_ms", "ms", "spread (IQR)", **_TIMING),
        ),
    ),
    Table(
        "arrivals",
        "Static vs continuous batching, {requests} requests arriving over time on {slots} slots (simulated)",
        (
            Column("load", "fraction", "load: rate / capacity"),
            Column("rate_req_s", "requests/s", "arrival rate", **_TIMING),
            Column("policy", label="policy"),
            Column("output_tokens", "tokens", "useful tokens"),
            Column("decode_steps", "steps", "decode steps", **_TIMING),
            Column("slot_utilisation", "fraction", "slot utilisation", **_TIMING),
            Column("total_ms", "ms", "total time", **_TIMING),
            Column("throughput_tok_s", "tokens/s", "throughput", **_TIMING),
            *_LATENCY_COLUMNS,
            Column("mean_ttft_ms", "ms", "mean time to first token", **_TIMING),
            Column("p95_ttft_ms", "ms", "p95 time to first token", **_TIMING),
        ),
    ),
    Table(
        "arrival_ratios",
        "Continuous against static under arrivals, at each load",
        (
            Column("load", "fraction", "load: rate / capacity"),
            Column("rate_req_s", "requests/s", "arrival rate", **_TIMING),
            Column("throughput_ratio", "x", "throughput: continuous / static", **_TIMING),
            Column("mean_latency_ratio", "x", "mean latency: static / continuous", **_TIMING),
            Column("p50_latency_ratio", "x", "p50: static / continuous", **_TIMING),
            Column("p95_latency_ratio", "x", "p95: static / continuous", **_TIMING),
            Column("p99_latency_ratio", "x", "p99: static / continuous", **_TIMING),
            Column("mean_ttft_ratio", "x", "mean time to first token: static / continuous", **_TIMING),
        ),
    ),
    Table(
        "arrival_requests",
        "Every request under arrivals: when it came, its first token, its result",
        (
            Column("load", "fraction", "load"),
            Column("policy", label="policy"),
            Column("request", label="request"),
            Column("slot", label="slot", **_TIMING),
            Column("arrival_ms", "ms", "arrives", **_TIMING),
            Column("first_token_ms", "ms", "first token", **_TIMING),
            Column("release_ms", "ms", "result returned", **_TIMING),
            Column("ttft_ms", "ms", "time to first token", **_TIMING),
            Column("latency_ms", "ms", "latency", **_TIMING),
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
    # Where the sweep ends is chosen by its timings once it is extended past its sizes.
    Value("largest_measured_batch", "requests", **_BY_TIMING),
    Value("out_of_memory", **_BY_MACHINE),
    Value("sweep_samples_ms", "ms", **_TIMING),
    Value("bandwidth_gb_s", "GB/s", description="the same copy as §2's probe, in this run", **_TIMING),
    Value("weight_bytes", "bytes", **_BYTES),
    Value("fraction_smallest_batch", "fraction", description="floor / step at B = 1", **_TIMING),
    Value("fraction_largest_batch", "fraction", description="floor / step at the largest batch measured", **_TIMING),
    # Whether the compiler runs depends on the machine (a C++ compiler for the CPU backend).
    Value("compiled_available", description="torch.compile ran on this machine", compare="exact", scope="machine"),
    Value("compiled_method", description="how the compiled step was built, or why it was not", scope="machine"),
    Value("compiled_fraction_smallest_batch", "fraction", **_TIMING),
    Value("compiled_fraction_largest_batch", "fraction", **_TIMING),
    Value("compiled_speedup_best", "x", description="the largest speed-up over the batches measured", **_TIMING),
    Value("compiled_speedup_worst", "x", description="the smallest speed-up over the batches measured", **_TIMING),
    Value("compiled_samples_ms", "ms", **_TIMING),
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
    Value("p99_latency_ratio", "x", description="static p99 latency / continuous p99 latency", **_TIMING),
    Value("sweep_stop_reason", description="why the extended sweep stopped", **_BY_TIMING),
    Value("sweep_extended", description="the sweep went past the published batch sizes", **_BY_TIMING),
    Value("sweep_extension_s", "s", description="time spent measuring past the published sizes", **_TIMING),
    Value("sweep_cap", "requests", description="the largest batch the extension may try"),
    Value("sweep_budget_s", "s", description="the time the extension may take"),
    Value("knee_confirmations", "growths", description="growths past the knee that establish it"),
    Value(
        "capacity_req_s",
        "requests/s",
        description="continuous batching with every slot busy: 1 / (prefill + (mean output - 1) x full step / slots)",
        **_TIMING,
    ),
    Value("prefill_ms", "ms", description="one prefill of the workload's prompt", **_TIMING),
    Value("arrival_seed", description="seed of the Poisson arrivals"),
    Value("load_lowest", "fraction"),
    Value("load_highest", "fraction"),
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
    copy_bytes: int = 2**30  # the bandwidth probe of §2, at the same sizes
    copy_repeats: int = 10
    # Past the published sweep, the batch keeps doubling until the knee is established
    # (shown, then confirmed by this many further growths), the next batch would not
    # fit, the cap, or the time budget (this page's share of a run's time) says stop.
    extend_cap: int = 1024
    knee_confirmations: int = 2
    extend_budget_s: float = 60.0
    # Arrivals: prefill timed at a few prompt lengths (the workload's among them), and a
    # Poisson process at these fractions of the capacity estimated from the costs: well
    # below it, and near it.
    prefill_lengths: tuple[int, ...] = (16, 32, 64)
    loads: tuple[float, ...] = (0.5, 0.8, 0.95)
    arrival_seed: int = 0

    def __post_init__(self) -> None:
        if self.prompt_tokens not in self.prefill_lengths:
            raise ValueError(f"prefill_lengths must include the workload's prompt ({self.prompt_tokens} tokens)")

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # The whole sweep fits; fewer repeats; the extension may add 25 s at most.
            return cls(repeats=5, copy_bytes=2**29, copy_repeats=7, extend_budget_s=25.0)
        return cls(
            batch_sizes=(1, 2, 4, 8),
            warmup=1,
            repeats=2,
            copy_bytes=2**22,
            copy_repeats=3,
            extend_cap=16,
            extend_budget_s=5.0,
            prefill_lengths=(16, 64),
            loads=(0.5, 0.95),
        )


@dataclass(frozen=True)
class Steps:
    """One batch size's timings: the eager step, and the compiled one where it ran."""

    eager: Timing
    compiled: Timing | None


def _measure(cfg: Config, ctx: Context) -> tuple[dict[int, Steps | str], int, dict]:
    model = ctx.model.model
    vocab = ctx.model.config.vocab_size
    per_token = {}
    reason = compiler_unavailable(ctx.device.type)
    if reason:
        ctx.log(f"  {reason}: the compiled step is not measured")
    decoder = None if reason else compiled_decoder(model, ctx.device)

    def timing(step) -> Timing:
        return time_call(step, device=ctx.device, warmup=cfg.warmup, repeats=cfg.repeats)

    def measure(b: int) -> Steps:
        cache = random_cache(model, batch=b, tokens=cfg.cache_tokens)
        per_token[b] = cache_storage_bytes(cache) // (b * cfg.cache_tokens)
        g = torch.Generator().manual_seed(b)
        token = torch.randint(0, vocab, (b, 1), generator=g).to(ctx.device)
        eager = timing(lambda: decode_step_at(model, token, cache, cfg.cache_tokens))
        if decoder is None:
            return Steps(eager, None)
        static = static_cache(model, batch=b, tokens=cfg.cache_tokens)
        return Steps(eager, timing(lambda: compiled_step_at(decoder, token, static, cfg.cache_tokens)))

    cost_s = {}

    def clocked(b: int) -> Steps:
        t0 = time.perf_counter()
        out = measure(b)
        cost_s[b] = time.perf_counter() - t0
        return out

    batches = sorted(set(cfg.batch_sizes) | set(range(1, cfg.slots + 1)))
    desc = f"decode step, eager and compiled, batch sweep ({cfg.cache_tokens}-token caches)"
    if decoder is not None:
        ctx.log("  the compiled step compiles at B = 1 and again at B = 2 (then every larger B reuses it)")
    results = sweep(batches, clocked, progress=lambda items: ctx.progress(items, desc))
    bytes_per_token = per_token[min(per_token)]
    added, stop, spent = extend_sweep(
        results,
        cfg.batch_sizes,
        clocked,
        seconds=lambda r: r.eager.median_s,
        last_cost_s=cost_s.get(max(cfg.batch_sizes), 0.0),
        cap=cfg.extend_cap,
        confirmations=cfg.knee_confirmations,
        fits=lambda b: (
            _estimated_bytes(ctx.model.config, b, cfg.cache_tokens, bytes_per_token)
            <= _HEADROOM * available_bytes(ctx.device)
        ),
        budget_s=cfg.extend_budget_s,
    )
    ctx.log(f"  sweep extended by {added or 'nothing'} in {spent:.1f} s; stopped: {stop}")
    method = {
        "compiled_available": decoder is not None,
        "compiled_method": reason or decoder.method,
        "sweep_stop_reason": stop,
        "sweep_extended": bool(added),
        "sweep_extension_s": spent,
        "sweep_cap": cfg.extend_cap,
        "sweep_budget_s": cfg.extend_budget_s,
    }
    return results, bytes_per_token, method


# Only part of the memory a system reports free is safe to fill: the estimate below
# leaves out the allocator's slack and the step's transient buffers.
_HEADROOM = 0.5


def _estimated_bytes(config, batch: int, cache_tokens: int, bytes_per_token: int) -> int:
    """Memory a sweep point at ``batch`` needs beyond the weights: each request's cache
    twice (the eager step's cache, one position longer after a step, and the compiled
    step's static cache), and its activations, dominated by the logits and the MLP's
    intermediate vector (taken in fp32, the larger case)."""
    cache = 2 * (cache_tokens + 1) * bytes_per_token
    activations = 4 * (config.vocab_size + config.intermediate_size + 4 * config.hidden_size)
    return batch * (cache + activations)


def _floor_columns(rows: list[dict], results: dict, *, floor_ms) -> dict:
    """Adds the floor and the compiled step to the sweep's rows; their values."""
    measured = []
    for row in rows:
        r = results[row["batch"]]
        if not isinstance(r, Steps):
            row |= dict.fromkeys(("floor_ms", "fraction_of_floor", *_COMPILED_COLUMNS))
            continue
        floor = floor_ms(row["batch"])
        c = r.compiled
        row |= {
            "floor_ms": floor,
            "fraction_of_floor": floor / row["step_ms"],
            "compiled_step_ms": c.median_ms if c else None,
            "compiled_throughput_tok_s": row["batch"] / c.median_s if c else None,
            "compiled_fraction_of_floor": floor / c.median_ms if c else None,
            "compiled_speedup": row["step_ms"] / c.median_ms if c else None,
        }
        measured.append(row)
    first, last = measured[0], measured[-1]
    speedups = [r["compiled_speedup"] for r in measured if r["compiled_speedup"] is not None]
    return {
        "fraction_smallest_batch": first["fraction_of_floor"],
        "fraction_largest_batch": last["fraction_of_floor"],
        "compiled_fraction_smallest_batch": first["compiled_fraction_of_floor"],
        "compiled_fraction_largest_batch": last["compiled_fraction_of_floor"],
        "compiled_speedup_best": max(speedups) if speedups else None,
        "compiled_speedup_worst": min(speedups) if speedups else None,
        "compiled_samples_ms": {
            str(b): r.compiled.samples_ms() for b, r in results.items() if isinstance(r, Steps) and r.compiled
        },
    }


_COMPILED_COLUMNS = ("compiled_step_ms", "compiled_throughput_tok_s", "compiled_fraction_of_floor", "compiled_speedup")


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
    steps, bytes_per_token, v0 = _measure(cfg, ctx)
    results = {b: r.eager if isinstance(r, Steps) else r for b, r in steps.items()}
    swept = sorted(set(cfg.batch_sizes) | {b for b in results if b > max(cfg.batch_sizes, default=0)})
    sweep_table, v1 = sweep_rows(swept, cfg.cache_tokens, results)
    ctx.log(f"  memory bandwidth: {cfg.copy_repeats} samples of {cfg.copy_bytes >> 20} MiB copies")
    bw = copy_bandwidth(copy_bytes=cfg.copy_bytes, device=ctx.device, repeats=cfg.copy_repeats).bytes_per_s
    weights = weight_bytes(ctx.model.model)
    per_request = cfg.cache_tokens * bytes_per_token
    v0 |= _floor_columns(sweep_table, steps, floor_ms=lambda b: (weights + b * per_request) / bw * 1e3)
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
