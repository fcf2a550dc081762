"""Static and continuous batching of requests arriving over time: pure Python, no model.

The schedules of ``scheduler`` queue every request at time zero and count in steps.
Here requests arrive over time (seconds), and each must have its prompt processed
before it decodes, so the simulation keeps a clock instead of a step counter.

Prefill is scheduled as its own step: when a slot is free and a request is waiting,
its prompt is processed alone (the engine decodes nothing meanwhile), which yields its
first token; from the next decode step on it joins the batch for its remaining tokens.
Waiting requests are admitted before the next decode step (prefill first), so a free
slot never idles while someone waits. This is the simple policy of early continuous
batching servers; mixing a prefill into a decode step (chunked prefill) needs a cost
for such mixed steps, which the sweep does not measure.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from measure.sim.scheduler import POLICIES, check_workload, percentile


def poisson_arrivals(n: int, *, rate: float, seed: int) -> list[float]:
    """``n`` arrival times (seconds) of a Poisson process of ``rate`` requests per second.

    Inter-arrival gaps are ``-ln(1 - u) / rate`` over ``random.Random(seed).random()``:
    the same seed gives the same unit gaps at every rate, so two rates differ only in
    the scale of time, not in the pattern of bursts."""
    if rate <= 0:
        raise ValueError("the arrival rate must be positive")
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(n):
        t += -math.log(1.0 - rng.random()) / rate
        out.append(t)
    return out


@dataclass(frozen=True)
class Served:
    """One request's life under arrivals, in seconds from time zero.

    Its prompt is processed in ``[admitted, first_token)``; it holds ``slot`` from
    ``admitted`` until ``finish`` (its last token) and, under static batching, until
    ``release`` (the group's end, when every result of the group returns)."""

    request: int
    slot: int
    arrival: float
    admitted: float
    first_token: float
    finish: float
    release: float

    @property
    def latency(self) -> float:
        return self.release - self.arrival

    @property
    def ttft(self) -> float:
        """Time to first token: waiting for a slot, then the prefill."""
        return self.first_token - self.arrival


@dataclass(frozen=True)
class ArrivalRun:
    policy: str
    slots: int
    served: tuple[Served, ...]  # indexed by request
    decode_steps: tuple[tuple[int, int], ...]  # per decode step: (slots computing, useful tokens)
    prefill_s: float  # engine time spent in prefills
    decode_s: float  # engine time spent in decode steps

    @property
    def total_s(self) -> float:
        """From time zero to the last result returned."""
        return max(s.release for s in self.served)

    @property
    def useful_tokens(self) -> int:
        """Every output token: the first from the prefill, the rest from decode steps."""
        return len(self.served) + sum(useful for _, useful in self.decode_steps)

    @property
    def utilisation(self) -> float:
        """Useful slot-steps over all slot-steps of the decode steps (as for the schedules of ``scheduler``)."""
        steps = len(self.decode_steps)
        return sum(u for _, u in self.decode_steps) / (self.slots * steps) if steps else 0.0

    def summary(self) -> dict[str, float]:
        lat = [s.latency for s in self.served]
        ttft = [s.ttft for s in self.served]
        return {
            "total_s": self.total_s,
            "throughput_tok_s": self.useful_tokens / self.total_s,
            "mean_latency_s": sum(lat) / len(lat),
            "p50_latency_s": percentile(lat, 50),
            "p95_latency_s": percentile(lat, 95),
            "p99_latency_s": percentile(lat, 99),
            "mean_ttft_s": sum(ttft) / len(ttft),
            "p95_ttft_s": percentile(ttft, 95),
        }


def _check_arrivals(arrivals: Sequence[float], lengths: Sequence[int], slots: int) -> None:
    check_workload(lengths, slots)
    if len(arrivals) != len(lengths):
        raise ValueError(f"{len(arrivals)} arrival times for {len(lengths)} requests")
    if any(b < a for a, b in zip(arrivals, arrivals[1:], strict=False)):
        raise ValueError("arrival times must not decrease (requests are queued in arrival order)")


def serve_continuous(
    arrivals: Sequence[float],
    lengths: Sequence[int],
    slots: int,
    *,
    prefill_s: Sequence[float],
    step_cost: Callable[[int], float],
) -> ArrivalRun:
    """Continuous batching under arrivals: request i arrives at ``arrivals[i]``, costs
    ``prefill_s[i]`` to prefill (its first token) and then ``lengths[i] - 1`` decode
    steps, each costing ``step_cost(requests in the step)``."""
    _check_arrivals(arrivals, lengths, slots)
    n = len(lengths)
    t, nxt = 0.0, 0  # the clock; the next request not yet admitted (arrival order)
    running: dict[int, list] = {}  # slot -> [request, admitted, first token, tokens still to decode]
    served: dict[int, Served] = {}
    steps, pre, dec = [], 0.0, 0.0
    while nxt < n or running:
        free = [s for s in range(slots) if s not in running]
        if free and nxt < n and arrivals[nxt] <= t:
            slot, req = free[0], nxt
            nxt += 1
            start, t = t, t + prefill_s[req]
            pre += prefill_s[req]
            if lengths[req] == 1:  # the prefill's token was its only one
                served[req] = Served(req, slot, arrivals[req], start, t, t, t)
            else:
                running[slot] = [req, start, t, lengths[req] - 1]
            continue
        if not running:  # idle until the next arrival
            t = arrivals[nxt]
            continue
        cost = step_cost(len(running))
        t += cost
        dec += cost
        steps.append((len(running), len(running)))
        for slot, r in list(running.items()):
            r[3] -= 1
            if r[3] == 0:
                served[r[0]] = Served(r[0], slot, arrivals[r[0]], r[1], r[2], t, t)
                del running[slot]
    return ArrivalRun("continuous", slots, tuple(served[i] for i in range(n)), tuple(steps), pre, dec)


def serve_static(
    arrivals: Sequence[float],
    lengths: Sequence[int],
    slots: int,
    *,
    prefill_s: Sequence[float],
    step_cost: Callable[[int], float],
) -> ArrivalRun:
    """Static batching under arrivals: whenever the engine is free, the requests already
    waiting (up to ``slots``; if none, the next one to arrive) form a group. Each is
    prefilled in turn, then the group decodes until its longest member is done, members
    that finished early computed as padding; every result returns when the group ends.
    Requests arriving meanwhile wait for the next group. (Waiting to fill a group would
    only add latency at low rates.)"""
    _check_arrivals(arrivals, lengths, slots)
    n = len(lengths)
    t, nxt = 0.0, 0
    served: list[Served] = []
    steps, pre, dec = [], 0.0, 0.0
    while nxt < n:
        t = max(t, arrivals[nxt])
        group = [nxt]
        while len(group) < slots and group[-1] + 1 < n and arrivals[group[-1] + 1] <= t:
            group.append(group[-1] + 1)
        nxt = group[-1] + 1
        started, first = {}, {}
        for req in group:
            started[req] = t
            t += prefill_s[req]
            pre += prefill_s[req]
            first[req] = t
        decode = {req: lengths[req] - 1 for req in group}
        finish = dict(first)
        for k in range(max(decode.values())):
            cost = step_cost(len(group))  # padding is computed too
            t += cost
            dec += cost
            steps.append((len(group), sum(1 for req in group if decode[req] > k)))
            for req in group:
                if decode[req] == k + 1:
                    finish[req] = t
        for slot, req in enumerate(group):
            served.append(Served(req, slot, arrivals[req], started[req], first[req], finish[req], t))
    return ArrivalRun("static", slots, tuple(served), tuple(steps), pre, dec)


def serve(policy: str, arrivals: Sequence[float], lengths: Sequence[int], slots: int, **costs) -> ArrivalRun:
    if policy == "static":
        return serve_static(arrivals, lengths, slots, **costs)
    if policy == "continuous":
        return serve_continuous(arrivals, lengths, slots, **costs)
    raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")
