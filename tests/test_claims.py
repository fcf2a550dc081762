"""Claims: the evaluator on hand-made data, and a build that fails when one stops holding."""

import shutil

import pytest
from sitekit.claims import ClaimError, check, render
from sitekit.pagedata import SiteData

from tests.conftest import REPO, build_site, edit_table, write_data


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
    from sitekit.pagedata import SiteDataError

    with pytest.raises(SiteDataError, match="missing"):
        check(data, "exp.ratio > 2 and exp.missing > 1")


def test_no_arbitrary_code(data):
    with pytest.raises(ClaimError, match="unsupported"):
        check(data, "__import__('os').system('true')")


def test_failed_claim_names_the_numbers(data):
    with pytest.raises(
        ClaimError, match=r"page.md: claim 'big ratio' does not hold: exp.ratio > 3 with exp.ratio = 2.5"
    ):
        render(data, "page.md", "exp.ratio > 3", "big ratio")


def test_failed_hardware_claim_warns_on_the_page(data):
    out = render(data, "page.md", "exp.ratio > 3", "fast", hardware=True)
    assert "claim-failed" in out and "exp.ratio = 2.5" in out


def test_perturbed_data_behind_a_claim_fails_the_build(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(REPO / "site_data", data)

    def one_cache_off(rows):  # one cache no longer equals the formula
        rows[1][rows[0].index("matches_formula")] = "false"

    edit_table(data / "cache_size", "measured", one_cache_off)
    proc = build_site(tmp_path, data=data)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "cache-size.md: claim 'Every measured cache equals the formula to the byte' does not hold" in out


def test_branches_follow_the_data(data):
    from sitekit.markers import MarkerError, PageContext, render_markers

    ctx = PageContext(data=data, page="p.md", url_prefix="")
    page = "A <!-- if exp.ratio > 2 -->big {{ value('exp.ratio') }}<!-- else -->small<!-- end --> Z"
    assert render_markers(page, ctx) == "A big 2.50× Z"
    assert render_markers(page.replace("> 2", "> 3"), ctx) == "A small Z"
    assert render_markers("<!-- if exp.ratio > 3 -->only<!-- end -->.", ctx) == "."
    with pytest.raises(MarkerError, match="no value 'nothing'"):
        render_markers("<!-- if exp.nothing -->x<!-- end -->", ctx)


def test_marker_arguments_may_name_values(data):
    from sitekit.markers import MarkerError, PageContext, render_markers

    ctx = PageContext(data=data, page="p.md", url_prefix="")
    (data.root / "exp" / "meta.json").write_text(
        (data.root / "exp" / "meta.json")
        .read_text()
        .replace('"values": {', '"values": {"n": {"value": 2, "unit": "", "compare": "exact", "scope": "any"}, ')
    )
    assert render_markers("{{ cell('exp.t', 'ms', where={'n': exp.n}) }}", ctx) == "4"
    with pytest.raises(MarkerError, match="no value 'missing'"):
        render_markers("{{ cell('exp.t', 'ms', where={'n': exp.missing}) }}", ctx)
