"""Sentences a run records in English (sitedata/wording.py), read back and written in each
edition's language with the same fields, numbers as the edition writes them."""

from __future__ import annotations

import re

import pytest
import torch

from measure.lab import memory
from sitedata import wording
from sitekit.language import formatting, i18n, recorded
from tests.conftest import LANGUAGES


def _sample(template: str) -> dict[str, str]:
    """Distinct field values, each unlike any template's own words; a number where the
    template takes one."""
    names = re.findall(r"\{([a-z_]+)\}", template)
    return {name: f"{i},00{i}" if name in wording.NUMBERS else f"Q{i}x" for i, name in enumerate(names)}


@pytest.mark.parametrize("template", wording.TEMPLATES)
def test_every_template_reads_back_as_itself_with_its_fields(template):
    fields = _sample(template)
    assert wording.parse(template.format(**fields)) == (template, fields)


def test_a_sentence_no_template_wrote_is_not_read_as_one():
    assert wording.parse("2,048 tokens, and then some") is None
    assert wording.parse("") is None
    # a label with a parenthesis is no penalty with its source: the field takes a number
    assert wording.parse("GQA (actual)") is None
    assert wording.parse("1.1 (from the model's generation config)") == (
        wording.PROTOCOL_PENALTY,
        {"penalty": "1.1", "source": "from the model's generation config"},
    )


def test_the_run_records_its_memory_method_with_a_template():
    assert wording.parse(memory.method(torch.device("cpu"))) == (wording.MEMORY_CPU, {})


@pytest.fixture
def edition():
    def switch(lang):
        i18n.set_language(lang)
        formatting.set_locale(lang)

    yield switch
    switch("en")


def test_a_recorded_sentence_in_spanish_keeps_its_fields_numbers_as_spanish_writes_them(edition):
    text = wording.PROTOCOL_TOKENS.format(scored="20,480", first="1", last="20,480", start="0")
    assert recorded.recorded_text(text, "data") == text  # English: as recorded
    edition("es")
    # Spanish groups thousands with a dot from five digits on (CLDR): 20,480 -> 20.480
    assert recorded.recorded_text(text, "data") == (
        "20.480 puntuados: tokens del libro del 1 al 20.480, cada uno dados los anteriores desde el token 0"
    )
    # a field the catalog knows as a word is translated too
    penalty = wording.PROTOCOL_PENALTY.format(penalty="1", source="none in the model's generation config")
    assert recorded.recorded_text(penalty, "data") == "1 (ninguna en la configuración de generación del modelo)"
    # and a sentence no template wrote is one message of its own, shown as it is when untranslated
    assert recorded.recorded_text("an unknown sentence", "data") == "an unknown sentence"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_template_has_each_editions_translation(lang):
    found = i18n.translations(lang)
    assert not [t for t in wording.TEMPLATES if not found.get((None, t))], lang
