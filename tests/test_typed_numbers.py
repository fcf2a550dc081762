"""No number typed in a catalog, and an edition types its numbers as its language
writes them: the checks on cases worked by hand, and the build failing on each."""

from __future__ import annotations

import pytest
from mkdocs.exceptions import PluginError

from sitekit.language import formatting, i18n, typed_numbers
from tests.conftest import DOCS
from tests.helpers import render_page


@pytest.fixture
def locale():
    def use(language: str) -> None:
        formatting.set_locale(language)
        i18n.set_language(language)

    yield use
    use(i18n.DEFAULT)


def test_a_message_s_english_numbers_are_lifted_and_written_back_in_each_language(locale):
    template, numbers = typed_numbers.lift("the formula at α = 0.3, γ = 8, c = 0.10, for 65,536 tokens")
    assert template == "the formula at α = {number1}, γ = 8, c = {number2}, for {number3} tokens"
    assert numbers == ["0.3", "0.10", "65,536"]
    written = {
        "en": "0.3 0.10 65,536",
        "es": "0,3 0,10 65.536",
        "gl": "0,3 0,10 65\u00a0536",
        "cs": "0,3 0,10 65\u00a0536",
    }
    for language, expected in written.items():
        locale(language)
        assert typed_numbers.write_back("{number1} {number2} {number3}", numbers) == expected
    locale("es")  # Spanish leaves a four-digit number whole
    assert typed_numbers.write_back("con {number1}", ["4,096"]) == "con 4096"


def test_names_versions_and_integers_stay_in_the_message():
    for message in ("Qwen2.5-0.5B", "§1.1", "torch 2.13.0", "int4 group-128", "95 % interval", "2^0.5", "γ = 8"):
        assert typed_numbers.lift(message) == (message, [])


def test_a_translation_may_repeat_the_message_s_numbers_but_type_no_other():
    assert typed_numbers.added_in_translation("at {number1}", "con 4.096") == ["4.096"]
    assert typed_numbers.added_in_translation("at 4,096", "con 4.096") == ["4.096"]
    assert typed_numbers.added_in_translation("battery, penalty {number1}", "batería, penalización 1,2") == ["1,2"]
    assert typed_numbers.added_in_translation("int4 group-128", "int4 por grupos de 128") == []
    assert typed_numbers.added_in_translation("p(1st)", "p(1.º)") == []
    assert typed_numbers.added_in_translation("{n} threads", "{n} fíos") == []


def test_a_number_is_checked_against_the_way_its_language_writes_it(locale):
    cases = {
        "es": {"4096": True, "4.096": False, "65.536": True, "0,3": True, "0.3": False, "65 536": False},
        "gl": {"4\u00a0096": True, "4.096": False, "65\u00a0536": True, "0,3": True},
        "cs": {"4\u00a0096": True, "4096": False, "0,3": True, "0.3": False},
        "it": {"4.096": True, "4096": False, "0,3": True},
    }
    for language, numbers in cases.items():
        locale(language)
        for number, right in numbers.items():
            assert typed_numbers.written_as_the_language_does(number) is right, (language, number)


def test_an_edition_s_claim_sentence_and_prose_are_both_read(locale):
    locale("es")
    markdown = (
        'Con 4.096 tokens la caché crece.\n\n{{ claim("memory_budget.x", "la caché con 4.096 tokens") }} '
        "{{ cell('memory_budget.budget', 'users', where={'context': 4096}) }} y 0,3 y 8192."
    )
    found = [number for number, _ in typed_numbers.miswritten(markdown)]
    assert found == ["4.096", "4.096"]  # the prose's and the sentence's; not the marker's 4096


def test_an_edition_page_that_writes_a_number_as_english_does_fails_the_build():
    page = "memory-budget.es.md"
    text = (DOCS / page).read_text(encoding="utf-8")
    assert "con 4096 tokens" in text
    with pytest.raises(PluginError, match=r"memory-budget\.es\.md: '4\.096' is not how es writes a number"):
        render_page(page, text.replace("con 4096 tokens", "con 4.096 tokens", 1), language="es")


def test_a_catalog_entry_that_types_a_number_is_not_used_and_is_reported(tmp_path, monkeypatch, locale):
    (tmp_path / "es.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "at {number1}"\nmsgstr "con 4.096"\n\nmsgid "speed"\nmsgstr "velocidad"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    monkeypatch.setattr(i18n, "_catalogs", {})
    monkeypatch.setattr(i18n, "typed", {"es": set()})
    locale("es")
    assert i18n._("speed") == "velocidad"
    assert i18n._("at 4,096") == "at 4096"  # shown untranslated (and reported missing), never "con 4.096"
    assert i18n.typed["es"] == {"'at {number1}' -> 'con 4.096' types 4.096"}
