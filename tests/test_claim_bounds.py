"""What a claim may cost, and what a marker's arguments may: each bound checked before
the work it bounds, each refusal one line naming it (and, on a page, the page)."""

import pytest

from sitekit.claims.claims import ClaimError, check
from sitekit.rendering.pagedata import SiteData
from tests.conftest import write_data


@pytest.fixture
def data(tmp_path):
    rows = [{"n": 1, "ms": 2.0, "ok": True}, {"n": 2, "ms": 4.0, "ok": True}, {"n": 4, "ms": 8.5, "ok": False}]
    write_data(tmp_path, "exp", {"t": rows}, {"ratio": 2.5}, units={"ratio": "x"})
    return SiteData(tmp_path)


# What a claim may cost: every case here once ran for seconds, took gigabytes or ended
# in a traceback; each is now one line naming the bound, before the work it bounds.
@pytest.mark.parametrize(
    "expr, message",
    [
        (" + ".join(["1"] * 10_000), "a claim of 39,997 characters refused: at most 2,000"),
        ("not " * 5_000 + "1", "a claim of 20,001 characters refused: at most 2,000"),
        ("not " * 60 + "1", "a claim nested more than 50 deep refused"),
        ("-" * 60 + "1", "a claim nested more than 50 deep refused"),
        ("[" + ", ".join(["1"] * 600) + "]", "a claim of more than 500 terms refused"),
        ("round(1e309)", "round(inf) refused: not a finite number"),
        ("round(-1e309, 2)", "round(-inf) refused: not a finite number"),
        ("round(1.5, 10 ** 9)", "round to 1000000000 digits refused: claims round to at most 30"),
        ("{**{'a': 1}}", "unpacking a dictionary ({**...}) refused"),
        ("max(**{'a': 1})", "unpacking keyword arguments (**...) refused"),
        ("'%0999999999d' % 1", "formatting text with % refused: claims compare numbers"),
        ("sum([[0] * 10000] * 1, [])", "sum starting from [] refused: claims add numbers"),
        ("[[0] * 10000] * 10000", "repeating a sequence to more than 10000 items refused"),
        ("[[0] * 100] * 100 + [[0] * 100] * 100", "a sequence of more than 10000 items refused"),
        ("'x' * 6000 + 'y' * 6000", "a sequence of more than 10000 items refused"),
        ("1 is 1", "unsupported expression: 1 is 1"),
        ("1 is not 2", "unsupported expression: 1 is not 2"),
        ("-'a'", "-'a': TypeError: bad operand type for unary -: 'str'"),
        ("max([])", "max([]): ValueError: max() arg is an empty sequence"),
        ("sum(['a', 'b'])", "sum(['a', 'b']): TypeError: unsupported operand type(s) for +: 'int' and 'str'"),
        ("{[1]: 2}", "{[1]: 2}: TypeError: unhashable type: 'list'"),
        ("len(1)", "len(1): TypeError: object of type 'int' has no len()"),
        ("((2 ** 64) ** 64) ** 2", "power of a huge integer refused"),
        ("1e308 ** 2 > 1", "1e+308 ** 2: (34, 'Numerical result out of range')"),
    ],
)
def test_each_bound_is_one_line(data, expr, message):
    import time

    start = time.monotonic()
    with pytest.raises(ClaimError) as e:
        check(data, expr)
    assert str(e.value) == message
    assert "\n" not in str(e.value) and time.monotonic() - start < 1


def test_within_the_bounds_claims_still_compute(data):
    assert check(data, "len([[0] * 100] * 100) == 100")[0] is True
    assert check(data, "sum(column('exp.t', 'n'), 0.5) == 7.5")[0] is True
    assert check(data, "round(exp.ratio, 30) == 2.5")[0] is True
    assert check(data, "'a' * 5000 + 'b' * 5000 != ''")[0] is True  # exactly the longest text allowed
    assert check(data, "not " * 41 + "exp.ratio > 3")[0] is True


def test_a_marker_is_read_by_the_same_bounded_interpreter(data):
    from sitekit.rendering.markers import MarkerError, PageContext, render_markers

    ctx = PageContext(data=data, page="p.md", url_prefix="")
    for marker, bound in [
        ("{{ table(1 is 1) }}", "unsupported expression: 1 is 1"),
        ("{{ table({**exp.ratio}) }}", "unpacking a dictionary"),
        ("{{ value('exp.ratio', digits=round(1e309)) }}", "round(inf) refused"),
        ("{{ table('exp.t', limit=[[0] * 10000] * 10000) }}", "repeating a sequence"),
        ("{{ value(" + "'x' + " * 1_000 + "'x') }}", "a marker of 6,010 characters refused: at most 4,000"),
    ]:
        with pytest.raises(MarkerError) as e:
            render_markers(f"Text {marker} text.", ctx)
        assert str(e.value).startswith("p.md: cannot parse marker {{ "), str(e.value)
        assert bound in str(e.value) and "\n" not in str(e.value)


def test_a_bad_argument_type_is_one_line_naming_the_page(data):
    from sitekit.rendering.markers import MarkerError, PageContext, render_markers

    ctx = PageContext(data=data, page="p.md", url_prefix="")
    with pytest.raises(MarkerError) as e:
        render_markers("{{ figure('exp.t', alt=3) }}", ctx)
    assert str(e.value).startswith("p.md: {{ figure('exp.t', alt=3) }}: ")


def test_a_claims_bound_names_its_page(data):
    from sitekit.claims.claim_files import Claim, ClaimBook
    from sitekit.rendering.markers import MarkerError, PageContext, render_markers

    claims = ClaimBook({"exp.big": Claim("exp.big", "round(1e309) > 1")})
    ctx = PageContext(data=data, page="p.md", url_prefix="", claims=claims)
    with pytest.raises(MarkerError) as e:
        render_markers("""{{ claim("exp.big", "big") }}""", ctx)
    assert str(e.value) == "p.md: round(inf) refused: not a finite number"
