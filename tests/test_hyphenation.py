"""A table header's long words break at their language's hyphenation points, and the
search index reads them whole."""

from __future__ import annotations

from hooks.search_editions import split_index
from sitekit.language.hyphenation import SOFT_HYPHEN, hyphenated, unhyphenated


def test_a_long_word_breaks_where_its_language_breaks_it():
    assert (
        hyphenated("naměřené / předpovězené", "cs")
        == f"naměřené / před{SOFT_HYPHEN}po{SOFT_HYPHEN}vě{SOFT_HYPHEN}ze{SOFT_HYPHEN}né"
    )
    assert hyphenated("decode step (ms)", "en") == "decode step (ms)"  # no word of ten letters
    assert hyphenated("predicción", "xx") == "predicción"  # a language with no dictionary


def test_the_search_index_holds_each_word_whole():
    word = hyphenated("předpovězené", "cs")
    assert word != "předpovězené" and unhyphenated(word) == "předpovězené"
    index = {"config": {"lang": ["en"]}, "docs": [{"location": "cs/x/", "title": "t", "text": f"<th>{word}</th>"}]}
    (doc,) = split_index(index, "en", ["cs"])["cs"]["docs"]
    assert doc["text"] == "<th>předpovězené</th>"
