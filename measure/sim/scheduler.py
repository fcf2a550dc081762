"""Static and continuous batching, simulated step by step: pure Python, no model.

A workload is a list of output lengths (decode steps per request), all queued at time
zero in list order, served by a fixed number of slots. One *step* generates one token
for every request that is computing in it.

* **static**: requests are taken in groups of ``slots``; a group runs until its longest
  member is done; a member that finished early keeps its slot as padding (it is still
  computed, its output discarded) and every result of the group returns when the
  group ends.
* **continuous**: a slot freed at the end of a step admits the next queued request for
  the very next step; a result returns as soon as its last token is generated.

A schedule is counted in steps (exact, from the workload alone); ``timed`` turns it
into times with a per-step cost that depends on how many slots are computing.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

POLICIES = ("static", "continuous")


def skewed_lengths(n: int, *, median: float, sigma: float, seed: int) -> list[int]:
    """``n`` lognormal output lengths (at least 1 token) with the given median.

    Box-Muller over ``random.Random(seed).random()``, whose sequence Python keeps
    stable across versions (the library's own gauss/lognormvariate are not promised),
    so the same seed gives the same sample everywhere.
    """
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        u1, u2 = rng.random(), rng.random()
        z = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
        out.append(max(1, round(median * math.exp(sigma * z))))
    return out


@dataclass(frozen=True)
class Span:
    """One request's stay in a slot, in steps (0-based, half-open intervals).

    It computes its tokens in steps ``[start, finish)`` and holds its slot until
    ``release`` (``release > finish`` is padding: static batching only)."""

    request: int
    slot: int
    start: int
    finish: int
    release: int

    @property
    def tokens(self) -> int:
        return self.finish - self.start


@dataclass(frozen=True)
class Schedule:
    policy: str
    slots: int
    spans: tuple[Span, ...]  # indexed by request
    occupancy: tuple[int, ...]  # per step: slots computing (padding included)
    live: tuple[int, ...]  # per step: requests still generating a useful token

    @property
    def steps(self) -> int:
        return len(self.occupancy)

    @property
    def useful_tokens(self) -> int:
        return sum(self.live)

    @property
    def utilisation(self) -> float:
        """Useful slot-steps over all slot-steps: 1 means no slot ever idled or padded."""
        return self.useful_tokens / (self.slots * self.steps)


def _check(lengths: Sequence[int], slots: int) -> None:
    if slots < 1:
        raise ValueError("slots must be at least 1")
    if any(n < 1 for n in lengths):
        raise ValueError("every request generates at least one token")


def static_schedule(lengths: Sequence[int], slots: int) -> Schedule:
    _check(lengths, slots)
    spans, occupancy, live = [], [], []
    step = 0
    for first in range(0, len(lengths), slots):
        group = lengths[first : first + slots]
        end = step + max(group)
        for slot, n in enumerate(group):
            spans.append(Span(first + slot, slot, step, step + n, end))
        for s in range(step, end):
            occupancy.append(len(group))  # padding is computed too
            live.append(sum(1 for n in group if step + n > s))
        step = end
    return Schedule("static", slots, tuple(spans), tuple(occupancy), tuple(live))


def continuous_schedule(lengths: Sequence[int], slots: int) -> Schedule:
    _check(lengths, slots)
    queue = list(range(len(lengths)))
    running: dict[int, tuple[int, int]] = {}  # slot -> (request, start step)
    spans: dict[int, Span] = {}
    occupancy, live = [], []
    step = 0
    while queue or running:
        for slot in range(slots):  # admit into free slots, lowest first, in queue order
            if slot not in running and queue:
                running[slot] = (queue.pop(0), step)
        occupancy.append(len(running))
        live.append(len(running))
        for slot, (req, start) in list(running.items()):
            if step + 1 - start == lengths[req]:  # its last token came out of this step
                spans[req] = Span(req, slot, start, step + 1, step + 1)
                del running[slot]
        step += 1
    return Schedule("continuous", slots, tuple(spans[r] for r in range(len(lengths))), tuple(occupancy), tuple(live))


def schedule(policy: str, lengths: Sequence[int], slots: int) -> Schedule:
    if policy == "static":
        return static_schedule(lengths, slots)
    if policy == "continuous":
        return continuous_schedule(lengths, slots)
    raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear between closest ranks (NumPy's default)."""
    s = sorted(values)
    if not s:
        raise ValueError("percentile of nothing")
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


@dataclass(frozen=True)
class Timed:
    """A schedule with times: ``step_end[k]`` is when step k ends (seconds, from 0)."""

    schedule: Schedule
    step_end: tuple[float, ...]

    def at(self, step: int) -> float:
        """When step ``step`` begins (= when step ``step - 1`` ends)."""
        return 0.0 if step == 0 else self.step_end[step - 1]

    @property
    def total_s(self) -> float:
        return self.step_end[-1]

    def latencies_s(self) -> list[float]:
        """From arrival (time zero, for everyone) until the result returns."""
        return [self.at(sp.release) for sp in self.schedule.spans]

    def summary(self) -> dict[str, float]:
        lat = self.latencies_s()
        return {
            "total_s": self.total_s,
            "throughput_tok_s": self.schedule.useful_tokens / self.total_s,
            "mean_latency_s": sum(lat) / len(lat),
            "p50_latency_s": percentile(lat, 50),
            "p95_latency_s": percentile(lat, 95),
            "p99_latency_s": percentile(lat, 99),
        }


def timed(sched: Schedule, step_cost: Mapping[int, float] | Callable[[int], float]) -> Timed:
    """Times for a schedule, each step costing ``step_cost[occupancy]`` seconds."""
    cost = step_cost if callable(step_cost) else step_cost.__getitem__
    ends, t = [], 0.0
    for k in sched.occupancy:
        t += cost(k)
        ends.append(t)
    return Timed(sched, tuple(ends))


# Requests arriving over time
#
# The schedules above queue every request at time zero and count in steps. Below,
# requests arrive over time (seconds), and each must have its prompt processed before it
# decodes, so the simulation keeps a clock instead of a step counter.
#
# Prefill is scheduled as its own step: when a slot is free and a request is waiting,
# its prompt is processed alone (the engine decodes nothing meanwhile), which yields its
# first token; from the next decode step on it joins the batch for its remaining tokens.
# Waiting requests are admitted before the next decode step (prefill first), so a free
# slot never idles while someone waits. This is the simple policy of early continuous
# batching servers; mixing a prefill into a decode step (chunked prefill) needs a cost
# for such mixed steps, which the sweep does not measure.


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
        """Useful slot-steps over all slot-steps of the decode steps (as for the schedules above)."""
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
    _check(lengths, slots)
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
