"""The bibliography and the closing page: every page ends with its references, every
mention names a work on that page's list, every work is complete and cited somewhere,
and the markers fail the build on a bad key instead of printing a guess."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from sitekit.claims import answer_files, claims
from sitekit.claims.claim_files import load
from sitekit.rendering.markers import MarkerError, PageContext, render_markers
from sitekit.rendering.pagedata import SiteData
from sitekit.sources import references as refs
from sitekit.sources.works import PAGES, WORKS, Work
from tests.conftest import REPO, english_pages, nav_pages

DOCS = REPO / "docs"
MARKER_KEYS = re.compile(r"\{\{\s*cite\((.*?)\)\s*\}\}")
BIBLIOGRAPHY_PAGE = "references.md"


def _pages() -> list[str]:
    return sorted(p.name for p in english_pages() if p.name != BIBLIOGRAPHY_PAGE)


def _cited_keys(markdown: str) -> list[str]:
    return [k for args in MARKER_KEYS.findall(markdown) for k in re.findall(r"'([^']*)'", args)]


def _ctx(page: str, titles: dict[str, str] | None = None) -> PageContext:
    folder = REPO / "measure" / "experiments"  # the claims and the answers the pages name
    book, answers = load(folder, REPO, claims.CALLS), answer_files.load(folder, REPO, claims.CALLS)
    data = SiteData(REPO / "site_data")
    return PageContext(data=data, page=page, url_prefix="", claims=book, titles=titles or {}, answers=answers)


# --- the data ---------------------------------------------------------------------


def test_every_page_has_a_list_and_every_list_a_page():
    assert sorted(PAGES) == _pages()


def test_every_page_ends_with_its_references_section():
    for page in _pages():
        text = (DOCS / page).read_text(encoding="utf-8")
        headings = re.findall(r"^## (.+)$", text, flags=re.M)
        assert headings and headings[-1] == "References", f"{page}: the last section is not References"
        section = text.rsplit("## References", 1)[1]
        assert "{{ references() }}" in section, f"{page}: its References section has no references() marker"
        if "Beside the chapter" in headings:
            assert headings.index("Beside the chapter") < len(headings) - 1


def test_every_mention_names_a_work_on_its_pages_list():
    for page in _pages():
        for key in _cited_keys((DOCS / page).read_text(encoding="utf-8")):
            assert key in refs.BY_KEY, f"{page} cites unknown {key!r}"
            assert key in PAGES[page], f"{page} cites {key!r}, not on its list"


def test_every_work_is_cited_by_some_page_and_held_once():
    keys = [w.key for w in WORKS]
    assert len(keys) == len(set(keys))
    listed = {k for ks in PAGES.values() for k in ks}
    assert set(keys) == listed, f"uncited: {set(keys) - listed}; unknown: {listed - set(keys)}"
    for page, ks in PAGES.items():
        assert len(ks) == len(set(ks)), f"{page} lists a work twice"


@pytest.mark.parametrize("work", WORKS, ids=lambda w: w.key)
def test_every_entry_is_complete(work: Work):
    assert work.authors and all(len(a.split()) >= 2 for a in work.authors), "authors as 'Given Family'"
    assert 1900 < work.year < 2100
    assert work.title.strip() and work.venue.strip()
    assert re.fullmatch(r"https://[\w.-]+/\S+", work.url)
    # a key is the first author's family name and the year, so a typo in either shows
    assert work.key == refs.family(work.authors[0]).lower().replace("ă", "a") + str(work.year)
    if work.arxiv:
        assert re.fullmatch(r"\d{4}\.\d{4,5}", work.arxiv)
        assert work.url == f"https://arxiv.org/abs/{work.arxiv}"
        assert int(work.arxiv[:2]) <= work.year % 100, "an arXiv id is never from after the year of the work"


# --- rendering, by hand-worked cases ---------------------------------------------------

ONE = Work("solo2019", ("Noam Solo",), 2019, "T", "V", "https://example.org/a")
TWO = Work("pair2015", ("Ann Pair", "Bo Duo"), 2015, "T", "V", "https://example.org/b")
MANY = replace(TWO, key="trio2006", authors=("Cy Trio", "Di Two", "Ed Three"), year=2006)


def test_short_mentions():
    assert refs.short(ONE) == "Solo, 2019"
    assert refs.short(TWO) == "Pair and Duo, 2015"
    assert refs.short(MANY) == "Trio et al., 2006"
    assert refs.author_list(MANY) == "Cy Trio, Di Two and Ed Three"
    assert refs.author_list(ONE) == "Noam Solo"


def test_an_entry_names_authors_year_title_venue_and_address():
    assert refs.entry(TWO) == (
        'Ann Pair and Bo Duo (2015). <span lang="en">*T*. V.</span> [example.org/b](https://example.org/b)'
    )


def test_cite_links_to_the_pages_own_list():
    out = refs.cite(_ctx("speculative-decoding.md"), "leviathan2023", "chen2023")
    assert out == "([Leviathan et al., 2023](#ref-leviathan2023); [Chen et al., 2023](#ref-chen2023))"


def test_a_pages_list_is_numbered_in_its_order_with_anchors():
    out = refs.references(_ctx("distillation.md"))
    lines = out.splitlines()
    assert lines[0].startswith('1. <span id="ref-bucilua2006"></span>Cristian Buciluă, Rich Caruana and')
    assert lines[1].startswith(
        '2. <span id="ref-hinton2015"></span>Geoffrey Hinton, Oriol Vinyals and Jeff Dean (2015).'
    )
    assert "[References](references.md)" in out


def test_a_page_with_no_works_says_so(monkeypatch):
    monkeypatch.setitem(PAGES, "methods.md", ())
    out = refs.references(_ctx("methods.md"))
    assert "no published method" in out and "ref-" not in out


def test_bibliography_lists_each_work_with_the_pages_that_cite_it():
    titles = {page: page.removesuffix(".md").upper() for page in PAGES}
    out = refs.bibliography(_ctx(BIBLIOGRAPHY_PAGE, titles))
    assert out.count('<span id="ref-') == len(WORKS)
    hinton = next(line for line in out.split("\n- ") if "ref-hinton2015" in line)
    assert "[DISTILLATION](distillation.md#references)" in hinton
    assert "[WHAT-TO-REACH-FOR](what-to-reach-for.md#references)" in hinton
    assert "kv-cache.md" not in hinton
    order = re.findall(r'ref-([a-z]+)\d{4}"', out)  # by first author's family name
    assert order == sorted(order) and len(order) == len(WORKS)


def test_the_bibliography_lists_a_works_pages_in_the_navs_order():
    nav = {page: page.removesuffix(".md").upper() for page in nav_pages() if page in PAGES}
    hinton = "[DISTILLATION](distillation.md#references), [WHAT-TO-REACH-FOR](what-to-reach-for.md#references)"
    assert hinton in refs.bibliography(_ctx(BIBLIOGRAPHY_PAGE, nav))
    backwards = dict(reversed(nav.items()))
    assert ", ".join(reversed(hinton.split(", "))) in refs.bibliography(_ctx(BIBLIOGRAPHY_PAGE, backwards))


# --- failures, injected ------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "marker", "message"),
    [
        ("distillation.md", "{{ cite('hinton2016') }}", "unknown work 'hinton2016'"),
        ("distillation.md", "{{ cite('kwon2023') }}", "distillation.md cites 'kwon2023', which is not on its list"),
        ("distillation.md", "{{ cite() }}", "cite() needs at least one key"),
        ("nowhere.md", "{{ references() }}", "page nowhere.md has no list of works"),
        (BIBLIOGRAPHY_PAGE, "{{ bibliography() }}", "is not in the site's nav"),
    ],
)
def test_a_bad_reference_fails_the_build_with_one_line(page, marker, message):
    with pytest.raises(MarkerError) as e:
        render_markers(marker, _ctx(page))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_work_no_page_cites_fails_the_bibliography(monkeypatch):
    monkeypatch.setattr(refs, "WORKS", (*WORKS, ONE))
    titles = {page: page for page in PAGES}
    with pytest.raises(refs.CitationError, match="'solo2019' is cited by no page"):
        refs.bibliography(_ctx(BIBLIOGRAPHY_PAGE, titles))


# --- the built pages -------------------------------------------------------------------


@pytest.mark.build
def test_the_built_pages_carry_their_references(built_site):
    for page in _pages():
        path = built_site / ("index.html" if page == "index.md" else f"{page.removesuffix('.md')}/index.html")
        html = path.read_text(encoding="utf-8")
        assert 'id="references"' in html, page
        for key in PAGES[page]:
            assert f'id="ref-{key}"' in html, f"{page}: no entry for {key}"
    bibliography = (built_site / "references" / "index.html").read_text(encoding="utf-8")
    for work in WORKS:
        assert f'id="ref-{work.key}"' in bibliography and work.url in bibliography
    assert 'href="../what-to-reach-for/#references"' in bibliography


def test_the_closing_page_binds_every_reason_to_a_page_and_the_data():
    text = (DOCS / "what-to-reach-for.md").read_text(encoding="utf-8")
    for page in (
        "kv-cache.md",
        "cache-size.md",
        "batching.md",
        "weight-quantization.md",
        "quality.md",
        "memory-budget.md",
        "speculative-decoding.md",
        "distillation.md",
    ):
        assert f"]({page})" in text, f"the closing page does not link {page}"
    rendered = render_markers(text, _ctx("what-to-reach-for.md"))
    assert "{{" not in rendered and "}}" not in rendered
    # every comparison on it is a claim checked against the data
    assert text.count("{{ claim(") >= 8
