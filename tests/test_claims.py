"""Claims: the evaluator on hand-made data, and a build that fails when one stops holding."""

import shutil

import pytest
from mkdocs.exceptions import PluginError

from sitekit.claims.claim_files import Claim, ClaimBook
from sitekit.claims.claims import NOISE, ClaimError, check, render
from sitekit.rendering.pagedata import SiteData
from tests.conftest import REPO, edit_table, write_data
from tests.helpers import render_page


def named(check: str, hardware: bool = False, id: str = "exp.c") -> Claim:
    """A claim as a claims file defines it."""
    return Claim(id, check, hardware)


def book(**checks: str) -> ClaimBook:
    """Claims of the experiment ``exp``, by name."""
    return ClaimBook({f"exp.{name}": named(c, id=f"exp.{name}") for name, c in checks.items()})


@pytest.fixture
def data(tmp_path):
    rows = [{"n": 1, "ms": 2.0, "ok": True}, {"n": 2, "ms": 4.0, "ok": True}, {"n": 4, "ms": 8.5, "ok": False}]
    write_data(tmp_path, "exp", {"t": rows}, {"ratio": 2.5}, units={"ratio": "x"})
    return SiteData(tmp_path)


@pytest.mark.parametrize(
    "expr, holds",
    [
        ("exp.ratio > 2", True),
        ("exp.ratio > 3", False),
        ("column('exp.t', 'n') == [1, 2, 4]", True),
        ("all(column('exp.t', 'ok'))", False),
        ("cell('exp.t', 'ms', where={'n': 2}) == 4.0", True),
        ("max(column('exp.t', 'ms')) / min(column('exp.t', 'ms')) < 5", True),
        ("1 < exp.ratio < 2", False),
        ("not exp.ratio == 2.5 or len(column('exp.t', 'ms')) == 3", True),
    ],
)
def test_expressions(data, expr, holds):
    assert check(data, expr)[0] is holds


@pytest.mark.parametrize(
    "expr, holds",
    [
        # The right side would fail (a comparison with a missing value): never evaluated.
        ("exp.ratio > 3 and exp.missing > 1", False),
        ("exp.ratio > 2 or exp.missing > 1", True),
        ("exp.ratio > 2 and exp.ratio < 3 and not exp.ratio == 2", True),
        ("exp.ratio > 3 or exp.ratio < 2 or exp.ratio == 2.4", False),
    ],
)
def test_and_or_short_circuit(data, expr, holds):
    assert check(data, expr)[0] is holds


def test_an_unguarded_missing_value_still_fails(data):
    from sitekit.rendering.pagedata import SiteDataError

    with pytest.raises(SiteDataError, match="missing"):
        check(data, "exp.ratio > 2 and exp.missing > 1")


def test_no_arbitrary_code(data):
    with pytest.raises(ClaimError, match="unsupported"):
        check(data, "__import__('os').system('true')")


def test_failed_claim_names_the_numbers(data):
    with pytest.raises(
        ClaimError, match=r"page.md: claim 'big ratio' does not hold: exp.c = exp.ratio > 3 with exp.ratio = 2.5"
    ):
        render(data, "page.md", named("exp.ratio > 3"), "big ratio")


def test_a_failed_hardware_claim_fails_too_never_printed_with_a_warning(data):
    checks = {}
    with pytest.raises(ClaimError, match=r"page.md: claim 'fast' does not hold: exp.c = exp.ratio > 3 with"):
        render(data, "page.md", named("exp.ratio > 3", hardware=True), "fast", checks)
    assert checks == {}  # nothing listed for a sentence that is never printed


def test_a_holding_claim_lists_what_it_read_among_the_page_s_checks(data):
    checks = {}
    out = render(data, "page.md", named("exp.ratio > 2", hardware=True), "fast", checks)
    assert 'href="#check-exp.c"' in out and "bear the sentence out" in out
    assert checks["exp.c"] == ("ok", "exp.ratio > 2", "exp.ratio = 2.5", "fast")


def test_perturbed_data_behind_a_claim_fails_the_build(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(REPO / "site_data", data)

    def one_cache_off(rows):  # one cache no longer equals the formula
        rows[1][rows[0].index("matches_formula")] = "false"

    edit_table(data / "cache_size", "measured", one_cache_off)
    with pytest.raises(PluginError) as failed:
        render_page("cache-size.md", data=data)
    message = str(failed.value)
    assert "cache-size.md: claim 'Every measured cache equals the formula to the byte' does not hold" in message


def test_branches_follow_the_data(data):
    from sitekit.rendering.markers import MarkerError, PageContext, render_markers

    claims = book(big="exp.ratio > 2", huge="exp.ratio > 3", nothing="exp.nothing")
    ctx = PageContext(data=data, page="p.md", url_prefix="", claims=claims)
    page = "A <!-- if exp.big -->big {{ value('exp.ratio') }}<!-- else -->small<!-- end --> Z"
    assert render_markers(page, ctx) == "A big 2.50× Z"
    assert render_markers(page.replace("exp.big", "exp.huge"), ctx) == "A small Z"
    assert render_markers("<!-- if exp.huge -->only<!-- end -->.", ctx) == "."
    with pytest.raises(MarkerError, match="no value 'nothing'"):
        render_markers("<!-- if exp.nothing -->x<!-- end -->", ctx)


def test_marker_arguments_may_name_values(data):
    from sitekit.rendering.markers import MarkerError, PageContext, render_markers

    ctx = PageContext(data=data, page="p.md", url_prefix="")
    (data.root / "exp" / "meta.json").write_text(
        (data.root / "exp" / "meta.json")
        .read_text()
        .replace(
            '"values": {',
            '"values": {"n": {"value": 2, "unit": "", "compare": "exact", "scope": "any", "words": false}, ',
        )
    )
    assert render_markers("{{ cell('exp.t', 'ms', where={'n': exp.n}) }}", ctx) == "4"
    with pytest.raises(MarkerError, match="no value 'missing'"):
        render_markers("{{ cell('exp.t', 'ms', where={'n': exp.missing}) }}", ctx)


@pytest.mark.parametrize(
    "expr, value",
    [
        ("min(column('exp.t', 'ms'))", 2.0),  # min and max are not interchangeable
        ("max(column('exp.t', 'ms'))", 8.5),
        ("-exp.ratio", -2.5),
        ("sum(column('exp.t', 'n'))", 7),
        ("sorted(column('exp.t', 'ms'), reverse=True)", [8.5, 4.0, 2.0]),
        ("round(exp.ratio * 3, 1)", 7.5),
        ("column('exp.t', 'n', where={'ok': True})", [1, 2]),
        ("{'a': 1, 'b': exp.ratio}", {"a": 1, "b": 2.5}),
        ("2 ** 64", 2**64),
        ("(2 ** 64) ** 2", 2**128),  # a base of exactly 2**64 is allowed
        ("2 ** -64", 2.0**-64),
        ("[1] * 10000", [1] * 10000),  # exactly the largest sequence allowed
        ("7 // 2 + 7 % 2", 4),
        ("2 in column('exp.t', 'n') and 3 not in column('exp.t', 'n')", True),
    ],
)
def test_values_by_hand(data, expr, value):
    import ast

    from sitekit.claims.claims import Evaluator

    assert Evaluator(data).eval(ast.parse(expr, mode="eval")) == value


@pytest.mark.parametrize(
    "expr",
    [
        "cell('exp.t', 'ms', where={'n': 1}) <= 2.0",  # <= holds at equality
        "exp.ratio >= 2.5",
        "1 <= 2 <= 2 < 3",
        "not (2 < 2)",
    ],
)
def test_comparisons_at_their_edges_hold(data, expr):
    assert check(data, expr)[0] is True


@pytest.mark.parametrize(
    "expr, message",
    [
        ("2 ** 65", "exponent 65 refused: claims allow powers up to 64"),
        ("2 ** True", "exponent True refused: claims allow powers up to 64"),
        ("2 ** 'x'", "exponent 'x' refused: claims allow powers up to 64"),
        ("(2 ** 64 + 1) ** 2", "power of a huge integer refused"),
        ("[1] * 10001", "repeating a sequence to more than 10000 items refused"),
        ("10001 * 'x'", "repeating a sequence to more than 10000 items refused"),
        ("1 / 0", "1 / 0: division by zero"),
        ("'a' - 1", "'a' - 1: unsupported operand type(s) for -: 'str' and 'int'"),
        ("cell('exp.t', 'ms', where=1)", "cell(): where must be a {column: value} dictionary, not 1"),
        ("column('exp.t', 'ms', [1])", "column(): where must be a {column: value} dictionary, not [1]"),
        ("increasing('exp.t', 'ms', 'n', 'n')", "increasing(): where must be a {column: value} dictionary, not 'n'"),
    ],
)
def test_refusals_say_exactly_why(data, expr, message):
    with pytest.raises(ClaimError) as e:
        check(data, expr)
    assert str(e.value) == message


def test_a_column_where_nothing_matches_is_an_error_not_a_vacuous_truth(data):
    from sitekit.rendering.pagedata import SiteDataError

    with pytest.raises(SiteDataError) as e:
        check(data, "all(column('exp.t', 'ok', where={'n': 3}))")
    assert str(e.value) == "column exp.t.ok where {'n': 3} is empty"


def test_what_a_claim_read_is_recorded_with_its_filter(data):
    holds, read = check(data, "cell('exp.t', 'ms', where={'n': 2}) < max(column('exp.t', 'ms')) and exp.ratio > 0")
    assert holds is True
    assert read == {"exp.t.ms {'n': 2}": 4.0, "exp.t.ms": [2.0, 4.0, 8.5], "exp.ratio": 2.5}
    assert all(type(v) in (float, int, list) for v in read.values())  # plain numbers, not NumPy ones
    assert type(read["exp.t.ms"][0]) is float


def test_the_rendered_claim_says_in_words_what_it_means_and_leads_to_its_check(data):
    import html as markup
    import re

    from sitekit.claims import claim_legend

    checks = {}
    html = render(data, "p.md", named("cell('exp.t', 'n', where={'ms': 4.0}) == 2", id="exp.n_is_two"), "two", checks)
    found = re.fullmatch(r'two<a class="claim claim-ok" href="#check-exp.n_is_two" title="([^"<>]*)">✓</a>', html)
    title = markup.unescape(found.group(1))
    # the hover is words for a reader, never the expression: that is one click further
    assert "bear the sentence out" in title and "cell(" not in title and "exp." not in title
    # written so that Markdown, which runs over a tag's attributes too, finds nothing to do
    assert not re.search(r"[\[\]{}`*_\\]", title), title
    check = checks["exp.n_is_two"]
    assert (check.state, check.expression) == ("ok", "cell('exp.t', 'n', where={'ms': 4.0}) == 2")
    assert check.numbers == "exp.t.n {'ms': 4.0} = 2"
    listing = markup.unescape(claim_legend.checks_html(checks))
    assert (
        'id="check-exp.n_is_two"' in listing and "exp.n_is_two: cell('exp.t', 'n', where={'ms': 4.0}) == 2" in listing
    )
    assert "exp.t.n {'ms': 4.0} = 2" in listing and "(1)" in listing


def test_long_lists_are_cut_to_eight_in_messages(tmp_path):
    rows = [{"i": i} for i in range(9)]
    write_data(tmp_path, "e", {"t": rows})
    data = SiteData(tmp_path)
    with pytest.raises(ClaimError) as e:
        render(data, "p.md", named("len(column('e.t', 'i')) == 8 and exp_free == 1"), "nine")
    assert "e.t.i = [0, 1, 2, 3, 4, 5, 6, 7, ...]" in str(e.value)
    rows8 = [{"i": i} for i in range(8)]
    write_data(tmp_path, "f", {"t": rows8})
    with pytest.raises(ClaimError) as e:
        render(SiteData(tmp_path), "p.md", named("len(column('f.t', 'i')) == 7 and column('e.t', 'i') == []"), "eight")
    assert "f.t.i = [0, 1, 2, 3, 4, 5, 6, 7]; " not in str(e.value)
    assert str(e.value).endswith("with f.t.i = [0, 1, 2, 3, 4, 5, 6, 7]")


def test_reads_are_keyed_with_their_filter_only_when_they_have_one(tmp_path):
    write_data(tmp_path, "one", {"t": [{"n": 3, "ms": 1.5}]})
    data = SiteData(tmp_path)
    holds, read = check(data, "cell('one.t', 'ms') < 2 and column('one.t', 'n', where={'ms': 1.5}) == [3]")
    assert holds is True and read == {"one.t.ms": 1.5, "one.t.n {'ms': 1.5}": [3]}


def test_an_unparsable_claim_says_so(data):
    with pytest.raises(ClaimError) as e:
        check(data, "1 +")
    assert str(e.value) == "cannot parse claim '1 +': invalid syntax"


def test_a_failed_claim_lists_every_number_it_read(data):
    with pytest.raises(ClaimError) as e:
        render(data, "p.md", named("exp.ratio > 2 and max(column('exp.t', 'n')) > 4"), "big")
    assert str(e.value) == (
        "p.md: claim 'big' does not hold: exp.c = exp.ratio > 2 and max(column('exp.t', 'n')) > 4 "
        "with exp.ratio = 2.5; exp.t.n = [1, 2, 4]"
    )


def test_a_float_read_is_shown_to_six_significant_digits():
    from sitekit.claims.claims import numbers

    read = {"e.low": -0.02587726686246694, "e.col": [1.23456789, 2, "x"], "e.n": 12}
    assert numbers(read) == "e.low = -0.0258773; e.col = [1.23457, 2, 'x']; e.n = 12"


# Claims over timings: a table of two points swept over c, and a table of one lone point.
# sweep: c = 16 at 10 ms [9.9, 10.1], c = 256 at 10.4 ms [10.3, 10.5] (apart: increasing);
# alone: 10.05 ms [9.95, 10.15], which overlaps the first point (faster cannot tell).
SWEEP_16 = "interval('timed.sweep', 'step_ms', where={'c': 16})"
ALONE = "interval('timed.alone', 'step_ms')"


@pytest.fixture
def timed(tmp_path):
    from sitedata import Column, Result, Table, write_experiment
    from sitedata.schema import interval_columns
    from tests.conftest import PROVENANCE

    def row(c, median, low, high):
        return {"c": c, "step_ms": median, "step_low_ms": low, "step_high_ms": high, "step_samples": 7}

    rows = {"sweep": [row(16, 10.0, 9.9, 10.1), row(256, 10.4, 10.3, 10.5)], "alone": [row(512, 10.05, 9.95, 10.15)]}
    tables = tuple(Table(t, t.upper(), (Column("c"), *interval_columns("step_ms", "ms"))) for t in rows)
    write_experiment(tmp_path, "timed", Result(tables=rows, values={}), tables=tables, values=(), provenance=PROVENANCE)
    return SiteData(tmp_path)


def test_timings_are_read_as_intervals_keyed_with_their_filter_only_when_they_have_one(timed):
    holds, read = check(timed, f"within_noise({SWEEP_16}, {ALONE})")
    assert holds is True
    assert {k: repr(v) for k, v in read.items()} == {
        "timed.sweep.step_ms {'c': 16}": "10 [9.9, 10.1]",
        "timed.alone.step_ms": "10.05 [9.95, 10.15]",
    }


def test_a_series_is_read_point_by_point_in_the_order_of_its_x(timed):
    holds, read = check(timed, "increasing('timed.sweep', 'step_ms', by='c')")
    assert holds is True  # 10.1 below 10.3: apart
    assert read == {"timed.sweep.step_ms by c": ["16: 10 [9.9, 10.1]", "256: 10.4 [10.3, 10.5]"]}


def test_flat_defaults_to_a_band_of_five_percent_per_doubling(timed):
    # 10 -> 10.4 ms over log2(256 / 16) = 4 doublings: 1.04 ** (1/4) - 1 = +0.99 % per
    # doubling; bounds (10.3 / 10.1) ** (1/4) - 1 = +0.49 % and (10.5 / 9.9) ** (1/4) - 1 = +1.48 %
    holds, read = check(timed, "flat('timed.sweep', 'step_ms', by='c')")
    assert holds is True
    assert read["change per doubling of c"] == "+1.0% [+0.5%, +1.5%], band ±5%"
    # the same change against a band of ±1 % straddles its edge, of ±0.4 % lies above it
    assert check(timed, "flat('timed.sweep', 'step_ms', by='c', within=0.01)")[0] is NOISE
    assert check(timed, "flat('timed.sweep', 'step_ms', by='c', within=0.004)")[0] is False


@pytest.mark.parametrize(
    "expr, holds",
    [
        ("inside_band(-0.01, 0.02, within=0.05)", True),  # wholly inside ±5 %
        ("inside_band(-0.01, 0.02, within=0.01)", NOISE),  # +2 % past the edge of ±1 %
        ("inside_band(0.02, 0.03, within=0.01)", False),  # wholly above +1 %
        ("below(1.5, 2.5, limit=3)", True),
        ("below(1.5, 2.5, limit=2)", NOISE),
        ("not below(1.5, 2.5, limit=1)", True),  # above
    ],
)
def test_a_timing_word_takes_its_arguments_by_name(timed, expr, holds):
    assert check(timed, expr)[0] is holds


@pytest.mark.parametrize(
    "expr, message",
    [
        ("increasing('timed.sweep', 'c', by='c')", "column timed.sweep.c declares no interval"),
        ("flat('timed.sweep', 'c', by='c')", "column timed.sweep.c declares no interval"),
        ("interval('timed.sweep', 'c', where={'c': 16})", "column timed.sweep.c declares no interval"),
        (
            "increasing('timed.sweep', 'step_ms', by='c', where={'c': 32})",
            "column timed.sweep.step_ms where {'c': 32} is empty",
        ),
    ],
)
def test_a_timing_word_over_data_it_cannot_use_names_the_column(timed, expr, message):
    from sitekit.rendering.pagedata import SiteDataError

    with pytest.raises(SiteDataError) as e:
        check(timed, expr)
    assert str(e.value) == message


def test_a_claim_within_the_noise_renders_its_words_and_what_it_read(timed):
    import html as markup
    import re

    expr = f"faster({SWEEP_16}, {ALONE})"
    checks = {}
    out = render(timed, "p.md", named(expr, id="timed.quicker"), "quicker", checks)
    found = re.fullmatch(
        r'quicker<a class="claim claim-noise" href="#check-timed.quicker" title="([^"<>]*)">≈</a> '
        r'<span class="claim-noise-note">\(within this machine\'s noise\)</span>',
        out,
    )
    assert found, out
    assert "cannot tell" in markup.unescape(found.group(1))
    assert checks["timed.quicker"].numbers == (
        "timed.sweep.step_ms {'c': 16} = 10 [9.9, 10.1]; timed.alone.step_ms = 10.05 [9.95, 10.15]"
    )


def test_a_holding_claim_renders_its_whole_expression_in_the_page_s_checks(data):
    expr = " or ".join(["exp.ratio > 2"] * 16)  # 16 * 13 + 15 * 4 = 268 characters, none cut
    checks = {}
    out = render(data, "page.md", named(expr, hardware=True), "fast", checks)
    assert out.startswith('fast<a class="claim claim-ok" href="#check-exp.c" title="')
    assert out.endswith('">✓</a>')
    assert checks["exp.c"].expression == expr and checks["exp.c"].numbers == "exp.ratio = 2.5"


# Messages quote the expression cut to its first 200 characters and an ellipsis, so that a
# long claim cannot make a long error; the long text here is a literal of 250 x's.
X250 = "'" + "x" * 250 + "'"
CUT = "'" + "x" * 199 + "…"  # the quote and 199 x's: 200 characters


@pytest.mark.parametrize(
    "expr, message",
    [
        (f"{X250} - 1", f"{CUT}: unsupported operand type(s) for -: 'str' and 'int'"),
        (f"{X250} < 1", f"{CUT}: TypeError: '<' not supported between instances of 'str' and 'int'"),
        (f"{X250}[0]", f"unsupported expression: {CUT}"),
        ("{**{'a': 1}} == {}", "unpacking a dictionary ({**...}) refused"),
        ("max(**{'a': 1})", "unpacking keyword arguments (**...) refused"),
    ],
)
def test_long_expressions_are_quoted_cut_in_refusals(data, expr, message):
    with pytest.raises(ClaimError) as e:
        check(data, expr)
    assert str(e.value) == message


def test_comparing_a_result_within_the_noise_is_refused_quoting_the_claim_cut(timed):
    expr = f"faster({SWEEP_16}, {ALONE}) == {X250}"
    assert len(expr) > 200
    with pytest.raises(ClaimError) as e:
        check(timed, expr)
    assert str(e.value) == f"{expr[:200]}…: a result within this machine's noise cannot be compared"


def test_an_interval_alone_is_no_claim_and_the_refusal_quotes_the_claim_cut(timed):
    # spaces between the arguments: the claim as written, not as parsed, is quoted
    expr = f"interval('timed.sweep',{' ' * 200}'step_ms', where={{'c': 16}})"
    with pytest.raises(ClaimError) as e:
        check(timed, expr)
    assert str(e.value) == (
        "interval('timed.sweep'," + " " * 177 + "…: TypeError: "
        "an interval is no claim by itself: compare it with faster() or within_noise()"
    )


def test_every_text_a_claim_read_is_cut_to_200_characters():
    from sitekit.claims.claims import numbers

    key = "e.t.n {'tag': '" + "k" * 250 + "'}"
    read = {key: "v" * 250, "e.t.few": ["w" * 250], "e.t.many": ["z" * 250] * 9}
    assert numbers(read) == "; ".join(
        [
            f"{key[:200]}… = {'v' * 200}…",
            f"e.t.few = [{CUT.replace('x', 'w')}]",  # a short list shows each text quoted
            f"e.t.many = [{', '.join(['z' * 200 + '…'] * 8)}, ...]",
        ]
    )
