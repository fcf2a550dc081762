"""The batching page's simulated rows (measure/sim/batching_sim.py), worked by hand on a
workload small enough to follow step by step."""

import pytest

from measure.sim.arrivals import poisson_arrivals, serve
from measure.sim.batching_sim import arrival_rows, capacity_req_s, memory_rows, policy_rows, static_capacity_req_s
from measure.sim.scheduler import percentile

# Three requests of 3, 1 and 2 tokens on 2 slots; a step costs 1.0 s with one request
# computing and 1.5 s with two.
LENGTHS, SLOTS, COSTS = [3, 1, 2], 2, {1: 1.0, 2: 1.5}


@pytest.fixture  # per test: mutmut maps each mutant to the tests that call it
def policies():
    rows, timeline, values, continuous = policy_rows(LENGTHS, SLOTS, COSTS)
    return {r["policy"]: r for r in rows}, timeline, values, continuous


def test_static_by_hand(policies):
    # Group (3, 1) runs 3 steps at 1.5 s (the 1-token request pads two of them), then
    # (2) runs 2 steps at 1.0 s: steps end at 1.5, 3, 4.5, 5.5, 6.5 s. Requests 0 and
    # 1 return with their group at 4.5 s, request 2 at 6.5 s.
    r = policies[0]["static"]
    assert (r["requests"], r["slots"], r["output_tokens"], r["steps"]) == (3, 2, 6, 5)
    assert r["slot_utilisation"] == pytest.approx(6 / 10)
    assert r["mean_latency_steps"] == pytest.approx((3 + 3 + 5) / 3)
    assert r["total_ms"] == pytest.approx(6500)
    assert r["throughput_tok_s"] == pytest.approx(6 / 6.5)
    assert r["mean_latency_ms"] == pytest.approx((4.5 + 4.5 + 6.5) / 3 * 1e3)
    assert r["p50_latency_ms"] == pytest.approx(4500)
    assert r["p95_latency_ms"] == pytest.approx(6300)  # 4.5 + 0.9 x (6.5 - 4.5)


def test_continuous_by_hand(policies):
    # Step 0 runs requests 0 and 1; 1 is done and 2 takes its slot for steps 1 and 2;
    # 0 and 2 finish together at the end of step 2. Three steps of 1.5 s: 1 returns at
    # 1.5 s, 0 and 2 at 4.5 s.
    r = policies[0]["continuous"]
    assert (r["output_tokens"], r["steps"], r["slot_utilisation"]) == (6, 3, 1.0)
    assert r["mean_latency_steps"] == pytest.approx((3 + 1 + 3) / 3)
    assert r["total_ms"] == pytest.approx(4500)
    assert r["throughput_tok_s"] == pytest.approx(6 / 4.5)
    assert r["mean_latency_ms"] == pytest.approx(3500)
    assert r["p50_latency_ms"] == pytest.approx(4500)
    assert r["p95_latency_ms"] == pytest.approx(4500)


def test_summary_values_by_hand(policies):
    values = policies[2]
    assert values["throughput_ratio"] == pytest.approx(6.5 / 4.5)
    assert values["mean_latency_ratio"] == pytest.approx((15.5 / 3) / 3.5)
    assert values["p95_latency_ratio"] == pytest.approx(6.3 / 4.5)
    assert values["padding_slot_steps"] == 2  # request 1 holds its slot 2 steps after its token
    assert values["step_cost_ratio"] == 1.5


def test_timeline_by_hand(policies):
    timeline = {(t["policy"], t["request"]): t for t in policies[1]}
    assert len(timeline) == 6
    s1 = timeline[("static", 1)]
    assert (s1["slot"], s1["output_tokens"], s1["start_step"], s1["finish_step"], s1["release_step"]) == (1, 1, 0, 1, 3)
    assert (s1["start_ms"], s1["finish_ms"], s1["release_ms"]) == pytest.approx((0, 1500, 4500))
    s2 = timeline[("static", 2)]
    assert (s2["slot"], s2["start_step"], s2["release_step"]) == (0, 3, 5)
    assert (s2["start_ms"], s2["release_ms"]) == pytest.approx((4500, 6500))
    c2 = timeline[("continuous", 2)]
    assert (c2["slot"], c2["start_step"], c2["finish_step"], c2["release_step"]) == (1, 1, 3, 3)
    assert (c2["start_ms"], c2["finish_ms"]) == pytest.approx((1500, 4500))


def test_percentile_by_hand():
    assert percentile([4.5, 6.5, 4.5], 95) == pytest.approx(6.3)
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)
    assert percentile([7], 95) == 7
    assert percentile([1, 2, 3, 4, 5], 0) == 1 and percentile([1, 2, 3, 4, 5], 100) == 5
    with pytest.raises(ValueError):
        percentile([], 50)


def test_memory_by_hand():
    # Requests of 2 and 1 tokens, both admitted at step 0 with a 2-token prompt (the
    # whole prompt is the shared prefix), blocks of 2 tokens, 10 bytes a token.
    # Step 0: each holds 3 tokens. Contiguous: 2 regions of 4 (the smallest power of two
    # holding 2 + 2) = 8 reserved, 6 stored. Paged: 2 blocks each = 8, 6 stored. Shared:
    # one prefix block + one own block each = 6 reserved, 2 + 1 + 1 = 4 stored.
    # Step 1: request 1 is gone; request 0 holds 4 tokens: 4 reserved and 4 stored in
    # every scheme.
    _, _, _, sched = policy_rows([2, 1], 2, {1: 1.0, 2: 1.0})
    rows, steps, values = memory_rows(
        [2, 1], sched, prompt_tokens=2, shared_prefix_tokens=2, block_tokens=2, bytes_per_token=10
    )
    by = {r["scheme"]: r for r in rows}
    c, p, s = by["contiguous"], by["paged"], by["paged, shared prefix"]
    assert (c["unit_tokens"], p["unit_tokens"], s["unit_tokens"]) == (4, 2, 2)
    assert (c["peak_reserved_bytes"], c["peak_stored_bytes"]) == (80, 60)
    assert c["waste_at_peak"] == pytest.approx(0.25) and c["waste"] == pytest.approx(1 - 10 / 12)
    assert (p["peak_reserved_bytes"], p["waste"], p["peak_vs_contiguous"]) == (80, pytest.approx(1 - 10 / 12), 1.0)
    assert (s["peak_reserved_bytes"], s["peak_stored_bytes"]) == (60, 40)
    assert s["waste_at_peak"] == pytest.approx(1 / 3) and s["waste"] == pytest.approx(0.2)
    assert s["peak_vs_contiguous"] == pytest.approx(0.75)
    assert [st["context_bytes"] for st in steps] == [60, 40]
    assert [st["contiguous_reserved_bytes"] for st in steps] == [80, 40]
    assert [st["paged_reserved_bytes"] for st in steps] == [80, 40]
    assert [(st["shared_reserved_bytes"], st["shared_stored_bytes"]) for st in steps] == [(60, 40), (40, 40)]
    assert values["max_context_tokens"] == 4 and values["longest_request_tokens"] == 4
    assert values["stored_within_reserved"] is True
    assert values["shared_peak_vs_contiguous"] == pytest.approx(0.75)
    assert values["paged_peak_vs_contiguous"] == 1.0
    assert values["contiguous_waste"] == pytest.approx(1 / 6) and values["shared_waste"] == pytest.approx(0.2)
    assert values["paged_waste"] == pytest.approx(1 / 6)


def test_a_longest_request_that_is_a_power_of_two_reserves_exactly_it():
    # 2 + 6 = 8 tokens: the contiguous region is 8, not 16
    _, _, _, sched = policy_rows([6], 1, {1: 1.0})
    rows, _, values = memory_rows(
        [6], sched, prompt_tokens=2, shared_prefix_tokens=0, block_tokens=4, bytes_per_token=1
    )
    assert values["max_context_tokens"] == 8
    contiguous = next(r for r in rows if r["scheme"] == "contiguous")
    # every step reserves 8; the peak is the first of them, step 0, holding 2 + 1 tokens
    assert contiguous["peak_reserved_bytes"] == 8 and contiguous["waste_at_peak"] == pytest.approx(1 - 3 / 8)
    assert contiguous["peak_stored_bytes"] == 8  # full at its last step


def test_the_step_cost_ratio_divides():
    values = policy_rows([1, 1], 2, {1: 2.0, 2: 3.0})[2]
    assert values["step_cost_ratio"] == 1.5


@pytest.mark.parametrize("longest_output,region", [(1, 4), (3, 8), (6, 8), (7, 16)])
def test_the_contiguous_region_is_the_smallest_power_of_two_that_holds_the_longest(longest_output, region):
    # prompt 2: the longest request holds 3, 5, 8 and 9 tokens
    _, _, _, sched = policy_rows([longest_output], 1, {1: 1.0})
    rows, steps, values = memory_rows(
        [longest_output], sched, prompt_tokens=2, shared_prefix_tokens=0, block_tokens=4, bytes_per_token=1
    )
    assert values["max_context_tokens"] == region
    assert [s["step"] for s in steps] == list(range(longest_output))


def test_p99_by_hand(policies):
    # Static latencies 4.5, 4.5, 6.5: rank 2 x 0.99 = 1.98, 98% of the way from 4.5 to 6.5.
    assert policies[0]["static"]["p99_latency_ms"] == pytest.approx(6460)
    assert policies[0]["continuous"]["p99_latency_ms"] == pytest.approx(4500)
    assert policies[2]["p99_latency_ratio"] == pytest.approx(6.46 / 4.5)


def test_capacity_by_hand():
    # Mean output 2 tokens: a 1 s prefill, then one more token at a full step's 1.5 s
    # shared by 2 slots: 1.75 s of engine time per request.
    assert capacity_req_s(2.0, 1.0, COSTS, 2) == pytest.approx(1 / 1.75)


def test_static_capacity_by_hand():
    # Groups (3, 1) and (2): two prefills and two more steps of two requests (5 s), then one
    # prefill and one step of one (2 s): three requests in 7 s.
    assert static_capacity_req_s(LENGTHS, 1.0, COSTS, 2) == pytest.approx(3 / 7)
    # with requests always waiting, groups are full and consecutive: (1, 1) then (1)
    assert static_capacity_req_s([1, 1, 1], 1.0, COSTS, 2) == pytest.approx(3 / 3)


def test_arrival_rows_follow_the_simulation():
    summary, ratios, requests, values = arrival_rows(LENGTHS, SLOTS, COSTS, prefill_s=1.0, loads=(0.5, 0.9), seed=3)
    assert values["capacity_req_s"] == pytest.approx(1 / 1.75) and values["prefill_ms"] == 1000.0
    # the loads are fractions of static batching's capacity, the lower one
    assert values["static_capacity_req_s"] == pytest.approx(3 / 7)
    assert values["capacity_ratio"] == pytest.approx((1 / 1.75) / (3 / 7))
    assert (values["load_lowest"], values["load_highest"], values["arrival_seed"]) == (0.5, 0.9, 3)
    assert [(r["load"], r["policy"]) for r in summary] == [
        (0.5, "static"),
        (0.5, "continuous"),
        (0.9, "static"),
        (0.9, "continuous"),
    ]
    for load in (0.5, 0.9):
        rate = load * 3 / 7
        arrivals = poisson_arrivals(3, rate=rate, seed=3)
        by = {}
        for policy in ("static", "continuous"):
            run = serve(policy, arrivals, LENGTHS, SLOTS, prefill_s=[1.0] * 3, step_cost=COSTS.__getitem__)
            mine = [r for r in requests if r["load"] == load and r["policy"] == policy]
            assert [r["arrival_ms"] for r in mine] == pytest.approx([a * 1e3 for a in arrivals])
            assert [r["latency_ms"] for r in mine] == pytest.approx([s.latency * 1e3 for s in run.served])
            assert [r["ttft_ms"] for r in mine] == pytest.approx([s.ttft * 1e3 for s in run.served])
            row = next(r for r in summary if r["load"] == load and r["policy"] == policy)
            assert row["rate_req_s"] == pytest.approx(rate) and row["output_tokens"] == 6
            own = rate * 1.75 if policy == "continuous" else load
            assert row["own_load"] == pytest.approx(own)
            assert row["p99_latency_ms"] == pytest.approx(percentile([r["latency_ms"] for r in mine], 99))
            by[policy] = row
        ratio = next(r for r in ratios if r["load"] == load)
        assert ratio["continuous_load"] == pytest.approx(rate * 1.75)
        st, co = by["static"], by["continuous"]
        assert ratio["throughput_ratio"] == pytest.approx(co["throughput_tok_s"] / st["throughput_tok_s"])
        assert ratio["mean_latency_ratio"] == pytest.approx(st["mean_latency_ms"] / co["mean_latency_ms"])
        assert ratio["p95_latency_ratio"] == pytest.approx(st["p95_latency_ms"] / co["p95_latency_ms"])
        assert ratio["mean_ttft_ratio"] == pytest.approx(st["mean_ttft_ms"] / co["mean_ttft_ms"])


def test_summaries_are_written_in_milliseconds():
    from measure.sim.batching_sim import in_ms

    summary = {"total_s": 1.5, "mean_latency_s": 0.25, "throughput_tok_s": 40.0}
    assert in_ms(summary, "total", "mean_latency") == {"total_ms": 1500.0, "mean_latency_ms": 250.0}


def test_rows_fill_exactly_the_columns_the_batching_page_declares():
    from measure.experiments.batching import TABLES

    declared = {t.name: set(t.column_names) for t in TABLES}
    policies, timeline, _, _ = policy_rows(LENGTHS, SLOTS, COSTS)
    summary, ratios, requests, _ = arrival_rows(LENGTHS, SLOTS, COSTS, prefill_s=1.0, loads=(0.5,), seed=3)
    for name, rows in [
        ("policies", policies),
        ("timeline", timeline),
        ("arrivals", summary),
        ("arrival_ratios", ratios),
        ("arrival_requests", requests),
    ]:
        # the ratios' ranges are added by the experiment, which simulates at the costs' bounds too
        expected = {c for c in declared[name] if not (name == "arrival_ratios" and c.endswith(("_low", "_high")))}
        assert rows and all(set(r) == expected for r in rows), name


def test_arrival_request_times_are_milliseconds_of_the_simulation():
    _, _, requests, _ = arrival_rows(LENGTHS, SLOTS, COSTS, prefill_s=1.0, loads=(0.5,), seed=3)
    arrivals = poisson_arrivals(3, rate=0.5 * 3 / 7, seed=3)
    for policy in ("static", "continuous"):
        run = serve(policy, arrivals, LENGTHS, SLOTS, prefill_s=[1.0] * 3, step_cost=COSTS.__getitem__)
        mine = [r for r in requests if r["policy"] == policy]
        assert [r["release_ms"] for r in mine] == pytest.approx([s.release * 1e3 for s in run.served])
        assert [r["first_token_ms"] for r in mine] == pytest.approx([s.first_token * 1e3 for s in run.served])
