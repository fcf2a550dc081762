"""A block's clauses proved to cover whatever a run finds (sitekit/claims/exhaustive.py),
on hand-worked blocks: the proof passes a block only where no data can leave it without
a clause, and names nothing it cannot prove complete."""

import pytest

from sitekit.claims import intervals
from sitekit.claims.exhaustive import covers_every_outcome
from sitekit.claims.intervals import NOISE

CHECKS = {
    "rose": "exceeds(x.low, x.high, calibration.margin)",
    "fell": "undercuts(x.low, x.high, calibration.margin)",
    "flat": "same(x.low, x.high, calibration.margin)",
    "under": "below(x.low, x.high, x.limit)",
    "over": "not below(x.low, x.high, x.limit)",
    "ran_rose": "x.ran and exceeds(x.low, x.high, calibration.margin)",
    "ran_fell": "x.ran and undercuts(x.low, x.high, calibration.margin)",
    "ran_flat": "x.ran and same(x.low, x.high, calibration.margin)",
    "ran": "x.ran",
    "missing_or_under": "x.n == None or below(x.low, x.high, x.limit)",
    "present_over": "x.n != None and not below(x.low, x.high, x.limit)",
    "present_under": "x.n != None and below(x.low, x.high, x.limit)",
    "both": "exceeds(x.low, x.high, calibration.margin) and exceeds(y.low, y.high, calibration.margin)",
    "not_both": "not (exceeds(x.low, x.high, calibration.margin) and exceeds(y.low, y.high, calibration.margin))",
    "rising": "increasing('x.t', 'ms', by='n')",
    "not_rising": "not increasing('x.t', 'ms', by='n')",
    "faster": "faster_by(interval('x.t', 'ms', where={'n': 1}), interval('x.t', 'ms', where={'n': 2}), 0.05)",
    "slower": "faster_by(interval('x.t', 'ms', where={'n': 2}), interval('x.t', 'ms', where={'n': 1}), 0.05)",
    "alike": "same_time(interval('x.t', 'ms', where={'n': 1}), interval('x.t', 'ms', where={'n': 2}), 0.05)",
    # the arrivals' throughputs: the envelope of a column's ranges, and its extreme rows
    "all_same": "same(min(column('t', 'lo')), max(column('t', 'hi')), calibration.margin)",
    "some_apart": (
        "exceeds(max(column('t', 'lo')), max(column('t', 'hi')), calibration.margin)"
        " or undercuts(min(column('t', 'lo')), min(column('t', 'hi')), calibration.margin)"
    ),
    "some_above": "exceeds(max(column('t', 'lo')), max(column('t', 'hi')), calibration.margin)",
    "other_apart": (
        "exceeds(max(column('u', 'lo')), max(column('u', 'hi')), calibration.margin)"
        " or undercuts(min(column('u', 'lo')), min(column('u', 'hi')), calibration.margin)"
    ),
    "two_args": "exceeds(x.low, x.high)",
    "not_two_args": "not exceeds(x.low, x.high)",
    "three": "exceeds(x.low, x.high, 0.05) and exceeds(y.low, y.high, 0.05) and exceeds(z.low, z.high, 0.05)",
    "not_three": "not (exceeds(x.low, x.high, 0.05) and exceeds(y.low, y.high, 0.05) and exceeds(z.low, z.high, 0.05))",
}


def covers(*clauses: str, within: tuple[str, ...] = ()) -> bool:
    """``clauses`` as a page writes them: "rose", or "unsure flat"."""

    def condition(text: str) -> tuple[str, bool]:
        unsure, _, ref = text.rpartition(" ")
        return ref, unsure == "unsure"

    return covers_every_outcome(map(condition, clauses), CHECKS.__getitem__, map(condition, within))


def test_three_ways_and_cannot_tell_on_practically_the_same_cover_every_interval():
    assert covers("rose", "fell", "flat", "unsure flat")
    assert covers("unsure flat", "flat", "rose", "fell")  # the order of the clauses does not matter


def test_cannot_tell_on_one_edge_leaves_the_other_edge_without_a_clause():
    assert not covers("rose", "fell", "flat", "unsure rose")
    # the interval the proof finds uncovered, worked by hand: 0.94 to 0.97 against ±5 %
    # lies across the lower edge 1 / 1.05 = 0.952: not above 1.05, so "rose" is false,
    # not "unsure rose"; "fell" and "flat" cannot tell, and no clause names them unsure
    assert intervals.exceeds(0.94, 0.97, 0.05) is False
    assert intervals.undercuts(0.94, 0.97, 0.05) is NOISE and intervals.same(0.94, 0.97, 0.05) is NOISE
    # and with no cannot-tell clause at all, any interval across an edge is left out
    assert not covers("rose", "fell", "flat")


def test_below_a_limit_its_opposite_and_cannot_tell():
    assert covers("under", "over", "unsure under")
    assert not covers("under", "over")
    assert not covers("under", "unsure under")


def test_a_test_of_the_data_beside_the_interval_is_tried_both_ways():
    # "x.n == None or below" and "x.n != None and ..." read the same test, its two sides
    assert covers("present_over", "present_under", "missing_or_under", "unsure missing_or_under")
    assert not covers("present_over", "present_under", "unsure present_under")  # x.n None: none met
    # a data test no clause answers for: false leaves every clause unmet...
    assert not covers("ran_rose", "ran_fell", "ran_flat", "unsure ran_flat")
    # ...unless the block sits in a clause where it holds
    assert covers("ran_rose", "ran_fell", "ran_flat", "unsure ran_flat", within=("ran",))
    assert not covers("ran_rose", "ran_fell", "ran_flat", "unsure ran_flat", within=("rose",))


def test_two_intervals_are_tried_together():
    assert covers("both", "not_both", "unsure both")
    assert not covers("both", "not_both")  # one rose, the other across its edge: neither


def test_a_word_that_may_not_tell_is_tried_three_ways():
    # increasing may be NOISE: the first two clauses then leave a gap, and the interval's
    # three ways do not close it where it straddles an edge
    assert not covers("rising", "not_rising", "faster", "alike")
    assert covers("rising", "not_rising", "unsure rising")
    # faster_by and same_time on the same two timings decide one ratio's range, either
    # way round: slower is faster_by with the two swapped, which decides the ratio's inverse
    assert covers("faster", "slower", "alike", "unsure alike")
    assert not covers("faster", "alike")


def test_what_it_cannot_prove_is_not_passed():
    assert not covers()
    assert not covers("three", "not_three", "unsure three")  # more intervals than it tries


@pytest.mark.parametrize("clauses", [("rose",), ("flat", "unsure flat"), ("rose", "fell", "unsure flat")])
def test_a_block_missing_a_decided_way_is_not_complete(clauses):
    assert not covers(*clauses)


def test_a_columns_envelope_and_its_extreme_rows_are_proved_as_the_data_orders_them():
    # Worked by hand: "all_same" is false only where the envelope [min lo, max hi] lies
    # wholly above the band (min lo > 1.05) or wholly below it (max hi < 1 / 1.05). Above:
    # max lo >= min lo > 1.05, so the highest row exceeds; below: min hi <= max hi, so the
    # lowest row undercuts. Undecided, "unsure all_same" shows. So one clause always holds.
    assert covers("all_same", "some_apart", "unsure all_same")
    # every row above the band: nothing is the same, nothing is unsure, and no other clause
    assert not covers("all_same", "unsure all_same")
    # every row below the band: the block asks only for a row above it
    assert not covers("all_same", "some_above", "unsure all_same")
    # another column's rows: nothing orders them against this column's envelope
    assert not covers("all_same", "other_apart", "unsure all_same")


def test_a_word_called_without_its_margin_is_an_atom_that_may_not_tell():
    # not an interval the proof can place: tried true, false and cannot tell, never a crash
    assert covers("two_args", "not_two_args", "unsure two_args")
    assert not covers("two_args", "not_two_args")
