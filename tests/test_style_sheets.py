"""Each edition is held to its style sheet (style/<lang>.md): the chapter's terms as the
chapter's own editions write them, one register, and the English words it replaces with
its own, in every page, catalog and notebook (tests/edition_words.py reads them)."""

from __future__ import annotations

import re

import pytest
from babel.messages.pofile import read_po

from tests import edition_words
from tests.conftest import LANGUAGES, REPO
from tests.style_sheets import STYLE, Rule, StyleSheet, _tables, style_sheet, whole_word

SECTIONS = ("Terms", "Register", "English kept", "Anglicisms replaced")


def _words(lang: str) -> list[tuple[str, int, str]]:
    return list(edition_words.everything(lang))


def refused(sheet: StyleSheet, lines: list[tuple[str, int, str]]) -> list[str]:
    """Every line that writes a form the style sheet refuses: where, what, and what instead."""
    found = []
    for where, n, text in lines:
        for rule in sheet.never:
            m = rule.pattern.search(text)
            if m:
                found.append(f"{where}:{n}: {m.group(0)!r} ({rule.section}: {rule.instead}) in {text.strip()[:100]!r}")
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_edition_has_a_style_sheet_with_its_four_tables(lang):
    tables = _tables((STYLE / f"{lang}.md").read_text(encoding="utf-8"))
    for section in SECTIONS:
        assert tables.get(section), f"style/{lang}.md has no table under '## {section}'"
    sheet = style_sheet(lang)
    assert sheet.terms and sheet.never and sheet.kept


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_edition_writes_what_its_style_sheet_refuses(lang):
    problems = refused(style_sheet(lang), _words(lang))
    assert not problems, f"{lang}: {len(problems)} lines against style/{lang}.md:\n" + "\n".join(problems[:60])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_term_of_the_chapter_is_written_as_its_editions_write_it(lang):
    text = "\n".join(line for _, _, line in _words(lang))
    missing = [
        f"{english} ({pattern.pattern})" for english, pattern in style_sheet(lang).terms if not pattern.search(text)
    ]
    assert not missing, f"{lang}: terms of style/{lang}.md its pages never write: {missing}"


def test_the_net_finds_a_refused_form_as_a_whole_word_in_any_case_and_says_where():
    sheet = StyleSheet("gl")
    sheet.never = [Rule("Terms", "KV cache", whole_word("caché KV"), "KV cache")]
    lines = [("docs/a.gl.md", 3, "A Caché KV ocupa"), ("docs/a.gl.md", 4, "a KV cache"), ("x.po", 9, "cachés KVs")]
    assert refused(sheet, lines) == ["docs/a.gl.md:3: 'Caché KV' (Terms: KV cache) in 'A Caché KV ocupa'"]


def test_a_page_is_read_as_its_reader_meets_it():
    page = (
        "Text `code caché KV` and [a link](caché-KV.md)\n"
        "{{ claim('kv_cache.x', 'a claim with caché KV') }} {{ table('kv_cache.memory', columns=['sweep']) }}\n"
        "<!-- if kv_cache.sweep -->\n"
        "```python\nsweep = 1\n```\n"
        "$\\text{scores} \\cdot V$ and {#anchor}\n"
    )
    lines = edition_words.prose(page).split("\n")
    assert lines[0].split() == ["Text", "and", "a", "link"]
    assert "a claim with caché KV" in lines[1] and "sweep" not in lines[1]
    assert "sweep" not in " ".join(lines[2:6])
    assert lines[6].split() == ["scores", "and"]
    assert len(lines) == len(page.split("\n"))  # line for line: a problem is reported where it is


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_catalog_puts_a_count_after_a_colon_to_escape_agreeing_with_it(lang):
    """ "(vláken: 2)" for "(2 threads)": a count is written with its unit, which agrees with
    it (formatting.unit_suffix), never moved behind a label."""
    with (REPO / "hooks" / "locales" / f"{lang}.po").open("rb") as f:
        catalog = read_po(f, locale=lang)
    problems = []
    for m in catalog:
        for name in re.findall(r"\([^()]*[^\W\d_]: \{(\w+)\}\)", str(m.string or "")):
            if not re.search(rf"[^\W\d_]: \{{{name}\}}\)", str(m.id)):
                problems.append(f"{m.id!r} -> {m.string!r}")
    assert not problems, f"{lang}: " + "; ".join(problems)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_comment_and_docstring_of_an_editions_notebooks_is_in_its_words(lang):
    """An edition's notebook keeps the English code and writes its comments and docstrings
    in its own words (sitedata.hashes.literal_pairs lets it): none is the English one."""
    for path in sorted((REPO / "docs").glob(f"*.{lang}.ipynb")):
        ours = edition_words.notebook_comments(path)
        english = edition_words.notebook_comments(path.with_name(path.name.split(".")[0] + ".ipynb"))
        assert ours and not set(ours) & set(english), f"{path.name}: in English: {sorted(set(ours) & set(english))}"
