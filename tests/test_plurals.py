"""A unit after a number agrees with it, in each language's CLDR plural forms (Babel):
"1 token" in English, "7,44 bitu" (a decimal: genitive singular) and "3 tokeny" in Czech."""

import pytest

from sitekit.language import i18n
from sitekit.language.formatting import NBSP, plural_category, unit_suffix
from tests.helpers import edition


@pytest.mark.parametrize(
    "lang, shown, category",
    [
        ("en", "1", "one"),
        ("en", "1.0", "other"),  # the digits shown decide: "1.0 tokens"
        ("en", "0", "other"),
        ("en", "46,080", "other"),
        ("cs", "1", "one"),
        ("cs", "3", "few"),
        ("cs", "7,44", "many"),
        ("cs", "18,5", "many"),
        ("cs", f"46{NBSP}080", "other"),
        ("cs", "5", "other"),
        ("es", "1", "one"),
        ("es", "2", "other"),
        ("en", "2.07 × 10⁻¹¹", "other"),  # not a plain number: the general form
        ("en", "-1", "one"),
    ],
)
def test_the_category_of_a_number_as_shown(lang, shown, category):
    assert plural_category(shown, lang) == category


@pytest.mark.parametrize(
    "lang, shown, unit, text",
    [
        ("en", "1", "tokens", "token"),
        ("en", "2", "tokens", "tokens"),
        ("en", "1", "requests", "request"),
        ("en", "1", "ms", "ms"),
        ("gl", "1", "tokens", "token"),
        ("es", "1", "requests", "petición"),
        ("es", "3", "requests", "peticiones"),
        ("it", "1", "layers", "strato"),
        ("cs", "1", "tokens", "token"),
        ("cs", "3", "tokens", "tokeny"),
        ("cs", "18,5", "tokens", "tokenu"),
        ("cs", "7,44", "bits", "bitu"),
        ("cs", "16,6", "tokens/s", "tokenu/s"),  # a decimal: the genitive singular
        ("cs", "2,85", "requests/s", "požadavku/s"),
        ("cs", "2", "threads", "vlákna"),
        ("cs", "5", "threads", "vláken"),
        ("cs", f"46{NBSP}080", "tokens", "tokenů"),
    ],
)
def test_the_unit_agrees_with_its_number(lang, shown, unit, text):
    with edition(lang):
        assert unit_suffix(unit, shown) == NBSP + text


def test_every_unit_counted_has_its_english_singular_and_every_form_in_each_catalog():
    counted = {m for lang in ("gl", "es", "it", "cs") for (ctx, m) in i18n.translations(lang) if ctx == i18n.COUNT}
    assert set(i18n.ENGLISH_ONE) == counted
    for lang in ("gl", "es", "it", "cs"):
        from babel import Locale

        found = i18n.translations(lang)
        for tag in Locale.parse(lang).plural_form.tags:
            assert {m for m in counted if (f"{i18n.COUNT}: {tag}", m) in found} == counted, (lang, tag)
