"""The catalogs of generated texts (hooks/locales/<language>.po): every message translated,
with the same placeholders, line breaks and leading or trailing spaces as its English
text, so that a translation can neither drop a number nor break a figure's layout."""

from __future__ import annotations

import re
import string

import pytest
from babel.messages.pofile import read_po

from sitekit.language import i18n
from tests.conftest import LANGUAGES

FIELDS = string.Formatter()


def placeholders(text: str) -> list[str]:
    return sorted(name for _, name, _, _ in FIELDS.parse(text) if name is not None)


def problems(message_id: str, translation: str) -> list[str]:
    found = []
    if not translation.strip():
        found.append("untranslated")
        return found
    if placeholders(message_id) != placeholders(translation):
        found.append(f"placeholders {placeholders(message_id)} became {placeholders(translation)}")
    if message_id.count("\n") != translation.count("\n"):
        found.append("a different number of line breaks")
    for edge, pattern in (("leading", r"^\s"), ("trailing", r"\s$")):
        if bool(re.search(pattern, message_id)) != bool(re.search(pattern, translation)):
            found.append(f"{edge} space differs")
    return found


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_generated_text_is_translated_faithfully(language):
    path = i18n.catalog_path(language)
    assert path.exists(), f"{path} is missing: run make messages, then translate"
    with path.open("rb") as f:
        catalog = read_po(f, locale=language)
    bad = [
        f"{m.id!r}: {', '.join(p)}"
        for m in catalog
        if m.id and (p := problems(m.id, m.string) + (["marked fuzzy"] if m.fuzzy else []))
    ]
    assert not bad, f"{path.name}: {len(bad)} messages need work:\n" + "\n".join(bad[:40])


def test_the_checks_catch_a_lost_placeholder_and_a_lost_line_break():
    assert problems("{n} threads", "fíos") == ["placeholders ['n'] became []"]
    assert problems("a\nb", "a b") == ["a different number of line breaks"]
    assert problems(" and ", "e") == ["leading space differs", "trailing space differs"]
    assert problems("yes", "") == ["untranslated"]
    assert problems("{cpu} ({threads} threads)", "{cpu} ({threads} fíos)") == []
