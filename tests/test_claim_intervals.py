"""The claims' words for timings: decided on intervals, with a third outcome, worked by hand."""

import re
from html import unescape

import pytest

from sitekit.claims.claim_files import Claim
from sitekit.claims.claims import NOISE, ClaimError, check, render
from sitekit.claims.intervals import (
    ClaimNoiseError,
    Interval,
    below,
    faster,
    flat,
    increasing,
    inside_band,
    kleene_not,
    per_doubling,
    within_noise,
)
from sitekit.rendering.pagedata import SiteData
from tests.conftest import PROVENANCE

# step at C: 10 [9, 11], 10.5 [9.8, 11.2] (overlaps the first), 13 [12, 14] (apart), 26 [25, 27]
STEPS = [(16, 10.0, 9.0, 11.0), (32, 10.5, 9.8, 11.2), (64, 13.0, 12.0, 14.0), (128, 26.0, 25.0, 27.0)]


@pytest.fixture
def data(tmp_path):
    from sitedata import Column, Result, Table, write_experiment
    from sitedata.schema import interval_columns

    rows = [{"c": c, "step_ms": m, "step_low_ms": lo, "step_high_ms": hi, "step_samples": 7} for c, m, lo, hi in STEPS]
    rows += [{"c": 256, "step_ms": 10.2, "step_low_ms": 10.1, "step_high_ms": 10.3, "step_samples": 7}]
    for r in rows:
        r["kind"] = "sweep" if r["c"] < 256 else "alone"
    table = Table("t", "T", (Column("c"), *interval_columns("step_ms", "ms"), Column("kind")))
    write_experiment(
        tmp_path, "exp", Result(tables={"t": rows}, values={}), tables=(table,), values=(), provenance=PROVENANCE
    )
    return SiteData(tmp_path)


def at(c: int) -> str:
    return f"interval('exp.t', 'step_ms', where={{'c': {c}}})"


AT16, AT32, AT64 = at(16), at(32), at(64)


def iv(median, low, high):
    return Interval(median, low, high)


def test_faster_decides_only_on_intervals_apart():
    assert faster(iv(10, 9, 11), iv(13, 12, 14)) is True
    assert faster(iv(13, 12, 14), iv(10, 9, 11)) is False
    # medians 10 and 10.5 differ, but the intervals overlap: no verdict either way
    assert faster(iv(10, 9, 11), iv(10.5, 9.8, 11.2)) is NOISE
    assert faster(iv(10, 9, 11), iv(12, 11, 13)) is NOISE  # touching bounds are not apart
    assert within_noise(iv(10, 9, 11), iv(12, 11, 13)) is True
    assert within_noise(iv(10, 9, 11), iv(13, 12, 14)) is False


def test_increasing_is_false_on_one_drop_apart_and_noise_on_one_overlap():
    up = [iv(10, 9, 11), iv(13, 12, 14), iv(26, 25, 27)]
    assert increasing(up) is True
    assert increasing([up[0], iv(10.5, 9.8, 11.2), *up[1:]]) is NOISE
    assert increasing([*up, iv(20, 19, 21)]) is False
    # a drop apart decides, even beside an overlap
    assert increasing([up[0], iv(10.5, 9.8, 11.2), iv(5, 4, 6)]) is False


def test_flat_is_the_change_per_doubling_against_its_band():
    # 10 -> 10.4 over 4 doublings (16 -> 256): 1.04 ** (1/4) - 1 = +0.985 % per doubling;
    # bounds: 10.3 / 10.1 and 10.5 / 9.9 give +0.49 % and +1.48 %
    xs, pts = [16, 256], [iv(10, 9.9, 10.1), iv(10.4, 10.3, 10.5)]
    rate, low, high = per_doubling(xs, pts)
    assert rate == pytest.approx(1.04**0.25 - 1)
    assert low == pytest.approx((10.3 / 10.1) ** 0.25 - 1)
    assert high == pytest.approx((10.5 / 9.9) ** 0.25 - 1)
    assert flat(xs, pts, 0.05) is True
    assert flat(xs, pts, 0.012) is NOISE  # the band's edge inside the interval
    assert flat(xs, pts, 0.004) is False  # the whole interval above +0.4 %
    # the case: 60.1 -> 71.3 ms from C = 16 to 1,024 (6 doublings) is +2.9 % per doubling
    rise = [iv(60.1, 59.5, 60.6), iv(71.3, 70.2, 72.1)]
    assert flat([16, 1024], rise, 0.02) is False
    assert flat([16, 1024], rise, 0.05) is True


def test_inside_band_decides_a_computed_change_by_its_bounds():
    assert inside_band(-0.01, 0.03, 0.05) is True
    assert inside_band(0.06, 0.09, 0.05) is False and inside_band(-0.2, -0.051, 0.05) is False
    # the committed prefill-decode run: +2.9 % per doubling, interval -0.6 % to +9.4 %
    assert inside_band(-0.0059, 0.0938, 0.05) is NOISE
    with pytest.raises(ValueError, match="low first"):
        inside_band(0.03, -0.01, 0.05)


@pytest.mark.parametrize("within", [0, 1, -0.1, "5 %"])
def test_flat_refuses_a_band_that_is_no_fraction(within):
    with pytest.raises(ValueError, match="within must be a fraction"):
        flat([1, 2], [iv(1, 1, 1), iv(1, 1, 1)], within)


def test_an_interval_that_does_not_hold_its_median_is_refused():
    with pytest.raises(ValueError, match="outside its interval"):
        iv(12, 9, 11)
    with pytest.raises(ValueError, match="finite"):
        iv(float("nan"), 9, 11)


@pytest.mark.parametrize(
    "expr, result",
    [
        (f"faster({AT16}, {AT64})", True),
        (f"faster({AT16}, {AT32})", NOISE),
        ("increasing('exp.t', 'step_ms', by='c', where={'kind': 'sweep'})", NOISE),
        ("increasing('exp.t', 'step_ms', by='c')", False),  # 256 drops back below 128, apart
        # Kleene: a decided false or true wins over noise, in either order
        (
            f"faster({AT16}, {AT32}) and 1 > 2",
            False,
        ),
        (
            f"1 > 2 or faster({AT16}, {AT32})",
            NOISE,
        ),
        (
            f"1 < 2 or faster({AT16}, {AT32})",
            True,
        ),
        ("not increasing('exp.t', 'step_ms', by='c', where={'kind': 'sweep'})", NOISE),
        (
            f"within_noise({AT16}, {AT32})",
            True,
        ),
    ],
)
def test_the_words_in_claims(data, expr, result):
    assert check(data, expr)[0] is result


@pytest.mark.parametrize(
    "expr, message",
    [
        (f"{AT16}", "no claim by itself"),
        ("interval('exp.t', 'c', where={'c': 16})", "declares no interval"),
        ("interval('exp.t', 'step_ms')", "5 rows match"),
        (
            "all([increasing('exp.t', 'step_ms', by='c', where={'kind': 'sweep'})])",
            "only be combined with and, or, not",
        ),
        ("increasing('exp.t', 'step_ms', by='c', where={'kind': 'sweep'}) == False", "cannot be compared"),
        ("faster(1, 2)", "is not an interval"),
        ("increasing('exp.t', 'step_ms', by='c', where={'c': 16})", "at least two rows"),
    ],
)
def test_misuse_is_one_error_not_a_silent_verdict(data, expr, message):
    from sitekit.rendering.pagedata import SiteDataError

    with pytest.raises((ClaimError, SiteDataError), match=message):
        check(data, expr)


def test_flat_records_the_change_it_decided_on(data):
    holds, read = check(data, "flat('exp.t', 'step_ms', by='c', where={'kind': 'sweep'}, within=0.05)")
    # 10 -> 26 over 3 doublings: 2.6 ** (1/3) = 1.375, +37.5 % per doubling; the bounds
    # (25 / 11) ** (1/3) = 1.315 and (27 / 9) ** (1/3) = 1.442: all far outside ±5 %
    assert holds is False
    assert read["change per doubling of c"] == "+37.5% [+31.5%, +44.2%], band ±5%"
    assert read["exp.t.step_ms by c {'kind': 'sweep'}"][0] == "16: 10 [9, 11]"


def test_noise_renders_neither_check_nor_warning(data):
    claim = Claim(
        "exp.c",
        f"faster({AT16}, {AT32})",
        hardware=True,
    )
    checks = {}
    html = unescape(render(data, "p.md", claim, "C = 16 is faster", checks))
    assert 'class="claim claim-noise"' in html and "≈" in html
    assert "✓" not in html and "⚠" not in html
    assert "within this machine's noise" in html
    # the intervals it read, in the page's list of checks
    assert "10 [9, 11]" in checks["exp.c"].numbers and "10.5 [9.8, 11.2]" in checks["exp.c"].numbers


def test_a_branch_on_noise_keeps_the_else(data):
    from sitekit.claims.claim_files import ClaimBook
    from sitekit.rendering.markers import PageContext, render_markers

    near = f"faster({AT16}, {AT32})"
    far = f"faster({AT16}, {AT64})"
    claims = ClaimBook({"exp.near": Claim("exp.near", near, True), "exp.far": Claim("exp.far", far, True)})
    ctx = PageContext(data=data, page="p.md", url_prefix="", claims=claims)
    assert render_markers("<!-- if exp.near -->apart<!-- else -->cannot tell<!-- end -->", ctx) == "cannot tell"
    assert render_markers("<!-- if exp.far -->apart<!-- else -->cannot tell<!-- end -->", ctx) == "apart"


# The edges of each decision, worked by hand: bounds that touch, a band's own edge, a
# degenerate interval, and the exact words a reader gets when a claim misuses a word.


def test_touching_bounds_overlap_in_either_order():
    """An interval whose bound equals the other's is not apart from it, whichever comes first."""
    low, high = iv(10, 9, 11), iv(12, 11, 13)
    assert faster(low, high) is NOISE and faster(high, low) is NOISE
    assert within_noise(low, high) is True and within_noise(high, low) is True


def test_increasing_decides_on_two_rows_and_refuses_one():
    """Two rows are one step, enough for a verdict; one row is none, and says so."""
    assert increasing([iv(10, 9, 11), iv(13, 12, 14)]) is True
    assert increasing([iv(13, 12, 14), iv(10, 9, 11)]) is False
    with pytest.raises(ValueError, match=r"^increasing needs at least two rows$"):
        increasing([iv(10, 9, 11)])


@pytest.mark.parametrize(
    "low, high, result",
    [
        (-0.05, 0.0, True),  # the lower bound on the band's edge is inside
        (0.0, 0.05, True),  # so is the upper bound
        (0.01, 0.01, True),  # an interval of one point
        (-0.1, -0.05, NOISE),  # touching -5 % from below: not wholly outside
        (0.05, 0.1, NOISE),  # touching +5 % from above: not wholly outside
        (-0.1, 0.0, NOISE),  # straddles -5 % while its upper bound lies inside
    ],
)
def test_inside_band_counts_the_edge_as_inside(low, high, result):
    """±5 % is a closed band: a bound exactly on its edge is inside, never outside."""
    assert inside_band(low, high, 0.05) is result


def test_flat_holds_for_a_time_that_does_not_move():
    """Equal times with no spread change by 0 % per doubling: a point inside any band."""
    assert per_doubling([16, 256], [iv(10, 10, 10), iv(10, 10, 10)]) == (0.0, 0.0, 0.0)
    assert flat([16, 256], [iv(10, 10, 10), iv(10, 10, 10)], 0.01) is True


@pytest.mark.parametrize("low, high", [(float("nan"), 0.01), (-0.01, float("inf")), (float("-inf"), float("inf"))])
def test_inside_band_refuses_bounds_that_are_not_finite(low, high):
    """A NaN or infinite bound is an error, not a silent ≈."""
    with pytest.raises(ValueError, match="bounds must be finite numbers"):
        inside_band(low, high, 0.05)


@pytest.mark.parametrize("x0, x1", [(4, 2), (4, 4), (0, 2), (-2, 4)])
def test_flat_refuses_x_that_does_not_grow_from_a_positive_start(x0, x1):
    """No doublings (x equal, falling, or starting at or below zero) is a plain ValueError
    naming both ends, never a division by zero or a math domain error."""
    with pytest.raises(ValueError) as e:
        per_doubling([x0, x1], [iv(10, 9, 11), iv(11, 10, 12)])
    assert str(e.value) == f"flat needs positive, increasing x from the first row to the last, not {x0} .. {x1}"


def test_flat_refuses_a_first_time_whose_interval_reaches_zero():
    """The ratios divide by the first row's bounds: a low bound of 0 is refused by name."""
    with pytest.raises(ValueError) as e:
        per_doubling([16, 32], [iv(0, 0, 1), iv(1, 1, 2)])
    assert str(e.value) == "flat needs positive times, not 0 [0, 1]"


def test_flat_refuses_one_row():
    with pytest.raises(ValueError) as e:
        per_doubling([16], [iv(10, 9, 11)])
    assert str(e.value) == "flat needs at least two rows"


def test_truth_of_an_interval_or_of_noise_is_refused_with_the_way_out():
    """Reading either as true or false is an error whose words say what to use instead."""
    with pytest.raises(TypeError) as e:
        bool(iv(10, 9, 11))
    assert str(e.value) == "an interval is no claim by itself: compare it with faster() or within_noise()"
    with pytest.raises(ClaimNoiseError) as e:
        bool(NOISE)
    assert str(e.value) == "a result within this machine's noise can only be combined with and, or, not"


def test_noise_given_to_a_timing_word_is_named_noise(data):
    """A claim that feeds one verdict into another word reads "NOISE is not an interval"."""
    assert repr(NOISE) == "NOISE"
    with pytest.raises(ClaimError, match=r": TypeError: NOISE is not an interval: use interval\("):
        check(data, f"faster(faster({AT16}, {AT32}), {AT64})")


@pytest.mark.parametrize(
    "low, high, result",
    [
        (2.31, 4.60, True),  # a speed-up range wholly below the 4.62× the bytes shrank
        (2.31, 4.90, NOISE),  # the committed run's range, which holds 4.62
        (4.63, 5.10, False),  # wholly above
        (4.62, 5.10, NOISE),  # a bound on the limit is not wholly on either side
        (2.31, 4.62, NOISE),
        (4.62, 4.62, NOISE),  # a one-point interval at the limit
        (4.0, 4.0, True),  # a one-point interval below it
    ],
)
def test_below_decides_an_interval_against_a_limit(low, high, result):
    assert below(low, high, 4.62) is result
    # not below is above, with the same noise between
    assert kleene_not(below(low, high, 4.62)) is (NOISE if result is NOISE else not result)


@pytest.mark.parametrize(
    "low, high, limit, message",
    [
        (3.0, 2.0, 4.0, "an interval's bounds must be finite numbers, low first, not 3.0, 2.0"),
        (float("nan"), 2.0, 4.0, "an interval's bounds must be finite numbers, low first, not nan, 2.0"),
        ("2", 3.0, 4.0, "an interval's bounds must be finite numbers, low first, not '2', 3.0"),
        (2.0, 3.0, float("inf"), "a limit must be a finite number, not inf"),
        (2.0, 3.0, "4", "a limit must be a finite number, not '4'"),
    ],
)
def test_below_refuses_what_is_no_interval_or_limit(low, high, limit, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        below(low, high, limit)


def test_an_effect_inside_the_margin_is_practically_the_same_and_decided_alike_in_every_run():
    """+3 % [+1 %, +5 %] against a 5 % margin: the same in this run and in one that reads
    +4 % [+2 %, +4.9 %]; decided against zero (``below``), the two runs would both say
    "apart" only by luck of their intervals."""
    from sitekit.claims.intervals import exceeds, same, undercuts

    for low, high in ((1.01, 1.05), (1.02, 1.049), (0.96, 1.04)):
        assert same(low, high, 0.05) is True
        assert exceeds(low, high, 0.05) is False and undercuts(low, high, 0.05) is False
    assert same(1 / 1.05, 1.05, 0.05) is True  # the band's own edges are inside


def test_an_effect_beyond_the_margin_is_apart_in_its_direction():
    from sitekit.claims.intervals import exceeds, same, undercuts

    assert exceeds(1.055, 1.085, 0.05) is True and same(1.055, 1.085, 0.05) is False
    assert undercuts(0.90, 0.94, 0.05) is True and same(0.90, 0.94, 0.05) is False  # 1/1.05 = 0.952
    assert exceeds(0.90, 0.94, 0.05) is False and undercuts(1.055, 1.085, 0.05) is False


def test_an_interval_that_straddles_the_margin_cannot_tell():
    from sitekit.claims.intervals import exceeds, same, undercuts

    assert exceeds(1.03, 1.07, 0.05) is NOISE and same(1.03, 1.07, 0.05) is NOISE
    assert undercuts(0.93, 0.97, 0.05) is NOISE and same(0.93, 0.97, 0.05) is NOISE
    assert exceeds(0.93, 0.97, 0.05) is False  # wholly below 1.05: not larger by the margin


def test_two_intervals_sampled_apart_are_set_against_the_margin_on_their_cautious_ratio():
    from sitekit.claims.intervals import faster_by, same_time

    # b / a from 10/9.6 = 1.0417 to 10.4/9.4 = 1.1064: straddles 1.05
    a, b = Interval(9.5, 9.4, 9.6), Interval(10.2, 10.0, 10.4)
    assert faster_by(a, b, 0.05) is NOISE and same_time(a, b, 0.05) is NOISE
    assert faster_by(Interval(9, 8.9, 9.1), b, 0.05) is True  # 10/9.1 = 1.099
    assert same_time(Interval(10.1, 10.0, 10.2), b, 0.05) is True  # 0.980 to 1.040
    with pytest.raises(ValueError, match="margin"):
        same_time(a, b, 5)
