"""Two template artefacts a sentence never prints: a range whose two ends are written alike
("between 2.38× and 2.38×"), and a small count written as a digit where prose writes a
word ("until 2 growths"). The ``between()`` marker writes a range, and ``style='words'``
a count, in each edition's words."""

from __future__ import annotations

import re

import pytest

from sitekit.language import formatting
from sitekit.rendering.markers import PageContext, render_markers
from sitekit.rendering.pagedata import SiteData
from tests.conftest import write_data
from tests.helpers import edition


@pytest.fixture
def ctx(tmp_path):
    values = {"low": 2.381, "high": 2.384, "wide_low": 2.31, "wide_high": 2.45, "confirmations": 2, "many": 14}
    units = {"low": "x", "high": "x", "wide_low": "x", "wide_high": "x"}
    write_data(tmp_path / "data", "exp", {"t": [{"x": 1}]}, values=values, units=units)
    return PageContext(data=SiteData(tmp_path / "data"), page="p.md", url_prefix="")


def test_a_range_reads_between_its_ends(ctx):
    assert render_markers("{{ between('exp.wide_low', 'exp.wide_high') }}", ctx) == "between 2.31× and 2.45×"


def test_a_range_whose_ends_are_written_alike_is_one_value(ctx):
    assert render_markers("stays {{ between('exp.low', 'exp.high') }}", ctx) == "stays 2.38× at both ends"


@pytest.mark.parametrize(
    "lang, text",
    [("gl", "2,38× nos dous extremos"), ("es", "2,38× en ambos extremos"), ("cs", "2,38× na obou koncích")],
)
def test_each_edition_writes_a_range_in_its_words(ctx, lang, text):
    with edition(lang):
        assert render_markers("{{ between('exp.low', 'exp.high') }}", ctx) == text
        assert "2,31×" in render_markers("{{ between('exp.wide_low', 'exp.wide_high') }}", ctx)


@pytest.mark.parametrize("lang, word", [("en", "two"), ("gl", "dous"), ("es", "dos"), ("it", "due"), ("cs", "dva")])
def test_a_small_count_is_written_as_a_word(ctx, lang, word):
    with edition(lang):
        assert render_markers("{{ value('exp.confirmations', style='words') }}", ctx) == word


def test_a_count_past_twelve_or_not_whole_stays_in_digits():
    assert formatting.in_words(14) == "14"
    assert formatting.in_words(2.5) == "2.5"
    assert formatting.in_words(0) == "zero"


# A range's words in each edition: "between X and Y", "from X to Y".
RANGE_WORDS = {
    "gl": [("entre", "e"), ("de", "a"), ("desde", "ata")],
    "es": [("entre", "y"), ("de", "a"), ("desde", "hasta")],
    "it": [("tra", "e"), ("fra", "e"), ("da", "a")],
    "cs": [("mezi", "a"), ("od", "do")],
}


def equal_ranges(text: str, lang: str) -> list[str]:
    """Each range of ``text`` whose two ends are written alike ("entre 2,38× e 2,38×")."""
    number = r"\d[\d\u00a0 .,]*\d(?:[×%]|\u00a0%)?|\d(?:[×%]|\u00a0%)?"
    found = []
    for start, end in RANGE_WORDS[lang]:
        pattern = rf"(?<!\w){start} (?P<x>{number}) {end} (?P=x)(?!\d|,\d)"
        found += [m.group(0) for m in re.finditer(pattern, text)]
    return found


def test_the_check_finds_a_range_with_equal_ends():
    assert equal_ranges("queda entre 2,38× e 2,38×, e a", "gl") == ["entre 2,38× e 2,38×"]
    assert equal_ranges("od 5 do 50", "cs") == [] and equal_ranges("10 z 10", "cs") == []


@pytest.mark.build
@pytest.mark.parametrize("lang", ["gl", "es", "it", "cs"])
def test_no_page_prints_a_range_whose_ends_are_equal(built_site, lang):
    from tests.test_english_words import PAGES, visible

    found = []
    for page in PAGES:
        html = (built_site / lang / ("" if page == "index" else page) / "index.html").read_text(encoding="utf-8")
        found += [f"{page}: {r}" for t in visible(html) for r in equal_ranges(" ".join(t.split()), lang)]
    assert not found, found
