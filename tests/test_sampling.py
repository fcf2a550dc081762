"""The timing method (measure/lab/sampling.py) on a fake machine: a clock that each
call advances by its point's cost, times how slow the machine is at that moment. No
real timing is taken, so these tests hold on a busy machine."""

import math
import random
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from scipy import stats

from measure.lab import timing
from measure.lab.medians import MIN_ROUNDS, Estimate, median_interval, minimal_rounds
from measure.lab.sampling import Sweep, budget, interleaved

CPU = torch.device("cpu")


class Machine:
    """A fake clock. ``slow`` = (from, to, factor): calls that start in that stretch of
    (fake) seconds cost ``factor`` times more, as on a shared machine another job's burst."""

    def __init__(self, slow: tuple[float, float, float] | None = None, seed: int = 0) -> None:
        self.t = 0.0
        self.slow = slow
        self.rng = random.Random(seed)

    def now(self) -> float:
        return self.t

    def point(self, cost: float, noise: float = 0.002, log: list | None = None, key=None):
        """A callable that costs ``cost`` seconds, times a uniform noise of ±``noise``."""

        def call() -> None:
            factor = 1.0
            if self.slow and self.slow[0] <= self.t < self.slow[1]:
                factor = self.slow[2]
            self.t += cost * factor * (1 + self.rng.uniform(-noise, noise))
            if log is not None:
                log.append(key)

        return call


def _sweep(machine, points, **kw):
    kw = {"device": CPU, "seed": 0, "budget_s": 100.0, "now": machine.now, **kw}
    return interleaved(points, **kw)


def test_each_round_is_a_fresh_permutation_drawn_with_the_recorded_seed():
    machine, log = Machine(), []
    keys = list(range(1, 9))
    points = {k: machine.point(0.01, log=log, key=k) for k in keys}

    def before(k):
        log.append(("before", k))
        machine.t += 1.0  # untimed: must not show in any sample

    sweep = _sweep(machine, points, seed=41, target=1e-9, max_rounds=9, before=before)
    assert sweep.seed == 41 and sweep.rounds == 9
    calls = [entry for entry in log if not isinstance(entry, tuple)]
    assert all(log[2 * i] == ("before", k) and log[2 * i + 1] == k for i, k in enumerate(calls))
    rounds = [calls[i : i + len(keys)] for i in range(0, len(calls), len(keys))]
    assert len(rounds) == 10  # the warm-up, then nine timed rounds
    for r, order in enumerate(rounds):
        expected = list(keys)
        random.Random(41 + r).shuffle(expected)
        assert order == expected
    assert len({tuple(o) for o in rounds}) == len(rounds)
    assert all(max(e.samples_s) < 0.011 for e in sweep.points.values())


def _old_blocks(machine, points, monkeypatch):
    """The method the sweeps used before: each point's repeats back to back, one point after another."""
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=machine.now))
    return {k: timing.time_call(fn, device=CPU, warmup=1, repeats=7).median_s for k, fn in points.items()}


def test_a_slow_stretch_spreads_over_all_points_instead_of_drawing_a_step(monkeypatch):
    """A flat sweep (every point costs 10 ms) on a machine 30 % slower for 0.2 s: measured
    point after point, two points come out 30 % slower, a shape that is not there;
    interleaved, every point takes a few slow samples and every median stays flat."""
    slow = (0.20, 0.40, 1.3)
    keys = list(range(1, 9))
    old_machine = Machine(slow)
    old = _old_blocks(old_machine, {k: old_machine.point(0.01) for k in keys}, monkeypatch)
    assert max(old.values()) / min(old.values()) > 1.25  # the false step
    assert sorted(k for k, m in old.items() if m > 0.012) == [3, 4]

    machine = Machine(slow)
    sweep = _sweep(machine, {k: machine.point(0.01) for k in keys})
    medians = [e.median_s for e in sweep.points.values()]
    assert max(medians) / min(medians) < 1.01
    assert all(max(e.samples_s) > 0.012 for e in sweep.points.values())  # the stretch touched every point
    assert all(e.met for e in sweep.points.values())


def test_rounds_go_to_the_points_whose_interval_is_still_wide():
    machine = Machine()
    rng = random.Random(3)

    def noisy() -> None:
        machine.t += 0.01 * math.exp(rng.gauss(0, 0.2))

    sweep = _sweep(machine, {"quiet": machine.point(0.01), "noisy": noisy})
    quiet, loud = sweep.points["quiet"], sweep.points["noisy"]
    assert quiet.n == MIN_ROUNDS and quiet.met
    assert loud.n > 3 * quiet.n and loud.met
    assert loud.half_width <= 0.03 < Estimate.of(loud.samples_s[:MIN_ROUNDS], 0.03).half_width
    assert sweep.rounds == loud.n


def test_the_budget_ends_the_sampling_and_a_point_that_missed_says_so():
    machine = Machine()
    points = {k: machine.point(0.01, noise=0.5) for k in "abc"}
    sweep = _sweep(machine, points, budget_s=1.0, target=0.001)
    assert 1.0 <= sweep.seconds < 1.0 + 0.0151  # no call began once the budget was spent
    assert MIN_ROUNDS < sweep.rounds < 40
    assert not any(e.met for e in sweep.points.values())
    assert sweep.describe()["missed"] == ["a", "b", "c"] and sweep.describe()["met"] == 0


def test_min_rounds_are_measured_whatever_the_budget_and_max_rounds_ends_it():
    machine = Machine()
    sweep = _sweep(machine, {k: machine.point(0.01, noise=0.5) for k in "ab"}, budget_s=0.0, min_rounds=8)
    assert [e.n for e in sweep.points.values()] == [8, 8] and sweep.seconds > sweep.budget_s
    machine = Machine()
    sweep = _sweep(machine, {k: machine.point(0.01, noise=0.5) for k in "ab"}, target=1e-6, max_rounds=11)
    assert [e.n for e in sweep.points.values()] == [11, 11] and sweep.rounds == 11
    with pytest.raises(ValueError, match="at least 6"):
        _sweep(machine, {"a": machine.point(0.01)}, min_rounds=5)
    with pytest.raises(ValueError, match="6 are needed"):
        Estimate.of([1.0] * 5, 0.03)


def test_a_sweep_may_be_bounded_to_exactly_its_min_rounds_and_stops_at_200_rounds_by_default():
    machine = Machine()
    sweep = _sweep(machine, {"a": machine.point(0.01, noise=0.5)}, target=1e-9, min_rounds=7, max_rounds=7)
    assert sweep.rounds == 7 and sweep.points["a"].n == 7
    machine = Machine()
    sweep = _sweep(machine, {"a": machine.point(0.01, noise=0.5)}, target=1e-9, budget_s=1e9)
    assert sweep.rounds == 200 and sweep.points["a"].n == 200


def test_a_sweep_of_no_point_says_so():
    with pytest.raises(ValueError, match="^no point to time$"):
        _sweep(Machine(), {})


@pytest.mark.parametrize("origin", [0.0, 1000.0])
@pytest.mark.parametrize(
    ("budget_s", "rounds", "counts"),
    [
        (3.5, 6, [6, 6]),  # spent exactly when round 6 ends: no round 7
        (3.75, 7, [6, 7]),  # spent exactly after round 7's first call: its second never begins
        (4.0, 7, [7, 7]),  # spent exactly when round 7 ends: no round 8 is begun
    ],
)
def test_a_budget_is_spent_once_the_time_since_the_start_reaches_it(origin, budget_s, rounds, counts):
    """Every call advances the budget's clock by exactly 0.25 s (binary fractions, no
    rounding); the samples the timer reports are noisy, so no point ever meets 0.001.
    Worked by hand: two points, the warm-up takes 0.5 s, each round 0.5 s, so after the
    six minimum rounds 3.5 s are spent. A budget is reached when the time equals it, and
    it is the time since the sweep began that counts: a clock whose origin is 1000 s (as
    ``perf_counter``'s is arbitrary) gives the same sweep."""
    clock = SimpleNamespace(t=origin)

    def call() -> None:
        clock.t += 0.25

    noisy = iter([0.010, 0.013, 0.011, 0.015] * 10)

    def timer(fn) -> float:
        fn()
        return next(noisy)

    points = {"a": call, "b": call}
    sweep = interleaved(points, device=CPU, seed=0, budget_s=budget_s, target=0.001, timer=timer, now=lambda: clock.t)
    assert sweep.rounds == rounds
    assert sorted(e.n for e in sweep.points.values()) == counts
    assert sweep.describe() == {
        "seed": 0,
        "rounds": rounds,
        "seconds": budget_s,
        "budget_s": budget_s,
        "target": 0.001,
        "points": 2,
        "met": 0,
        "missed": ["a", "b"],
        "samples": sum(counts),
    }


def test_a_sweep_describes_how_it_was_sampled():
    """The seconds to the millisecond; the missed points by name, as text."""
    met = Estimate.of([1.0] * 6, 0.03)
    missed = Estimate.of([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 0.03)
    sweep = Sweep(
        points={"a": met, 3: missed, "c": met}, seed=7, rounds=9, seconds=12.3456789, budget_s=10.0, target=0.03
    )
    assert sweep.describe() == {
        "seed": 7,
        "rounds": 9,
        "seconds": 12.346,
        "budget_s": 10.0,
        "target": 0.03,
        "points": 3,
        "met": 2,
        "missed": ["3"],
        "samples": 6 + 7 + 6,
    }
    paired = Sweep(points={("b", 8): missed}, seed=7, rounds=9, seconds=1.0, budget_s=10.0, target=0.03)
    assert paired.describe()["missed"] == ["b 8"]  # a key's parts, as calls_per_sample names them


def test_a_point_quicker_than_the_shortest_sample_is_timed_as_a_block_of_calls_per_sample():
    """A quick point's sample is a block of calls that fills ``min_sample_s`` (sized from
    one timed call after its warm-up), published per call; a slower point's is one call."""
    machine, log = Machine(), []
    points = {"quick": machine.point(0.002, noise=0, log=log, key="quick")}
    points["slow"] = machine.point(0.006, noise=0, log=log, key="slow")
    prepared = []  # ``before`` prepares each call: the warm-up's, the sizing one's, each round's
    sweep = _sweep(machine, points, budget_s=0.0, min_sample_s=0.005, before=prepared.append)
    assert sweep.calls == {"quick": 3, "slow": 1}  # 0.005 / 0.002 calls, rounded up
    assert sorted(prepared) == ["quick"] * (2 + MIN_ROUNDS) + ["slow"] * (2 + MIN_ROUNDS)
    assert sweep.rounds == MIN_ROUNDS
    # a warm-up call and a sizing call, then a block per round
    assert log.count("quick") == 2 + 3 * MIN_ROUNDS and log.count("slow") == 2 + MIN_ROUNDS
    quick, slow = sweep.points["quick"], sweep.points["slow"]
    assert quick.samples_s == pytest.approx([0.002] * MIN_ROUNDS) and slow.samples_s == pytest.approx([0.006] * 6)
    assert sweep.describe()["calls_per_sample"] == {"quick": 3, "slow": 1}
    other = Machine()
    plain = _sweep(other, {("quick", 8): other.point(0.002)}, budget_s=0.0)
    assert plain.calls == {("quick", 8): 1}  # without min_sample_s a sample is one call
    assert "calls_per_sample" not in plain.describe()  # said only where some point was a block
    blocks = _sweep(other, {("quick", 8): other.point(0.002)}, budget_s=0.0, min_sample_s=0.005)
    assert blocks.describe()["calls_per_sample"] == {"quick 8": 3}  # a key's parts, as the notes name them


@pytest.mark.parametrize("min_sample_s", [0.0, 0.005])
def test_a_point_sampled_one_call_at_a_time_reaches_the_timer_as_itself(min_sample_s):
    """A timer may tell the points apart by their callables (prefill-decode's split and
    its profiled steps do): a lone call is never wrapped in a block."""
    seen = []

    def point() -> None:
        pass

    def timer(fn) -> float:
        seen.append(fn)
        fn()
        return 0.01

    interleaved({"a": point}, device=CPU, seed=0, budget_s=0.0, timer=timer, min_sample_s=min_sample_s)
    assert len(seen) >= MIN_ROUNDS and all(fn is point for fn in seen)


def test_within_minimal_rounds_every_point_is_timed_once_and_meets_nothing():
    # the same noisy sweep that takes dozens of rounds on its budget takes one within it
    def run():
        machine = Machine()
        return _sweep(machine, {k: machine.point(0.01, noise=0.5) for k in "abc"}, budget_s=1.0, target=0.001)

    assert run().rounds > MIN_ROUNDS
    with minimal_rounds():
        quick = run()
        assert budget(60.0) == 0.0
        single = Estimate.of([0.02, 0.01, 0.03], 0.5)
    assert quick.rounds == 1 and [e.n for e in quick.points.values()] == [1] * 3
    assert all(e.low_s == e.median_s == e.high_s and not e.met for e in quick.points.values())
    assert quick.describe()["met"] == 0 and quick.describe()["budget_s"] == 0.0  # what applied
    # a few samples within it: their range, never an interval that meets its target
    assert (single.low_s, single.median_s, single.high_s, single.met) == (0.01, 0.02, 0.03, False)
    assert single.target == 0.5  # the target asked for is kept, though it is not met
    with pytest.raises(ValueError, match="6 are needed"):
        Estimate.of([0.02, 0.01, 0.03], 0.5)  # and only within it
    assert budget(60.0) == 60.0  # and only within it
    with pytest.raises(RuntimeError), minimal_rounds():
        raise RuntimeError("a failing run")
    assert budget(60.0) == 60.0


def test_within_minimal_rounds_each_point_is_called_once_after_its_warm_up_never_in_a_block():
    calls = {"quick": 0, "slow": 0}
    prepared = []

    def point(key):
        def call():
            calls[key] += 1

        return call

    def timer(fn):
        fn()
        return 1e-6  # quick enough to be blocked outside minimal rounds

    with minimal_rounds():
        sweep = interleaved(
            {k: point(k) for k in calls},
            device=CPU,
            seed=0,
            budget_s=60.0,
            warmup=3,
            min_sample_s=0.01,
            before=prepared.append,
            timer=timer,
        )
    # the warm-up calls, then one timed call; no sizing call, no block
    assert calls == {"quick": 3 + 1, "slow": 3 + 1} and sorted(prepared) == ["quick"] * 4 + ["slow"] * 4
    assert sweep.calls == {"quick": 1, "slow": 1} and "calls_per_sample" not in sweep.describe()
    calls.update(quick=0, slow=0)
    interleaved({k: point(k) for k in calls}, device=CPU, seed=0, budget_s=0.0, warmup=3, timer=timer)
    assert calls == {"quick": 3 + MIN_ROUNDS, "slow": 3 + MIN_ROUNDS}  # outside them: warm-up, then the rounds


def test_an_estimate_gives_its_columns_and_scales():
    e = Estimate.of([0.010, 0.011, 0.012, 0.013, 0.014, 0.015, 0.016], 0.03)
    assert e.median_s == 0.013 and (e.low_s, e.high_s) == (0.010, 0.016) and not e.met
    assert e.columns("step_ms") == {"step_ms": 13.0, "step_low_ms": 10.0, "step_high_ms": 16.0, "step_samples": 7}
    assert e.target == 0.03
    quarter = e.scaled(0.25)
    assert quarter.median_s == pytest.approx(0.00325) and quarter.n == 7 and quarter.high_s == pytest.approx(0.004)
    # every sample and both bounds scale; the relative width, hence target and verdict, do not
    assert quarter.samples_s == pytest.approx((0.0025, 0.00275, 0.003, 0.00325, 0.0035, 0.00375, 0.004))
    assert quarter.low_s == pytest.approx(0.0025) and quarter.target == 0.03 and quarter.met is False
    flat = Estimate.of([0.02] * 6, 0.03)
    assert flat.met and flat.scaled(0.5).met is True


def test_an_estimate_meets_a_target_its_half_width_equals():
    """Binary fractions, so the comparison is exact: median 1, interval [0.875, 1.125],
    a half-width of 0.125, which meets a target of 12.5 % and misses one of 12 %."""
    samples = [0.875, 0.9375, 1.0, 1.0, 1.0625, 1.125]
    e = Estimate.of(samples, 0.125)
    assert (e.low_s, e.median_s, e.high_s) == (0.875, 1.0, 1.125) and e.met
    assert not Estimate.of(samples, 0.12).met


def test_samples_in_milliseconds_are_rounded_to_a_tenth_of_a_microsecond():
    e = Estimate.of([0.0123456789, 0.001, 0.002, 0.003, 0.004, 0.005], 0.03)
    assert e.samples_ms() == [12.3457, 1.0, 2.0, 3.0, 4.0, 5.0]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("confidence", [0.95, 0.90, 0.99, 0.75])
def test_the_interval_is_scipys_quantile_test_interval(confidence):
    """Equal to scipy's, bound for bound (NaN where n is too small), on continuous
    samples and on samples with ties, for every n up to 300. At 0.75, a = 1/8 is a
    binary fraction that the binomial cdf of n = 3 reaches exactly (P(X <= 0) = 1/8):
    there scipy's ppf and isf both take the tie, giving (NaN, the maximum)."""
    rng = np.random.default_rng(23)
    for n in range(1, 301):
        for x in (rng.lognormal(0, 0.3, n), rng.integers(0, 5, n).astype(float)):
            ours = median_interval(x.tolist(), confidence)
            ci = stats.quantile_test(x, p=0.5).confidence_interval(confidence_level=confidence)
            assert _same(ours[0], ci.low) and _same(ours[1], ci.high), (n, ours, ci)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.05, 1.5])
def test_a_confidence_outside_zero_to_one_is_refused(confidence):
    with pytest.raises(ValueError, match="^confidence must be strictly between 0 and 1$"):
        median_interval([1.0] * 10, confidence)


def test_the_interval_covers_the_true_median_at_least_95_percent_of_the_time():
    rng = np.random.default_rng(5)
    for n in (6, 9, 20, 60):
        x = rng.exponential(1.0, (4000, n))  # the true median is ln 2
        covered = [lo <= math.log(2) <= hi for lo, hi in (median_interval(row) for row in x.tolist())]
        assert sum(covered) / len(covered) >= 0.94, n


def test_a_ratio_of_points_not_sampled_together_takes_the_range_its_two_intervals_give():
    from measure.lab.medians import Estimate, ratio, ratio_cells

    # six samples: the 95 % interval of the median runs from the smallest to the largest
    num = Estimate.of([0.010, 0.011, 0.012, 0.013, 0.014, 0.015], target=0.03)
    den = Estimate.of([0.004, 0.005, 0.005, 0.005, 0.005, 0.006], target=0.03)
    assert (num.low_s, num.high_s, den.low_s, den.high_s) == (0.010, 0.015, 0.004, 0.006)
    # 12.5 / 5 = 2.5; the low over the high 10 / 6, the high over the low 15 / 4
    assert ratio(num, den) == pytest.approx((2.5, 10 / 6, 3.75))
    assert ratio_cells("speedup", num, den) == pytest.approx(
        {"speedup": 2.5, "speedup_low": 10 / 6, "speedup_high": 3.75}
    )
    assert set(ratio_cells("step_ms", num, den)) == {"step_ms", "step_low_ms", "step_high_ms"}


def test_a_ratio_of_two_points_of_one_sweep_is_the_median_of_their_ratios_round_by_round():
    from measure.lab.medians import Estimate, ratio

    # the machine slows both points alike from round to round: paired, the drift cancels
    drift = [1.0, 1.5, 0.8, 1.2, 2.0, 0.9, 1.1]
    num = Estimate.of([0.020 * d for d in drift], target=0.03, sweep=7)
    den = Estimate.of([0.010 * d for d in drift[:6]], target=0.03, sweep=7)  # one round fewer
    assert ratio(num, den) == pytest.approx((2.0, 2.0, 2.0))
    # ratios 2, 3, 1, 2.5, 4, 1.5: median 2.25, interval (six pairs) their least to greatest
    num = Estimate.of([0.020, 0.030, 0.010, 0.025, 0.040, 0.015], target=0.03, sweep=7)
    den = Estimate.of([0.010] * 6, target=0.03, sweep=7)
    assert ratio(num, den) == pytest.approx((2.25, 1.0, 4.0))
    # of different sweeps, or of none: the ratio of the medians and the cautious range
    apart = Estimate.of([0.010] * 6, target=0.03, sweep=8)
    assert ratio(num, apart) == pytest.approx((2.25, 1.0, 4.0))  # the same numbers, by the other rule:
    assert ratio(Estimate.of(drift[:6], 0.03, sweep=1), Estimate.of(drift[:6], 0.03, sweep=2)) == pytest.approx(
        (1.05 / 1.05, 0.8 / 2.0, 2.0 / 0.8)
    )
    none = Estimate.of(drift[:6], 0.03)
    assert ratio(none, none) == pytest.approx((1.0, 0.8 / 2.0, 2.0 / 0.8))
    paired = Estimate.of(drift[:6], 0.03, sweep=3)
    assert ratio(paired, paired) == (1.0, 1.0, 1.0)


def test_a_ratio_pairs_only_where_six_rounds_are_common_to_both():
    from measure.lab.medians import Estimate, minimal_rounds, ratio

    with minimal_rounds():  # one sample each: no interval, so no pairing either
        one, other = Estimate.of([0.02], 0.03, sweep=4), Estimate.of([0.01], 0.03, sweep=4)
    assert one.sweep == other.sweep == 4  # a partial estimate still knows its sweep
    assert ratio(one, other) == (2.0, 2.0, 2.0)  # from the ranges of single samples
    five = Estimate.of([0.01, 0.02, 0.03, 0.04, 0.05, 0.06], 0.03, sweep=4)
    with minimal_rounds():
        short = Estimate.of([0.01, 0.01, 0.01, 0.01, 0.01], 0.03, sweep=4)
    # five rounds in common: unpaired, 0.035 / 0.01 with the ranges 0.01 / 0.01 and 0.06 / 0.01
    assert ratio(five, short) == pytest.approx((3.5, 1.0, 6.0))


def test_the_points_of_one_sweep_pair_and_those_of_two_sweeps_do_not():
    from measure.lab.medians import ratio

    # a burst slows the machine threefold for a while: each point's own interval widens,
    # but both points of a round felt it alike, so their ratio stays 2
    machine = Machine(slow=(0.1, 0.7, 3.0))
    points = {"a": machine.point(0.02), "b": machine.point(0.01)}
    first = _sweep(machine, points, budget_s=0.9, target=0.0001)  # ±0.2 % noise: 16 rounds, 7 slowed
    second = _sweep(machine, {"a": machine.point(0.02)}, budget_s=0)
    a, b = first.points["a"], first.points["b"]
    assert a.sweep == b.sweep != second.points["a"].sweep
    assert a.scaled(0.5).sweep == a.sweep
    assert a.high_s / a.low_s == pytest.approx(3.0, rel=0.01)  # the burst is inside each interval
    value, low, high = ratio(a, b)
    assert value == pytest.approx(2.0, rel=0.005)
    assert 1.99 < low < 2.0 < high < 2.01  # the cautious range runs from 2/3 to 6


def test_the_fraction_of_a_floor_takes_the_cautious_range():
    from measure.lab.medians import fraction_cells

    step = Estimate.of([1.8, 1.9, 2.0, 2.0, 2.1, 2.5], 0.03)  # median 2.0, interval [1.8, 2.5] (six samples)
    cells = fraction_cells("fraction_of_floor", (1.0, 0.9, 1.2), step)
    assert cells == pytest.approx(
        {"fraction_of_floor": 0.5, "fraction_of_floor_low": 0.36, "fraction_of_floor_high": 1.2 / 1.8}
    )
