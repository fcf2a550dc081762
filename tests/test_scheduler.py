"""Static and continuous batching: schedules worked by hand, and invariants on the real workload."""

import statistics

import pytest

from measure.sim.arrivals import ArrivalRun, Served, poisson_arrivals, serve, serve_continuous, serve_static
from measure.sim.scheduler import (
    Span,
    continuous_schedule,
    percentile,
    schedule,
    skewed_lengths,
    static_schedule,
    timed,
)

# Three requests of 3, 1 and 2 tokens on 2 slots, every step costing 1 s.
#
# static:      slot 0: r0 r0 r0 | r2 r2        continuous: slot 0: r0 r0 r0
#              slot 1: r1 .. .. |  (idle)                  slot 1: r1 r2 r2
#              (.. = padding; r0, r1 return at 3; r2 at 5)   (r1 returns at 1, r0 and r2 at 3)


def test_static_by_hand():
    s = static_schedule([3, 1, 2], slots=2)
    assert s.spans == (Span(0, 0, 0, 3, 3), Span(1, 1, 0, 1, 3), Span(2, 0, 3, 5, 5))
    assert s.occupancy == (2, 2, 2, 1, 1)  # padding is computed: the first group stays at 2
    assert s.live == (2, 1, 1, 1, 1)
    assert s.useful_tokens == 6 and s.steps == 5
    assert s.utilisation == pytest.approx(6 / 10)
    t = timed(s, lambda k: 1.0)
    assert t.latencies_s() == [3.0, 3.0, 5.0]
    assert t.summary()["total_s"] == 5.0 and t.summary()["throughput_tok_s"] == pytest.approx(6 / 5)


def test_continuous_by_hand():
    s = continuous_schedule([3, 1, 2], slots=2)
    assert s.spans == (Span(0, 0, 0, 3, 3), Span(1, 1, 0, 1, 1), Span(2, 1, 1, 3, 3))
    assert s.occupancy == (2, 2, 2)
    assert s.utilisation == 1.0
    t = timed(s, lambda k: 1.0)
    assert t.latencies_s() == [3.0, 1.0, 3.0]
    assert t.summary()["mean_latency_s"] == pytest.approx(7 / 3)


def test_step_cost_follows_occupancy():
    # r0 runs alone for its last step: 2 + 2 + 1 seconds with costs {1: 1, 2: 2}.
    s = continuous_schedule([3, 2], slots=2)
    assert s.occupancy == (2, 2, 1)
    t = timed(s, {1: 1.0, 2: 2.0})
    assert t.step_end == (2.0, 4.0, 5.0)
    assert t.latencies_s() == [5.0, 4.0]


def test_admission_is_at_the_very_next_step():
    s = continuous_schedule([1, 5, 2, 2], slots=2)
    # r0 ends after step 0, so r2 starts at step 1 in r0's slot; r2 ends after step 2, r3 starts at 3.
    assert s.spans[2] == Span(2, 0, 1, 3, 3)
    assert s.spans[3] == Span(3, 0, 3, 5, 5)


def test_percentile_matches_linear_interpolation():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10], 95) == 10
    assert percentile(list(range(101)), 95) == 95
    assert percentile([1, 2], 95) == pytest.approx(1.95)


@pytest.fixture(scope="module")
def workload():
    return skewed_lengths(64, median=18, sigma=1.0, seed=2)


def test_workload_is_fixed_and_skewed(workload):
    assert workload == skewed_lengths(64, median=18, sigma=1.0, seed=2)
    assert 16 <= statistics.median(workload) <= 20  # spec §4.2: median near 18
    assert 150 <= max(workload) <= 400  # a long tail to a few hundred
    assert 1700 <= sum(workload) <= 2100  # near the source's 1,874
    assert min(workload) >= 1


@pytest.mark.parametrize("policy", ["static", "continuous"])
@pytest.mark.parametrize("slots", [1, 3, 8])
def test_invariants(workload, policy, slots):
    s = schedule(policy, workload, slots)
    assert [sp.request for sp in s.spans] == list(range(len(workload)))
    assert all(sp.tokens == n for sp, n in zip(s.spans, workload, strict=True))  # every token generated
    assert all(sp.start < sp.finish <= sp.release for sp in s.spans)
    assert s.useful_tokens == sum(workload)
    assert all(0 < k <= slots for k in s.occupancy)
    # No request starts before a slot is free: spans sharing a slot never overlap.
    for slot in range(slots):
        mine = sorted((sp for sp in s.spans if sp.slot == slot), key=lambda sp: sp.start)
        assert all(a.release <= b.start for a, b in zip(mine, mine[1:], strict=False))
    # At no step do more requests hold slots than there are slots.
    for step in range(s.steps):
        holding = sum(1 for sp in s.spans if sp.start <= step < sp.release)
        assert holding <= slots
    # Requests start in arrival order.
    starts = [sp.start for sp in s.spans]
    assert starts == sorted(starts)


def test_continuous_never_worse_on_the_workload(workload):
    st, co = static_schedule(workload, 8), continuous_schedule(workload, 8)
    assert co.steps < st.steps
    assert co.utilisation > st.utilisation
    # Continuous keeps every slot busy until the queue is empty.
    last_admission = max(sp.start for sp in co.spans)
    assert all(k == 8 for k in co.occupancy[: last_admission + 1])


def test_unknown_policy_and_bad_input():
    with pytest.raises(ValueError, match="unknown policy"):
        schedule("greedy", [1], 1)
    with pytest.raises(ValueError):
        static_schedule([0, 1], 1)
    with pytest.raises(ValueError):
        continuous_schedule([1], 0)


def test_the_published_workload_is_what_the_generator_gives():
    """The committed batching workload against a fresh draw from its recorded seed: the
    published numbers are reproducible, not merely self-consistent."""
    import csv
    import json

    from tests.conftest import REPO

    folder = REPO / "site_data" / "batching"
    p = json.loads((folder / "meta.json").read_text())["parameters"]
    with open(folder / "workload.csv", newline="") as f:
        published = [int(r["output_tokens"]) for r in csv.DictReader(f)]
    assert skewed_lengths(
        p["requests"], median=p["output_median"], sigma=p["output_sigma"], seed=p["workload_seed"]
    ) == (published)


def test_lengths_are_lognormal_around_their_median_and_at_least_one():
    import math

    many = skewed_lengths(20_000, median=50, sigma=0.5, seed=1)
    assert 48 <= statistics.median(many) <= 52
    logs = [math.log(n) for n in many]
    assert 0.47 <= statistics.pstdev(logs) <= 0.53
    tiny = skewed_lengths(1000, median=1, sigma=1.0, seed=0)
    assert min(tiny) == 1 and tiny.count(1) > 300  # rounded to 0 and raised to the floor of 1


def test_refusals_say_why():
    cases = [
        (lambda: static_schedule([1], 0), "slots must be at least 1"),
        (lambda: continuous_schedule([1, 0], 2), "every request generates at least one token"),
        (lambda: schedule("greedy", [1], 1), "unknown policy 'greedy'; known: static, continuous"),
        (lambda: percentile([], 50), "percentile of nothing"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == message


def test_schedules_name_their_policy():
    assert static_schedule([1], 1).policy == "static" and continuous_schedule([1], 1).policy == "continuous"
    t = timed(continuous_schedule([2], 1), {1: 0.5})
    assert (t.at(0), t.at(1), t.at(2), t.total_s) == (0.0, 0.5, 1.0, 1.0)


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_LENGTHS = st.lists(st.integers(1, 40), min_size=1, max_size=25)


@given(lengths=_LENGTHS, slots=st.integers(1, 6), policy=st.sampled_from(["static", "continuous"]))
def test_every_schedule_conserves_tokens_and_slots(lengths, slots, policy):
    s = schedule(policy, lengths, slots)
    assert s.useful_tokens == sum(lengths) == sum(sp.tokens for sp in s.spans)
    assert [sp.tokens for sp in s.spans] == lengths
    assert all(0 < k <= slots for k in s.occupancy) and all(
        live <= k for live, k in zip(s.live, s.occupancy, strict=True)
    )
    for slot in range(slots):
        mine = sorted((sp for sp in s.spans if sp.slot == slot), key=lambda sp: sp.start)
        assert all(a.release <= b.start for a, b in zip(mine, mine[1:], strict=False))
    assert 0 < s.utilisation <= 1
    t = timed(s, lambda k: 1.0 + 0.25 * k)
    assert t.total_s == pytest.approx(sum(1.0 + 0.25 * k for k in s.occupancy))
    assert all(lat <= t.total_s for lat in t.latencies_s())


@given(lengths=_LENGTHS, slots=st.integers(1, 6))
def test_continuous_batching_never_takes_more_steps_than_static(lengths, slots):
    st_, co = static_schedule(lengths, slots), continuous_schedule(lengths, slots)
    assert co.steps <= st_.steps
    assert co.utilisation >= st_.utilisation
    assert max(lengths) <= co.steps  # no request finishes before it has generated its tokens


@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30), q=st.floats(0, 100))
def test_a_percentile_lies_between_the_neighbouring_values(values, q):
    p = percentile(values, q)
    assert min(values) <= p <= max(values)
    assert percentile(values, 0) == min(values) and percentile(values, 100) == max(values)


# Requests arriving over time. Three requests of 3, 1 and 2 tokens arrive at 0, 1 and 2 s
# on 2 slots; every prefill takes 1 s (and yields the first token); a decode step costs
# 1 s alone and 1.5 s with two requests.
#
# continuous: 0-1 prefill r0 (slot 0) | 1-2 prefill r1 (slot 1): its only token, done at 2
#             2-3 prefill r2 (slot 1) | 3-4.5 decode r0, r2: r2 done | 4.5-5.5 decode r0: done
# static:     0-1 prefill r0 (alone: nobody else is waiting) | 1-2, 2-3 decode r0: group ends at 3
#             3-4 prefill r1, 4-5 prefill r2 | 5-6.5 decode r2 (r1 as padding): group ends at 6.5
_ARRIVALS, _LENGTHS3 = [0.0, 1.0, 2.0], [3, 1, 2]
_COSTS = dict(prefill_s=[1.0, 1.0, 1.0], step_cost={1: 1.0, 2: 1.5}.__getitem__)


def test_continuous_under_arrivals_by_hand():
    run = serve_continuous(_ARRIVALS, _LENGTHS3, 2, **_COSTS)
    assert run.served == (
        Served(0, 0, 0.0, 0.0, 1.0, 5.5, 5.5),
        Served(1, 1, 1.0, 1.0, 2.0, 2.0, 2.0),
        Served(2, 1, 2.0, 2.0, 3.0, 4.5, 4.5),
    )
    assert [s.latency for s in run.served] == [5.5, 1.0, 2.5]
    assert [s.ttft for s in run.served] == [1.0, 1.0, 1.0]
    assert run.decode_steps == ((2, 2), (1, 1))
    assert (run.prefill_s, run.decode_s, run.total_s) == (3.0, 2.5, 5.5)
    assert run.useful_tokens == 6 and run.utilisation == pytest.approx(3 / 4)
    s = run.summary()
    assert s["mean_latency_s"] == pytest.approx(9 / 3) and s["p50_latency_s"] == 2.5
    # Sorted 1, 2.5, 5.5: rank 2 x 0.99 = 1.98 lies 98% of the way from 2.5 to 5.5.
    assert s["p99_latency_s"] == pytest.approx(2.5 + 0.98 * 3.0)
    assert s["throughput_tok_s"] == pytest.approx(6 / 5.5)


def test_static_under_arrivals_by_hand():
    run = serve_static(_ARRIVALS, _LENGTHS3, 2, **_COSTS)
    assert run.served == (
        Served(0, 0, 0.0, 0.0, 1.0, 3.0, 3.0),
        Served(1, 0, 1.0, 3.0, 4.0, 4.0, 6.5),
        Served(2, 1, 2.0, 4.0, 5.0, 6.5, 6.5),
    )
    assert [s.latency for s in run.served] == [3.0, 5.5, 4.5]
    assert [s.ttft for s in run.served] == [1.0, 3.0, 3.0]
    assert run.decode_steps == ((1, 1), (1, 1), (2, 1))  # the last step computes r1 as padding
    assert (run.prefill_s, run.decode_s, run.total_s) == (3.0, 3.5, 6.5)
    assert run.utilisation == pytest.approx(3 / 6)


def test_an_idle_engine_waits_for_the_next_arrival():
    # One slot; r1 arrives long after r0 is done: it starts on arrival, not before.
    for policy in ("static", "continuous"):
        run = serve(policy, [0.0, 10.0], [2, 2], 1, prefill_s=[1.0, 1.0], step_cost=lambda k: 1.0)
        assert [(s.admitted, s.release) for s in run.served] == [(0.0, 2.0), (10.0, 12.0)]


def test_poisson_arrivals_are_seeded_and_scale_with_the_rate():
    a = poisson_arrivals(200, rate=4.0, seed=0)
    assert a == poisson_arrivals(200, rate=4.0, seed=0) != poisson_arrivals(200, rate=4.0, seed=1)
    assert a == sorted(a) and a[0] > 0
    assert poisson_arrivals(200, rate=2.0, seed=0) == pytest.approx([2 * t for t in a])
    assert a[-1] / 200 == pytest.approx(1 / 4.0, rel=0.2)  # mean gap near 1 / rate
    with pytest.raises(ValueError, match="positive"):
        poisson_arrivals(3, rate=0.0, seed=0)


def test_arrival_input_is_checked():
    with pytest.raises(ValueError, match="2 arrival times for 3 requests"):
        serve_continuous([0.0, 1.0], [1, 1, 1], 1, **_COSTS)
    with pytest.raises(ValueError, match="must not decrease"):
        serve_static([1.0, 0.0, 2.0], [1, 1, 1], 1, **_COSTS)
    with pytest.raises(ValueError, match="unknown policy"):
        serve("fifo", [0.0], [1], 1, prefill_s=[1.0], step_cost=lambda k: 1.0)


@given(
    lengths=_LENGTHS,
    slots=st.integers(1, 6),
    gaps=st.lists(st.floats(0, 5), min_size=25, max_size=25),
    policy=st.sampled_from(["static", "continuous"]),
)
def test_every_request_is_served_once_and_no_slot_holds_two(lengths, slots, gaps, policy):
    arrivals = [sum(gaps[: i + 1]) for i in range(len(lengths))]
    prefill = [0.5 + 0.01 * n for n in lengths]
    run = serve(policy, arrivals, lengths, slots, prefill_s=prefill, step_cost=lambda k: 1.0 + 0.25 * k)
    assert [s.request for s in run.served] == list(range(len(lengths)))
    assert run.useful_tokens == sum(lengths)
    for s, a, p, n in zip(run.served, arrivals, prefill, lengths, strict=True):
        assert a <= s.admitted and s.first_token == pytest.approx(s.admitted + p)
        assert s.first_token <= s.finish <= s.release
        # At least its prefill and n - 1 steps, each costing at least a lone step.
        assert s.finish - s.admitted >= p + (n - 1) * 1.25 - 1e-9
    for slot in range(slots):
        mine = sorted((s for s in run.served if s.slot == slot), key=lambda s: s.admitted)
        assert all(a.release <= b.admitted + 1e-9 for a, b in zip(mine, mine[1:], strict=False))
    assert all(0 < k <= slots and 0 <= u <= k for k, u in run.decode_steps)
    # The engine is never busy for longer than the run: prefills and steps do not overlap.
    assert run.prefill_s + run.decode_s <= run.total_s + 1e-9


def test_refusals_under_arrivals_say_exactly_why():
    with pytest.raises(ValueError, match=r"^arrival times must not decrease \(requests are queued in arrival order\)$"):
        serve_static([1.0, 0.0, 2.0], [1, 1, 1], 1, **_COSTS)
    with pytest.raises(ValueError, match=r"^the arrival rate must be positive$"):
        poisson_arrivals(3, rate=-1.0, seed=0)
    with pytest.raises(ValueError, match=r"^unknown policy 'fifo'; known: static, continuous$"):
        serve("fifo", [0.0], [1], 1, prefill_s=[1.0], step_cost=lambda k: 1.0)


def test_runs_under_arrivals_name_their_policy():
    for policy in ("static", "continuous"):
        assert serve(policy, _ARRIVALS, _LENGTHS3, 2, **_COSTS).policy == policy


def test_static_groups_fill_the_slots_and_take_whoever_is_there():
    # Three one-token requests at t = 0 on 2 slots: the first group is exactly two (both
    # present at 0, so "arrived by now" includes "arrived just now"), prefilled one after
    # the other and returned together at 2; the third waits for the group, in slot 0.
    run = serve_static([0.0, 0.0, 0.0], [1, 1, 1], 2, prefill_s=[1.0] * 3, step_cost=lambda k: 1.0)
    assert [(s.slot, s.admitted, s.release) for s in run.served] == [(0, 0.0, 2.0), (1, 1.0, 2.0), (0, 2.0, 3.0)]


def test_summary_percentiles_and_means_by_hand():
    # Latencies 1, 2, 3, 4, 5 (linear interpolation: p95 at rank 3.8 = 4.8) and time to
    # first token 1, 1, 1, 1, 6 (mean 2, p95 at rank 3.8 = 1 + 0.8 x 5 = 5).
    served = tuple(
        Served(i, 0, 0.0, 0.0, ft, lat, lat)
        for i, (ft, lat) in enumerate(zip([1, 1, 1, 1, 6], [1, 2, 3, 4, 5], strict=True))
    )
    s = ArrivalRun("static", 1, served, ((1, 1),), 1.0, 4.0).summary()
    assert s["p95_latency_s"] == pytest.approx(4.8) and s["mean_ttft_s"] == pytest.approx(2.0)
    assert s["p95_ttft_s"] == pytest.approx(5.0)


def test_a_static_group_never_takes_a_request_that_has_not_arrived():
    # Room for three, but r2 arrives at 9: the group is r0 and r1, and r2 starts on arrival.
    run = serve_static([0.0, 0.0, 9.0], [1, 1, 1], 3, prefill_s=[1.0] * 3, step_cost=lambda k: 1.0)
    assert [s.admitted for s in run.served] == [0.0, 1.0, 9.0]
