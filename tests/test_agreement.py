"""A unit after a number agrees with it, as each language's CLDR plural rules say, wherever
the built site writes one: in prose, tables, tooltips and figures, whether the formatter
wrote the unit (formatting.unit_suffix) or a page typed it after a value.

The forms are each catalog's own (the unit's entries in the context "after a number: <the
CLDR category>"): Czech "1 token", "3 tokeny", "46 080 tokenů", and a decimal the genitive
singular, "18,5 tokenu", "2,85 požadavku/s". A word that is one of a unit's forms, after a
number whose category asks for another of its forms, is a disagreement. Czech numbers
after a preposition are passed over: the preposition governs their case ("po 2 krocích")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel import Locale

from sitekit.language import i18n
from sitekit.language.formatting import plural_category
from tests.conftest import LANGUAGES
from tests.test_english_words import PAGES, visible

# Czech prepositions, which govern the case of a counted noun after them.
CZECH_PREPOSITIONS = frozenset(
    "s se z ze od do po při na v ve k ke o za pro před nad pod mezi u bez kolem podle během až oproti proti".split()
)
# A number after one of these is a term of an expression, not the count the unit agrees with.
OPERATORS = frozenset("+−-×·/÷=")
NUMBER = re.compile(
    r"(?<![\w.,])(?P<number>\d{1,3}(?:[ \u00a0.]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)(?![\w.,]\d)"  # 46 080, 2,85, 12.345
    r"[ \u00a0](?P<word>[^\W\d_]+(?:-[^\W\d_]+)?(?:/s)?)"  # tokenů, slot-kroků, požadavku/s
)


def unit_forms(lang: str) -> dict[str, dict[str, str]]:
    """unit -> {CLDR category -> the form the catalog writes after such a number}."""
    found = i18n.translations(lang)
    forms = {}
    for unit in i18n.ENGLISH_ONE:
        general = found.get((i18n.COUNT, unit), unit)
        forms[unit] = {
            tag: found.get((f"{i18n.COUNT}: {tag}", unit), general) for tag in Locale.parse(lang).plural_form.tags
        }
        forms[unit]["other"] = general
    return forms


def disagreements(text: str, lang: str, forms: dict[str, dict[str, str]]) -> list[str]:
    """Each "<number> <unit form>" of ``text`` whose form is not the one its number asks for."""
    by_word: dict[str, set[str]] = {}
    for unit, by_category in forms.items():
        if len(set(by_category.values())) > 1:  # a unit whose forms differ: the rest always agree
            for word in by_category.values():
                by_word.setdefault(word.lower(), set()).add(unit)
    found = []
    for m in NUMBER.finditer(text):
        word = m.group("word")
        before = text[: m.start()].split()
        if text[: m.start()].rstrip()[-1:] in OPERATORS:  # "γ + 1 tokens", "16/128 bits": the expression's count
            continue
        if lang == "cs" and any(w.lower() in CZECH_PREPOSITIONS for w in before[-2:]):  # "s asi 5 bity"
            continue
        units = by_word.get(word.lower())
        if not units:
            continue
        category = plural_category(m.group("number"), lang)
        if all(forms[u].get(category, forms[u]["other"]).lower() != word.lower() for u in units):
            wanted = " or ".join(sorted({forms[u].get(category, forms[u]["other"]) for u in units}))
            found.append(f"{m.group(0)!r} ({category}: {wanted})")
    return found


def _figures(site: Path, lang: str) -> list[tuple[str, str]]:
    return [
        (f"{lang}/figures/{p.relative_to(site / lang / 'figures')}", t)
        for p in sorted((site / lang / "figures").rglob("*.svg"))
        for t in re.findall(r"<text\b[^>]*>([^<>]+)</text>", p.read_text(encoding="utf-8"))
    ]


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_unit_after_a_number_agrees_with_it(built_site, lang):
    forms = unit_forms(lang)
    texts = []
    for page in PAGES:
        path = built_site / lang / ("" if page == "index" else page) / "index.html"
        html = path.read_text(encoding="utf-8")
        texts += [(page, t) for t in visible(html)]
        texts += [(page, t) for t in re.findall(r'title="([^"]+)"', html)]  # what a reader hovers
    texts += _figures(built_site, lang)
    problems = [
        f"{where}: {d}"
        for where, text in texts
        for line in text.splitlines()  # a notebook's printed lines are lines of their own
        for d in disagreements(" ".join(line.split()), lang, forms)
    ]
    assert not problems, f"{lang}: {len(problems)} units disagree with their number:\n" + "\n".join(problems[:40])


CZECH = {
    "tokens": {"one": "token", "few": "tokeny", "many": "tokenu", "other": "tokenů"},
    "requests/s": {"one": "požadavek/s", "few": "požadavky/s", "many": "požadavku/s", "other": "požadavků/s"},
}


@pytest.mark.parametrize(
    "text, found",
    [
        ("1 token, 3 tokeny, 46\u00a0080 tokenů, 18,5 tokenu", []),
        ("95,2 tokenů/s", []),  # not a unit of the table: tokens/s is left out here
        ("2,85 požadavků/s", ["'2,85 požadavků/s' (many: požadavku/s)"]),
        ("5 tokeny", ["'5 tokeny' (other: tokenů)"]),
        ("po 2 tokenech a s 5 tokeny", []),  # a preposition governs the case
        ("s asi 5 bity", []),
        ("γ + 1 tokenů, 4 + 16/128 bitu", []),  # terms of an expression
        ("verze 2.13.0 tokenů", []),  # a version, not a number of tokens
    ],
)
def test_the_check_finds_a_czech_unit_in_the_wrong_form(text, found):
    assert disagreements(text, "cs", CZECH) == found


def test_every_czech_decimal_takes_the_genitive_singular_not_the_plural():
    """CLDR's "many" in Czech is a decimal: "2,5 tokenu", never the genitive plural of
    "5 tokenů" (a symbol, GiB or ms, is the same after every number)."""
    forms = unit_forms("cs")
    plural = {unit: f["many"] for unit, f in forms.items() if f["one"] != f["other"] and f["many"] == f["other"]}
    assert not plural, plural
