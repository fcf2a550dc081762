"""Figures quoted, never measured here (sitekit/sources/quoted.py): the source chapter's own
and the published facts a few tables copy. A page names their source in one line, in its
own language, never a measurement's provenance; writes each number as its source gave it,
with the row's unit, as the page's locale writes numbers; and a chapter figure set beside
this run's in another unit is converted to that unit, the chapter's own wording on hover."""

from __future__ import annotations

import html
import re

import pytest

from sitekit.language import formatting, i18n
from sitekit.sources import quoted
from tests.conftest import LANGUAGES, write_data

EDITIONS = ("en", *LANGUAGES)


@pytest.fixture
def locale():
    def use(language: str) -> None:
        i18n.set_language(language)
        formatting.set_locale(language)

    yield use
    use("en")


# -- conversion ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, unit, into, expected",
    [
        (0.1665, "s", "ms", 166.5),
        (1.0224, "s", "ms", 1022.4),
        (25.6, "ms", "s", 0.0256),
        (60.3, "ms", "ms", 60.3),
        (768, "MiB", "bytes", 805_306_368),
        (3_624_960, "bytes", "KiB", 3540),
        (2, "GiB", "MiB", 2048),
        (1500, "µs", "ms", 1.5),
    ],
)
def test_a_figure_converts_to_another_unit_of_its_kind(value, unit, into, expected):
    assert quoted.convert(value, unit, into) == expected


@pytest.mark.parametrize("unit, into", [("s", "bytes"), ("MiB", "ms"), ("", "ms"), ("x", "s"), ("s", "hours")])
def test_a_figure_never_converts_across_kinds(unit, into):
    with pytest.raises(ValueError, match="cannot write a figure"):
        quoted.convert(1.0, unit, into)


@pytest.mark.parametrize("value, decimals", [(1.0224, 4), (6.0, 0), (494_032_768, 0), (0.1355, 4), (1579.6, 1)])
def test_the_decimals_a_figure_was_given_with(value, decimals):
    assert quoted.given_decimals(value) == decimals


@pytest.mark.parametrize(
    "language, value, unit, expected",
    [
        ("en", 494_032_768, "parameters", "494,032,768 parameters"),
        ("en", 1.0224, "s", "1.0224 s"),
        ("en", 0.1355, "fraction", "13.55%"),
        ("en", 2.67, "x", "2.67×"),
        ("en", 3_624_960, "bytes", "3,624,960 bytes"),
        ("en", 0.0952, "", "0.0952"),
        ("gl", 1.0224, "s", "1,0224 s"),
        ("es", 494_032_768.0, "parameters", "494.032.768 parámetros"),
        ("it", 1579.6, "", "1.579,6"),
        ("cs", 494_032_768, "parameters", "494 032 768 parametrů"),
    ],
)
def test_a_quoted_number_keeps_every_digit_its_source_gave(locale, language, value, unit, expected):
    locale(language)
    shown = quoted.as_given(value, unit).replace(formatting.NBSP, " ").replace("\u202f", " ")
    assert shown == expected


def test_a_converted_figure_shows_the_chapters_wording_on_hover(locale):
    locale("gl")
    shown = quoted.beside(0.1665, "s", "ms", "auto", 4, "chapter")
    title = html.unescape(re.search(r'title="([^"]*)"', shown).group(1)).replace(formatting.NBSP, " ")
    text = html.unescape(re.sub("<[^>]+>", "", shown)).replace(formatting.NBSP, " ")
    assert text == "166,5 ms"
    assert title == "tal como o dá o capítulo: 0,1665 s"


def test_a_quoted_time_is_written_in_ms_with_every_digit_its_source_gave():
    assert re.sub("<[^>]+>", "", quoted.in_site_unit(1.0224, "s")) == "1,022.4\u00a0ms"
    assert re.sub("<[^>]+>", "", quoted.in_site_unit(2, "s")) == "2,000\u00a0ms"
    assert quoted.in_site_unit(25.6, "ms") == "25.6\u00a0ms"  # already the site's unit: as given


# -- markers, on hand-made data -------------------------------------------------------


def _chapter(tmp_path):
    from sitekit.rendering.markers import PageContext
    from sitekit.rendering.pagedata import SiteData

    rows = [
        {"what": "its parameters", "value": 494_032_768, "text": None, "unit": "parameters"},
        {"what": "the device", "value": None, "text": "8 GB laptop GPU", "unit": ""},
        {"what": "time of one decode step", "value": 0.1665, "text": None, "unit": "s"},
    ]
    write_data(tmp_path, "chapter", {"figures": rows}, {"decode_s_per_step": 0.1665}, units={"decode_s_per_step": "s"})
    write_data(tmp_path, "e", {"t": [{"n": 1}]})
    return PageContext(data=SiteData(tmp_path), page="p.md", url_prefix="")


def test_a_quoted_table_writes_each_row_in_its_unit_and_names_its_source(tmp_path):
    from sitekit.rendering.markers import render_markers

    ctx = _chapter(tmp_path)
    out = render_markers(
        "{{ table('chapter.figures', columns=['what', 'value'], units='unit', merge={'value': 'text'}) }}", ctx
    )
    cells = [html.unescape(re.sub("<[^>]*>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", out)]
    assert [c.replace(formatting.NBSP, " ") for c in cells[1::2]] == [
        "494,032,768 parameters",
        "8 GB laptop GPU",
        "166.5 ms",  # a time in ms, as everywhere on the site, every digit kept
    ]
    assert 'title="as the chapter gives it: 0.1665\u00a0s"' in out
    assert 'class="provenance"' not in out
    assert "measure/reference/chapter.py" in out and "figures.csv" in out
    measured = render_markers("{{ table('e.t') }}", ctx)  # a run's table leads to its provenance at the page's end
    assert 'href="#provenance-e"' in measured and 'class="source"' not in measured


def test_provenance_of_a_quoted_experiment_is_its_source_line(tmp_path):
    from sitekit.rendering.markers import render_markers

    ctx = _chapter(tmp_path)
    out = render_markers("{{ provenance('chapter') }}", ctx)
    assert 'class="provenance"' not in out and "measure/reference/chapter.py" in out


def test_the_list_of_experiments_sets_the_quoted_figures_apart(tmp_path):
    from sitekit.rendering.markers import render_markers

    out = render_markers("{{ experiments() }}", _chapter(tmp_path))
    table, _, rest = out.partition("</table>")
    assert "<code>e</code>" in table and "chapter" not in table
    assert "<code>chapter</code>" in rest and "measure/reference/chapter.py" in rest


def test_into_converts_a_value_and_refuses_another_kind(tmp_path):
    from sitekit.rendering.markers import MarkerError, render_markers

    ctx = _chapter(tmp_path)
    out = render_markers("{{ value('chapter.decode_s_per_step', digits=4, into='ms') }}", ctx)
    assert re.sub("<[^>]+>", "", out).replace(formatting.NBSP, " ") == "166.5 ms"
    assert "as the chapter gives it: 0.1665" in out
    with pytest.raises(MarkerError, match="cannot write a figure"):
        render_markers("{{ value('chapter.decode_s_per_step', into='bytes') }}", ctx)


# -- the built site, every edition ------------------------------------------------------


def _page(site, language: str, page: str) -> str:
    folder = site if language == "en" else site / language
    return (folder / ("" if page == "index" else page) / "index.html").read_text(encoding="utf-8")


def _chapter_table(page: str) -> str:
    """The table's box: its rows shown, the rows folded under them, and its source line."""
    start = page.index('data-table="chapter.figures"')
    return page[start : page.index("\n</div>", start) + 7]


SOURCE_LINE = {
    "en": "Source: typed from the source chapter",
    "gl": "Fonte: transcrito do capítulo de orixe",
    "es": "Fuente: transcrito del capítulo de origen",
    "it": "Fonte: trascritto dal capitolo di origine",
    "cs": "Zdroj: přepsáno ze zdrojové kapitoly",
}


@pytest.mark.build
@pytest.mark.parametrize("language", EDITIONS)
def test_the_methods_page_quotes_the_chapter_in_its_language(built_site, language):
    from measure.reference.chapter import FIGURES

    table = _chapter_table(_page(built_site, language, "methods"))
    assert 'class="provenance"' not in table and "SmolLM2" not in table
    assert SOURCE_LINE[language] in table and "measure/reference/chapter.py" in table
    rows = [r for r in re.findall(r"<tr>(.*?)</tr>", table, re.S) if "<th" not in r]  # shown, then folded
    assert len(rows) == len(FIGURES)
    for figure, row in zip(FIGURES, rows, strict=True):
        what, shown = (html.unescape(re.sub("<[^>]*>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)[1:3])
        if language != "en":
            assert what != figure.what, (language, figure.what)
        if isinstance(figure.value, str):
            continue
        formatting.set_locale(language)
        i18n.set_language(language)
        try:
            expected = html.unescape(re.sub("<[^>]*>", "", quoted.in_site_unit(figure.value, figure.unit)))
        finally:
            formatting.set_locale("en")
            i18n.set_language("en")
        assert shown == expected, (language, figure.name, shown)
        assert figure.unit in ("", "x", "fraction") or shown != str(figure.value)


@pytest.mark.build
@pytest.mark.parametrize("language", EDITIONS)
def test_the_methods_page_sets_what_it_quotes_apart_from_what_it_measured(built_site, language):
    page = html.unescape(_page(built_site, language, "methods"))
    block = page[page.index('class="measured-table experiments"') :]
    table, _, rest = block.partition("</table>")
    assert "<code>chapter</code>" not in table
    assert "<code>kv_<wbr>cache</code>" in table
    quoted_list = rest[: rest.index("</ul>")]
    assert "<code>chapter</code>" in quoted_list and SOURCE_LINE[language] in quoted_list


@pytest.mark.build
@pytest.mark.parametrize("language", EDITIONS)
def test_the_chapters_decode_step_stands_in_the_rows_unit(built_site, language):
    page = _page(built_site, language, "prefill-decode")
    found = re.search(r'<span title="([^"]*0[.,]1665[^"]*s)">([^<]*)</span>', page)
    assert found, language
    shown = html.unescape(found.group(2)).replace(formatting.NBSP, " ")
    assert re.fullmatch(r"166[.,]5 ms", shown), shown
