"""A page's provenance once, at its end; under each table a caption above it, a short line
with its CSV and a link there; a long table folded to its summary rows; a profiler row
below what the profiler resolves left out. On hand-made data, then on the built site."""

from __future__ import annotations

import re
from html import unescape

import pytest

from sitekit.rendering.markers import PageContext, render_markers
from sitekit.rendering.pagedata import SiteData
from sitekit.sources import page_provenance
from tests.conftest import LANGUAGES, write_data

LAYERS = [{"layer": i, "peak": float(i * i)} for i in range(30)]


@pytest.fixture
def ctx(tmp_path):
    write_data(tmp_path, "exp", {"layers": LAYERS, "short": [{"n": 1}, {"n": 2}]}, {"peak_layer": 11})
    write_data(tmp_path, "other", {"t": [{"x": 0.0005}, {"x": 3.0}]})
    return PageContext(data=SiteData(tmp_path), page="p.md", url_prefix="../")


def _rows(html: str) -> list[str]:
    return re.findall(r"<tr>\s*<td>(\d+)</td>", html)


def test_a_long_table_shows_its_summary_rows_and_folds_the_rest(ctx):
    html = render_markers("{{ table('exp.layers', summary={'layer': [exp.peak_layer, 15]}, ends=True) }}", ctx)
    shown, folded = html.split('<details class="table-fold">')
    assert _rows(shown) == ["0", "11", "15", "29"]  # the first, the two named, the last
    assert len(_rows(folded)) == 26 and "(26)" in folded
    assert _rows(shown + folded) != sorted(set(_rows(shown + folded)))  # folded rows come after, not lost
    assert sorted(map(int, _rows(shown + folded))) == list(range(30))


def test_a_table_longer_than_a_screen_folds_without_being_asked_and_a_short_one_never(ctx):
    from sitekit.rendering.table_marker import FOLD_SHOW

    long = render_markers("{{ table('exp.layers') }}", ctx)
    assert len(_rows(long.split("<details")[0])) == FOLD_SHOW and "table-fold" in long
    assert "table-fold" not in render_markers("{{ table('exp.short') }}", ctx)


def test_the_caption_stands_outside_the_table_that_scrolls(ctx):
    html = render_markers("{{ table('exp.short', caption='Two rows') }}", ctx)
    assert re.search(r'<p class="table-caption" id="table-1">Two rows</p>\s*<table aria-labelledby="table-1">', html)
    assert "<caption" not in html
    # the next table on the page gets its own id
    assert 'id="table-2"' in render_markers("{{ table('exp.short') }}", ctx)


def test_rows_below_what_a_column_can_resolve_are_left_out(ctx):
    html = render_markers("{{ table('other.t', hide_below={'x': 0.001}) }}", ctx)
    assert len(re.findall(r"<tr>\s*<td>", html)) == 1 and "0.0005" not in html


def test_each_table_links_its_csv_and_its_run_and_the_page_names_each_run_once(ctx):
    html = render_markers("{{ table('exp.short') }} {{ table('exp.layers') }} {{ table('other.t') }}", ctx)
    assert 'class="provenance"' not in html  # no box under a table
    assert html.count('href="#provenance-exp"') == 2 and html.count('href="#provenance-other"') == 1
    assert 'href="../data/exp/short.csv"' in html
    end = page_provenance.page_section(ctx)
    assert ctx.read == ["exp", "other"]
    assert end.count('<tr id="provenance-exp">') == 1 and end.count('id="provenance-other"') == 1
    assert (
        end.startswith("\n\n## ")
        and page_provenance.own_text("text" + end) == "text"
        and 'class="provenance"' not in end
    )
    # what both runs share is said once, above the row of each
    shared = end.split('class="provenance-table provenance-shared"', 1)[1].split("</table>", 1)[0]
    assert shared.count("m (1\xa0parameter)") == 1 and 'class="provenance-runs"' in end


def test_a_page_that_reads_no_data_has_no_provenance(ctx):
    render_markers("No data here.", ctx)
    assert page_provenance.page_section(ctx) == ""


def test_an_assumption_table_shows_its_csv_and_no_run(tmp_path, monkeypatch):
    from sitekit.sources import quoted

    write_data(tmp_path, "exp", {"cards": [{"gib": 8}]})
    monkeypatch.setattr(quoted, "ASSUMED", frozenset({"exp.cards"}))
    page = PageContext(data=SiteData(tmp_path), page="p.md", url_prefix="")
    html = render_markers("{{ table('exp.cards') }}", page)
    assert "cards.csv" in html and "#provenance-" not in html and "stated assumptions" in html


# The built site: every page of every edition.


def _pages(site):
    for lang in ("", *(f"{lang}/" for lang in LANGUAGES if lang != "en")):
        for html in sorted((site / lang).glob("*/index.html")) + [site / lang / "index.html"]:
            if html.parent.name not in ("search", "assets", *LANGUAGES):
                yield html, html.read_text(encoding="utf-8")


@pytest.mark.build
def test_every_page_shows_each_run_once_and_every_table_leads_to_it(built_site):
    pages = 0
    for path, html in _pages(built_site):
        article = html.split("<article", 1)[-1].split("</article>", 1)[0]
        assert article.count('class="page-provenance"') <= 1, path
        section = article.split('class="page-provenance"', 1)[1] if "page-provenance" in article else ""
        body = article.split('class="page-provenance"', 1)[0]
        assert '<details class="provenance"' not in body, f"{path}: a provenance box outside the page's end"
        runs = re.findall(r'<tr id="(provenance-[a-z_]+)">', section)
        assert len(runs) == len(set(runs)), f"{path}: a run shown twice"
        for target in set(re.findall(r'href="#(provenance-[a-z_]+)"', body)):
            assert target in runs, f"{path}: a table leads to #{target}, which the page's end does not hold"
        tables = body.count('<div class="measured-table" data-table=')
        lines = body.count('<p class="table-data">') + body.count('<p class="source">')
        assert lines >= tables, f"{path}: {tables} tables, {lines} lines under them"
        pages += bool(runs)
    assert pages >= 5 * 12


@pytest.mark.build
def test_every_check_mark_leads_to_its_check_on_its_page(built_site):
    marks = 0
    for path, html in _pages(built_site):
        # an id is read as the browser reads it: "&#95;" is "_" (the text escapes it so that
        # Markdown reads no emphasis)
        ids = re.sub(r'<li id="([^"]*)"', lambda m: f'<li id="{unescape(m.group(1))}"', html)
        for target in set(re.findall(r'<a class="claim claim-[a-z]+" href="#(check-[^"]+)"', html)):
            marks += 1
            assert f'<li id="{target}">' in ids, f"{path}: #{target} has no check"
            item = ids.split(f'<li id="{target}">', 1)[1].split("</li>", 1)[0]
            assert "<code>" in item, f"{path}: #{target} shows no expression"
        for title in re.findall(r'<a class="claim [^"]*" href="[^"]*" title="([^"]*)"', html):
            assert "(" not in unescape(title), f"{path}: a mark's hover holds an expression: {title[:80]}"
    assert marks > 100
