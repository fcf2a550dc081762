"""§4 Batching.

Measures, on the run's model:

* ``sweep``: one decode step for B requests at once, each holding a cache of 64
  positions: step latency, throughput (B / step), both relative to B = 1 and to the
  previous batch size; the knee (``find_knee``). A batch that runs out of device memory
  is recorded as such and the sweep stops there.
* ``step_costs``: the same measurement at every occupancy from 1 to the number of
  slots, the per-step costs the simulations below use.

Simulates, with those measured costs (measure/scheduler.py, measure/paged_kv.py):

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

import gc
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from measure.context import Context
from measure.generation import cache_storage_bytes, decode_step_at, random_cache
from measure.paged_kv import SCHEMES, simulate_memory
from measure.scheduler import POLICIES, schedule, skewed_lengths, timed
from measure.schema import Column, Result, Table, Value
from measure.timing import Timing, time_call

TITLE = "Batching"
OOM = "out of memory"
NOT_RUN = "not run: a smaller batch ran out of memory"


@dataclass(frozen=True, kw_only=True)
class Config:
    batch_sizes: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)  # spec §4.1
    cache_tokens: int = 64  # spec §4.1: each request holds a 64-token cache
    warmup: int = 2
    repeats: int = 10
    requests: int = 64  # spec §4.2
    slots: int = 8  # spec §4.2
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


def is_out_of_memory(e: BaseException) -> bool:
    """CUDA's own error, or the RuntimeError other backends raise with that message."""
    return isinstance(e, torch.OutOfMemoryError) or (isinstance(e, RuntimeError) and "out of memory" in str(e).lower())


def sweep(
    batches: Sequence[int], measure: Callable[[int], Timing], progress: Callable = iter
) -> dict[int, Timing | str]:
    """``measure(b)`` for each batch size in order. The first one that runs out of
    memory is recorded as ``OOM`` and ends the sweep (a larger batch needs more); the
    rest are recorded as not run. Any other error propagates."""
    out: dict[int, Timing | str] = {}
    for i, b in enumerate(progress(batches)):
        try:
            out[b] = measure(b)
        except RuntimeError as e:  # torch.OutOfMemoryError is a RuntimeError
            if not is_out_of_memory(e):
                raise
            out[b] = OOM
            for later in batches[i + 1 :]:
                out[later] = NOT_RUN
            break
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return out


def find_knee(points: Sequence[tuple[int, float]]) -> int | None:
    """The knee of a batch sweep: the batch size B from which every further growth to the
    next size B' makes the step at least sqrt(B'/B) times slower.

    Growing the batch by B'/B multiplies throughput by (B'/B) / slowdown, so past the
    knee throughput gains no more than latency loses; before it, growth bought more
    throughput than it cost. Requiring the test to hold for *every* later growth keeps
    one noisy point at small B from moving the knee. ``points`` are (batch, step time),
    batch increasing. None when the last growth of the sweep was still cheap.
    """
    knee = None
    for (b0, t0), (b1, t1) in zip(points, points[1:], strict=False):
        if t1 / t0 >= math.sqrt(b1 / b0):
            knee = b0 if knee is None else knee
        else:
            knee = None
    return knee


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


def _sweep_table(cfg: Config, results: dict[int, Timing | str]) -> tuple[Table, list[Value]]:
    base = results[cfg.batch_sizes[0]]
    if not isinstance(base, Timing):
        raise RuntimeError(f"the smallest batch ({cfg.batch_sizes[0]}) did not run: {base}")
    rows, prev, ok = [], None, []
    for b in cfg.batch_sizes:
        r = results[b]
        row = {"batch": b, "cache_tokens": cfg.cache_tokens, "status": "measured" if isinstance(r, Timing) else r}
        if isinstance(r, Timing):
            tput = b / r.median_s
            row |= {
                "step_ms": r.median_ms,
                "spread_ms": r.spread_ms,
                "throughput_tok_s": tput,
                "throughput_gain": tput / (cfg.batch_sizes[0] / base.median_s),
                "latency_factor": r.median_s / base.median_s,
                "gain_vs_previous": tput / (prev[0] / prev[1].median_s) if prev else None,
                "slowdown_vs_previous": r.median_s / prev[1].median_s if prev else None,
            }
            prev = (b, r)
            ok.append((b, r.median_s))
        else:
            row |= dict.fromkeys(
                (
                    "step_ms",
                    "spread_ms",
                    "throughput_tok_s",
                    "throughput_gain",
                    "latency_factor",
                    "gain_vs_previous",
                    "slowdown_vs_previous",
                )
            )
        rows.append(row)
    cols = (
        Column(name="batch", unit="requests", label="batch B"),
        Column(name="cache_tokens", unit="tokens", label="cache per request"),
        Column(name="status", label="status"),
        Column(name="step_ms", unit="ms", kind="timing", label="step latency"),
        Column(name="spread_ms", unit="ms", kind="timing", label="spread (IQR)"),
        Column(name="throughput_tok_s", unit="tokens/s", kind="timing", label="throughput"),
        Column(name="throughput_gain", unit="x", kind="timing", label="throughput vs B = 1"),
        Column(name="latency_factor", unit="x", kind="timing", label="latency vs B = 1"),
        Column(name="gain_vs_previous", unit="x", kind="timing", label="throughput vs previous B"),
        Column(name="slowdown_vs_previous", unit="x", kind="timing", label="latency vs previous B"),
    )
    knee = find_knee(ok)
    after = [b for b, _ in ok if knee is not None and b > knee]
    past = next((r for r in rows if after and r["batch"] == after[0]), None)
    values = [
        Value(name="knee_found", value=knee is not None, kind="timing", description="a knee lies inside the sweep"),
        Value(
            name="knee_batch",
            value=knee if knee is not None else ok[-1][0],
            unit="requests",
            kind="timing",
            description="the knee, or the largest batch measured when there is none",
        ),
        Value(
            name="knee_next_batch",
            value=after[0] if after else ok[-1][0],
            unit="requests",
            kind="timing",
            description="the batch size after the knee",
        ),
        Value(
            name="knee_next_gain",
            value=past["gain_vs_previous"] if past else None,
            unit="x",
            kind="timing",
            description="throughput factor from the knee to the next batch size",
        ),
        Value(
            name="knee_next_slowdown",
            value=past["slowdown_vs_previous"] if past else None,
            unit="x",
            kind="timing",
            description="step-time factor from the knee to the next batch size",
        ),
        Value(name="largest_measured_batch", value=ok[-1][0], unit="requests", kind="timing"),
        Value(name="out_of_memory", value=any(r == OOM for r in results.values()), kind="timing"),
        Value(
            name="sweep_samples_ms",
            value={str(b): r.samples_ms() for b, r in results.items() if isinstance(r, Timing)},
            unit="ms",
            kind="timing",
        ),
    ]
    title = f"One decode step for B requests, each with a {cfg.cache_tokens}-token cache"
    return Table(name="sweep", title=title, columns=cols, rows=rows), values


def _step_costs(cfg: Config, results: dict[int, Timing | str]) -> dict[int, float]:
    costs = {}
    for k in range(1, cfg.slots + 1):
        r = results[k]
        if not isinstance(r, Timing):
            raise RuntimeError(f"the simulations need a measured step at occupancy {k}, which did not run: {r}")
        costs[k] = r.median_s
    return costs


def _workload(cfg: Config) -> tuple[list[int], Table, list[Value]]:
    lengths = skewed_lengths(cfg.requests, median=cfg.output_median, sigma=cfg.output_sigma, seed=cfg.workload_seed)
    table = Table(
        name="workload",
        title=f"The workload: {cfg.requests} requests, output lengths drawn once (seed {cfg.workload_seed})",
        columns=(
            Column(name="request", label="request"),
            Column(name="prompt_tokens", unit="tokens", label="prompt"),
            Column(name="output_tokens", unit="tokens", label="output"),
        ),
        rows=[{"request": i, "prompt_tokens": cfg.prompt_tokens, "output_tokens": n} for i, n in enumerate(lengths)],
    )
    values = [
        Value(name="requests", value=cfg.requests, unit="requests"),
        Value(name="slots", value=cfg.slots, unit="slots"),
        Value(name="output_median", value=statistics.median(lengths), unit="tokens", kind="numeric"),
        Value(name="output_max", value=max(lengths), unit="tokens"),
        Value(name="output_min", value=min(lengths), unit="tokens"),
        Value(name="output_total", value=sum(lengths), unit="tokens"),
        Value(
            name="output_top_share",
            value=sum(sorted(lengths)[-cfg.requests // 10 :]) / sum(lengths),
            unit="fraction",
            kind="numeric",
            description="share of all output tokens in the longest tenth of the requests",
        ),
    ]
    return lengths, table, values


def _policies(cfg: Config, lengths: list[int], costs: dict[int, float]):
    rows, timeline, summaries, schedules = [], [], {}, {}
    for policy in POLICIES:
        sched = schedule(policy, lengths, cfg.slots)
        t = timed(sched, costs)
        s = t.summary()
        summaries[policy], schedules[policy] = s, sched
        rows.append(
            {
                "policy": policy,
                "requests": len(lengths),
                "slots": cfg.slots,
                "output_tokens": sched.useful_tokens,
                "steps": sched.steps,
                "slot_utilisation": sched.utilisation,
                "mean_latency_steps": statistics.fmean(sp.release for sp in sched.spans),
                "total_ms": s["total_s"] * 1e3,
                "throughput_tok_s": s["throughput_tok_s"],
                "mean_latency_ms": s["mean_latency_s"] * 1e3,
                "p50_latency_ms": s["p50_latency_s"] * 1e3,
                "p95_latency_ms": s["p95_latency_s"] * 1e3,
            }
        )
        for sp in sched.spans:
            timeline.append(
                {
                    "policy": policy,
                    "request": sp.request,
                    "slot": sp.slot,
                    "output_tokens": sp.tokens,
                    "start_step": sp.start,
                    "finish_step": sp.finish,
                    "release_step": sp.release,
                    "start_ms": t.at(sp.start) * 1e3,
                    "finish_ms": t.at(sp.finish) * 1e3,
                    "release_ms": t.at(sp.release) * 1e3,
                }
            )
    policies = Table(
        name="policies",
        title=f"Static vs continuous batching, {len(lengths)} requests on {cfg.slots} slots (simulated)",
        columns=(
            Column(name="policy", label="policy"),
            Column(name="requests", unit="requests", label="requests"),
            Column(name="slots", unit="slots", label="slots"),
            Column(name="output_tokens", unit="tokens", label="useful tokens"),
            Column(name="steps", unit="steps", label="steps"),
            Column(name="slot_utilisation", unit="fraction", kind="numeric", label="slot utilisation"),
            Column(name="mean_latency_steps", unit="steps", kind="numeric", label="mean latency in steps"),
            Column(name="total_ms", unit="ms", kind="timing", label="total time"),
            Column(name="throughput_tok_s", unit="tokens/s", kind="timing", label="throughput"),
            Column(name="mean_latency_ms", unit="ms", kind="timing", label="mean latency"),
            Column(name="p50_latency_ms", unit="ms", kind="timing", label="p50 latency"),
            Column(name="p95_latency_ms", unit="ms", kind="timing", label="p95 latency"),
        ),
        rows=rows,
    )
    timeline_table = Table(
        name="timeline",
        title="Who held which slot when (steps, and times from the measured step costs)",
        columns=(
            Column(name="policy", label="policy"),
            Column(name="request", label="request"),
            Column(name="slot", label="slot"),
            Column(name="output_tokens", unit="tokens", label="output"),
            Column(name="start_step", unit="step", label="starts"),
            Column(name="finish_step", unit="step", label="last token after"),
            Column(name="release_step", unit="step", label="slot freed after"),
            Column(name="start_ms", unit="ms", kind="timing", label="starts"),
            Column(name="finish_ms", unit="ms", kind="timing", label="last token"),
            Column(name="release_ms", unit="ms", kind="timing", label="result returned"),
        ),
        rows=timeline,
    )
    st, co = summaries["static"], summaries["continuous"]
    values = [
        Value(
            name="throughput_ratio",
            value=co["throughput_tok_s"] / st["throughput_tok_s"],
            unit="x",
            kind="timing",
            description="continuous throughput / static throughput",
        ),
        Value(
            name="mean_latency_ratio",
            value=st["mean_latency_s"] / co["mean_latency_s"],
            unit="x",
            kind="timing",
            description="static mean latency / continuous mean latency",
        ),
        Value(
            name="p95_latency_ratio",
            value=st["p95_latency_s"] / co["p95_latency_s"],
            unit="x",
            kind="timing",
            description="static p95 latency / continuous p95 latency",
        ),
        Value(
            name="padding_slot_steps",
            value=sum(sp.release - sp.finish for sp in schedules["static"].spans),
            unit="slot-steps",
            description="slot-steps static batching spent computing padding",
        ),
        Value(
            name="step_cost_ratio",
            value=costs[cfg.slots] / costs[1],
            unit="x",
            kind="timing",
            description=f"a step with {cfg.slots} requests / a step with one",
        ),
    ]
    return policies, timeline_table, values, schedules["continuous"]


def _paged(cfg: Config, lengths: list[int], sched, bytes_per_token: int) -> tuple[Table, Table, list[Value]]:
    longest = cfg.prompt_tokens + max(lengths)
    max_context = 1 << (longest - 1).bit_length()  # the smallest power of two that holds it
    steps = simulate_memory(
        sched.spans,
        prompt_tokens=cfg.prompt_tokens,
        shared_prefix_tokens=cfg.shared_prefix_tokens,
        block_tokens=cfg.block_tokens,
        max_context_tokens=max_context,
    )
    rows = []
    contiguous_peak = max(s.schemes["contiguous"][0] for s in steps)
    for scheme in SCHEMES:
        reserved = [s.schemes[scheme][0] for s in steps]
        stored = [s.schemes[scheme][1] for s in steps]
        peak = max(range(len(steps)), key=lambda i: reserved[i])
        rows.append(
            {
                "scheme": scheme,
                "unit_tokens": max_context if scheme == "contiguous" else cfg.block_tokens,
                "peak_reserved_bytes": max(reserved) * bytes_per_token,
                "peak_stored_bytes": max(stored) * bytes_per_token,
                "waste_at_peak": 1 - stored[peak] / reserved[peak],
                "waste": 1 - sum(stored) / sum(reserved),
                "peak_vs_contiguous": max(reserved) / contiguous_peak,
            }
        )
    paged = Table(
        name="paged",
        title="KV memory of the continuous schedule under three allocators (simulated)",
        columns=(
            Column(name="scheme", label="allocator"),
            Column(name="unit_tokens", unit="tokens", label="allocation unit"),
            Column(name="peak_reserved_bytes", unit="bytes", label="reserved, peak"),
            Column(name="peak_stored_bytes", unit="bytes", label="holding tokens, peak"),
            Column(name="waste_at_peak", unit="fraction", kind="numeric", label="waste at peak"),
            Column(name="waste", unit="fraction", kind="numeric", label="waste over the run"),
            Column(name="peak_vs_contiguous", unit="fraction", kind="numeric", label="peak vs contiguous"),
        ),
        rows=rows,
    )
    memory_steps = Table(
        name="memory_steps",
        title="KV memory after every step of the continuous schedule",
        columns=(
            Column(name="step", unit="step", label="step"),
            Column(name="context_bytes", unit="bytes", label="contexts (unshared)"),
            Column(name="contiguous_reserved_bytes", unit="bytes", label="contiguous: reserved"),
            Column(name="paged_reserved_bytes", unit="bytes", label="paged: reserved"),
            Column(name="shared_reserved_bytes", unit="bytes", label="paged + shared prefix: reserved"),
            Column(name="shared_stored_bytes", unit="bytes", label="paged + shared prefix: stored"),
        ),
        rows=[
            {
                "step": s.step,
                "context_bytes": s.context_tokens * bytes_per_token,
                "contiguous_reserved_bytes": s.schemes["contiguous"][0] * bytes_per_token,
                "paged_reserved_bytes": s.schemes["paged"][0] * bytes_per_token,
                "shared_reserved_bytes": s.schemes["paged, shared prefix"][0] * bytes_per_token,
                "shared_stored_bytes": s.schemes["paged, shared prefix"][1] * bytes_per_token,
            }
            for s in steps
        ],
    )
    by = {r["scheme"]: r for r in rows}
    within = all(stored <= reserved for s in steps for reserved, stored in s.schemes.values())
    values = [
        Value(name="stored_within_reserved", value=within, description="at every step, under every allocator"),
        Value(
            name="kv_bytes_per_token", value=bytes_per_token, unit="bytes", description="read from the sweep's cache"
        ),
        Value(name="max_context_tokens", value=max_context, unit="tokens"),
        Value(name="longest_request_tokens", value=longest, unit="tokens"),
        Value(name="prompt_tokens", value=cfg.prompt_tokens, unit="tokens"),
        Value(name="shared_prefix_tokens", value=cfg.shared_prefix_tokens, unit="tokens"),
        Value(name="block_tokens", value=cfg.block_tokens, unit="tokens"),
        Value(name="contiguous_waste", value=by["contiguous"]["waste"], unit="fraction", kind="numeric"),
        Value(name="paged_waste", value=by["paged"]["waste"], unit="fraction", kind="numeric"),
        Value(name="shared_waste", value=by["paged, shared prefix"]["waste"], unit="fraction", kind="numeric"),
        Value(
            name="shared_peak_vs_contiguous",
            value=by["paged, shared prefix"]["peak_vs_contiguous"],
            unit="fraction",
            kind="numeric",
        ),
        Value(
            name="paged_peak_vs_contiguous", value=by["paged"]["peak_vs_contiguous"], unit="fraction", kind="numeric"
        ),
    ]
    return paged, memory_steps, values


def run(cfg: Config, ctx: Context) -> Result:
    results, bytes_per_token = _measure(cfg, ctx)
    sweep_table, v1 = _sweep_table(cfg, results)
    costs = _step_costs(cfg, results)
    step_costs = Table(
        name="step_costs",
        title=f"Measured step cost at each occupancy ({cfg.cache_tokens}-token caches): the simulations' input",
        columns=(
            Column(name="occupancy", unit="requests", label="requests in the step"),
            Column(name="step_ms", unit="ms", kind="timing", label="step"),
            Column(name="spread_ms", unit="ms", kind="timing", label="spread (IQR)"),
        ),
        rows=[{"occupancy": k, "step_ms": results[k].median_ms, "spread_ms": results[k].spread_ms} for k in costs],
    )
    lengths, workload, v2 = _workload(cfg)
    ctx.log(f"  simulating static and continuous batching of {len(lengths)} requests on {cfg.slots} slots")
    policies, timeline, v3, continuous = _policies(cfg, lengths, costs)
    paged, memory_steps, v4 = _paged(cfg, lengths, continuous, bytes_per_token)
    return Result(
        tables=[sweep_table, step_costs, workload, policies, timeline, paged, memory_steps],
        values=v1 + v2 + v3 + v4,
    )
