"""§4 batching: the simulations' rows. A workload of output lengths is scheduled
statically and continuously, all queued at once (measure/sim/scheduler.py) or arriving
over time (measure/sim/arrivals.py), timed with the step costs measured by the
experiment, and the continuous schedule's KV memory is simulated under three
allocators (measure/sim/paged_kv.py). Pure Python, no model.

Used by measure/experiments/batching/.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from measure.sim.arrivals import poisson_arrivals, serve
from measure.sim.paged_kv import SCHEMES, simulate_memory
from measure.sim.scheduler import POLICIES, Schedule, schedule, timed

LATENCIES = ("mean_latency", "p50_latency", "p95_latency", "p99_latency")


def in_ms(summary: Mapping[str, float], *names: str) -> dict[str, float]:
    """``name_ms`` for each ``name_s`` of a schedule's summary: the tables write milliseconds."""
    return {f"{n}_ms": summary[f"{n}_s"] * 1e3 for n in names}


def policy_rows(
    lengths: Sequence[int], slots: int, costs: Mapping[int, float]
) -> tuple[list[dict], list[dict], dict, Schedule]:
    """Rows of ``policies`` and ``timeline``, their values, and the continuous schedule."""
    rows, timeline, summaries, schedules = [], [], {}, {}
    for policy in POLICIES:
        sched = schedule(policy, lengths, slots)
        t = timed(sched, costs)
        s = t.summary()
        summaries[policy], schedules[policy] = s, sched
        rows.append(
            {
                "policy": policy,
                "requests": len(lengths),
                "slots": slots,
                "output_tokens": sched.useful_tokens,
                "steps": sched.steps,
                "slot_utilisation": sched.utilisation,
                "mean_latency_steps": statistics.fmean(sp.release for sp in sched.spans),
                "throughput_tok_s": s["throughput_tok_s"],
                **in_ms(s, "total", *LATENCIES),
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
    st, co = summaries["static"], summaries["continuous"]
    values = {
        "throughput_ratio": co["throughput_tok_s"] / st["throughput_tok_s"],
        "mean_latency_ratio": st["mean_latency_s"] / co["mean_latency_s"],
        "p95_latency_ratio": st["p95_latency_s"] / co["p95_latency_s"],
        "p99_latency_ratio": st["p99_latency_s"] / co["p99_latency_s"],
        "padding_slot_steps": sum(sp.release - sp.finish for sp in schedules["static"].spans),
        "step_cost_ratio": costs[slots] / costs[1],
    }
    return rows, timeline, values, schedules["continuous"]


def capacity_req_s(mean_output: float, prefill_s: float, costs: Mapping[int, float], slots: int) -> float:
    """Requests per second continuous batching sustains with every slot busy: each
    request costs the engine its prefill, then its other tokens at a full step's cost
    shared by ``slots`` requests."""
    return 1.0 / (prefill_s + (mean_output - 1) * costs[slots] / slots)


def static_capacity_req_s(lengths: Sequence[int], prefill_s: float, costs: Mapping[int, float], slots: int) -> float:
    """Requests per second static batching sustains with requests always waiting: the
    workload in groups of ``slots`` consecutive requests (arrival order), each group its
    members' prefills and then as many steps as its longest member still needs, every one
    a step of the whole group. Fewer requests waiting make smaller groups, which serve
    fewer requests per second: this is the most it serves."""
    groups = [lengths[i : i + slots] for i in range(0, len(lengths), slots)]
    seconds = sum(len(g) * prefill_s + (max(g) - 1) * costs[len(g)] for g in groups)
    return len(lengths) / seconds


_RATIOS = (  # (column, static's summary key / continuous's, or the reverse for throughput)
    ("mean_latency_ratio", "mean_latency_s"),
    ("p50_latency_ratio", "p50_latency_s"),
    ("p95_latency_ratio", "p95_latency_s"),
    ("p99_latency_ratio", "p99_latency_s"),
    ("mean_ttft_ratio", "mean_ttft_s"),
)


def arrival_rows(
    lengths: Sequence[int],
    slots: int,
    costs: Mapping[int, float],
    *,
    prefill_s: float,
    loads: Sequence[float],
    seed: int,
) -> tuple[list[dict], list[dict], list[dict], dict]:
    """Static and continuous batching of ``lengths`` arriving as a Poisson process at
    each load, a fraction of static batching's capacity (``static_capacity_req_s``, the
    lower of the two: at a load below one, both keep up and their queues stay bounded),
    every prompt costing ``prefill_s``: rows of ``arrivals`` (one per load and policy),
    ``arrival_ratios`` (one per load) and ``arrival_requests`` (every request), and their
    values."""
    capacity = capacity_req_s(sum(lengths) / len(lengths), prefill_s, costs, slots)
    static_capacity = static_capacity_req_s(lengths, prefill_s, costs, slots)
    summary, ratios, requests = [], [], []
    for load in loads:
        rate = load * static_capacity
        arrivals = poisson_arrivals(len(lengths), rate=rate, seed=seed)
        by = {}
        for policy in POLICIES:
            run = serve(
                policy, arrivals, lengths, slots, prefill_s=[prefill_s] * len(lengths), step_cost=costs.__getitem__
            )
            s = by[policy] = run.summary()
            summary.append(
                {
                    "load": load,
                    "rate_req_s": rate,
                    "policy": policy,
                    "own_load": rate / (capacity if policy == "continuous" else static_capacity),
                    "output_tokens": run.useful_tokens,
                    "decode_steps": len(run.decode_steps),
                    "slot_utilisation": run.utilisation,
                    "throughput_tok_s": s["throughput_tok_s"],
                    **in_ms(s, "total", *LATENCIES, "mean_ttft", "p95_ttft"),
                }
            )
            requests += [
                {
                    "load": load,
                    "policy": policy,
                    "request": r.request,
                    "slot": r.slot,
                    "arrival_ms": r.arrival * 1e3,
                    "first_token_ms": r.first_token * 1e3,
                    "release_ms": r.release * 1e3,
                    "ttft_ms": r.ttft * 1e3,
                    "latency_ms": r.latency * 1e3,
                }
                for r in run.served
            ]
        st, co = by["static"], by["continuous"]
        ratios.append(
            {
                "load": load,
                "rate_req_s": rate,
                "continuous_load": rate / capacity,
                "throughput_ratio": co["throughput_tok_s"] / st["throughput_tok_s"],
            }
            | {column: st[key] / co[key] for column, key in _RATIOS}
        )
    values = {
        "capacity_req_s": capacity,
        "static_capacity_req_s": static_capacity,
        "capacity_ratio": capacity / static_capacity,
        "prefill_ms": prefill_s * 1e3,
        "arrival_seed": seed,
        "load_lowest": min(loads),
        "load_highest": max(loads),
    }
    return summary, ratios, requests, values


def memory_rows(
    lengths: Sequence[int],
    sched: Schedule,
    *,
    prompt_tokens: int,
    shared_prefix_tokens: int,
    block_tokens: int,
    bytes_per_token: int,
) -> tuple[list[dict], list[dict], dict]:
    """Rows of ``paged`` and ``memory_steps`` for the schedule's KV memory, and their values."""
    longest = prompt_tokens + max(lengths)
    max_context = 1 << (longest - 1).bit_length()  # the smallest power of two that holds it
    steps = simulate_memory(
        sched.spans,
        prompt_tokens=prompt_tokens,
        shared_prefix_tokens=shared_prefix_tokens,
        block_tokens=block_tokens,
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
                "unit_tokens": max_context if scheme == "contiguous" else block_tokens,
                "peak_reserved_bytes": max(reserved) * bytes_per_token,
                "peak_stored_bytes": max(stored) * bytes_per_token,
                "waste_at_peak": 1 - stored[peak] / reserved[peak],
                "waste": 1 - sum(stored) / sum(reserved),
                "peak_vs_contiguous": max(reserved) / contiguous_peak,
            }
        )
    memory_steps = [
        {
            "step": s.step,
            "context_bytes": s.context_tokens * bytes_per_token,
            "contiguous_reserved_bytes": s.schemes["contiguous"][0] * bytes_per_token,
            "paged_reserved_bytes": s.schemes["paged"][0] * bytes_per_token,
            "shared_reserved_bytes": s.schemes["paged, shared prefix"][0] * bytes_per_token,
            "shared_stored_bytes": s.schemes["paged, shared prefix"][1] * bytes_per_token,
        }
        for s in steps
    ]
    by = {r["scheme"]: r for r in rows}
    values = {
        "stored_within_reserved": all(stored <= reserved for s in steps for reserved, stored in s.schemes.values()),
        "max_context_tokens": max_context,
        "longest_request_tokens": longest,
        "contiguous_waste": by["contiguous"]["waste"],
        "paged_waste": by["paged"]["waste"],
        "shared_waste": by["paged, shared prefix"]["waste"],
        "shared_peak_vs_contiguous": by["paged, shared prefix"]["peak_vs_contiguous"],
        "paged_peak_vs_contiguous": by["paged"]["peak_vs_contiguous"],
    }
    return rows, memory_steps, values
