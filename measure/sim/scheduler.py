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
into times with a per-step cost that depends on how many slots are computing. Requests
that arrive over time instead, each with its prompt to prefill, are ``arrivals``.
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


def check_workload(lengths: Sequence[int], slots: int) -> None:
    if slots < 1:
        raise ValueError("slots must be at least 1")
    if any(n < 1 for n in lengths):
        raise ValueError("every request generates at least one token")


def static_schedule(lengths: Sequence[int], slots: int) -> Schedule:
    check_workload(lengths, slots)
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
    check_workload(lengths, slots)
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
