"""§4's simulations with the measured costs (measure/sim/: the schedules, the arrivals,
the allocators; their rows in measure/sim/batching_sim.py): the workload, static against
continuous batching all queued at once and arriving over time, and the KV memory of
the continuous schedule.

Each ratio of the two policies comes with a range that varies what the simulation takes
from the measurements: the simulation is run again once per round of the sweeps, with
the step at every occupancy and the prefill as that round measured them, and the range
runs from the smallest of those ratios (and the one at the medians) to the largest.
Shifting every cost together, as a slower machine would, moves no ratio; a round's
costs move apart as the measurements did.
"""

from __future__ import annotations

import statistics

from measure.experiments.batching.config import Config
from measure.experiments.batching.tables import ARRIVAL_RATIOS, POLICY_RATIOS
from measure.lab.context import Context
from measure.lab.medians import Estimate
from measure.sim.batching_sim import arrival_rows, memory_rows, policy_rows
from measure.sim.scheduler import skewed_lengths


def workload(cfg: Config) -> tuple[list[int], list[dict], dict]:
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


def rounds(costs: dict, prefill_est: Estimate) -> list[tuple[dict[int, float], float]]:
    """The costs as each round measured them: sample i of the step at every occupancy (one
    round of one interleaved sweep; ``costs`` holds each occupancy's result, its eager
    step as ``eager``) and sample i of the prefill, for every round all of them reached."""
    n = min(prefill_est.n, *(r.eager.n for r in costs.values()))
    return [({k: r.eager.samples_s[i] for k, r in costs.items()}, prefill_est.samples_s[i]) for i in range(n)]


def ranges(median: dict, each_round: list[dict], names) -> dict:
    """Each ratio of ``names`` with ``_low`` and ``_high``: the smallest and the largest of
    the ratio simulated with the costs' medians and with each round's costs."""
    out = {}
    for n in names:
        every = [median[n], *(r[n] for r in each_round)]
        out |= {n: median[n], f"{n}_low": min(every), f"{n}_high": max(every)}
    return out


def simulations(cfg: Config, ctx: Context, costs: dict, prefill_est: Estimate, bytes_per_token: int):
    """The simulated tables and their values (see the module's docstring)."""
    lengths, workload_rows, values = workload(cfg)
    medians = {k: r.eager.median_s for k, r in costs.items()}
    per_round = rounds(costs, prefill_est)
    ctx.log(f"  simulating static and continuous batching of {len(lengths)} requests on {cfg.slots} slots")
    policies, timeline, v3, continuous = policy_rows(lengths, cfg.slots, medians)
    again = [policy_rows(lengths, cfg.slots, c)[2] for c, _ in per_round]
    values |= v3 | ranges(v3, again, POLICY_RATIOS)
    loads = ", ".join(f"{x:g}" for x in cfg.loads)
    ctx.log(f"  simulating the same requests arriving over time, at {loads} of static batching's capacity")

    def arrive(steps: dict[int, float], prefill_s: float):
        return arrival_rows(lengths, cfg.slots, steps, prefill_s=prefill_s, loads=cfg.loads, seed=cfg.arrival_seed)

    arrivals, ratios, arrival_requests, v5 = arrive(medians, prefill_est.median_s)
    again = [arrive(c, p) for c, p in per_round]
    ratios = [
        {k: r[k] for k in _ARRIVAL_ORDER} | ranges(r, [a[1][i] for a in again], ARRIVAL_RATIOS)
        for i, r in enumerate(ratios)
    ]
    values |= v5 | ranges(v5, [a[3] for a in again], ("capacity_ratio",))
    values |= {"knee_confirmations": cfg.knee_confirmations, "simulated_rounds": len(per_round)}
    paged, memory_steps, v4 = memory_rows(
        lengths,
        continuous,
        prompt_tokens=cfg.prompt_tokens,
        shared_prefix_tokens=cfg.shared_prefix_tokens,
        block_tokens=cfg.block_tokens,
        bytes_per_token=bytes_per_token,
    )
    values |= v4 | {
        "kv_bytes_per_token": bytes_per_token,
        "prompt_tokens": cfg.prompt_tokens,
        "shared_prefix_tokens": cfg.shared_prefix_tokens,
        "block_tokens": cfg.block_tokens,
    }
    tables = {
        "workload": workload_rows,
        "policies": policies,
        "timeline": timeline,
        "arrivals": arrivals,
        "arrival_ratios": ratios,
        "arrival_requests": arrival_requests,
        "paged": paged,
        "memory_steps": memory_steps,
    }
    return tables, values


_ARRIVAL_ORDER = ("load", "rate_req_s", "continuous_load")


def resimulate(cfg: Config, rows) -> dict[str, list[dict]]:
    """The simulated tables worked out again from a run's recorded costs (``rows(table)``
    reads one of the run's tables: the medians of ``step_costs`` at every occupancy and
    the prefill of ``prompt_tokens`` in ``prefill_costs``), without the ranges, which need
    each round's samples: what the drift gate holds the committed simulated tables to
    (``measure/resimulation.py``)."""
    lengths, _, _ = workload(cfg)
    medians = {int(r["occupancy"]): float(r["step_ms"]) / 1e3 for r in rows("step_costs")}
    prefills = rows("prefill_costs")
    (prefill_ms,) = [float(r["prefill_ms"]) for r in prefills if int(r["prompt_tokens"]) == cfg.prompt_tokens]
    policies, timeline, _, _ = policy_rows(lengths, cfg.slots, medians)
    arrivals, ratios, arrival_requests, _ = arrival_rows(
        lengths, cfg.slots, medians, prefill_s=prefill_ms / 1e3, loads=cfg.loads, seed=cfg.arrival_seed
    )
    return {
        "policies": policies,
        "timeline": timeline,
        "arrivals": arrivals,
        "arrival_ratios": [{k: r[k] for k in (*_ARRIVAL_ORDER, *ARRIVAL_RATIOS)} for r in ratios],
        "arrival_requests": arrival_requests,
    }
