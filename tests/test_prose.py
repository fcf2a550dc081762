"""No number in the pages' prose that the data does not back: every number a reader
sees is either rendered from site_data by a marker or listed, with the reason it is not
a measurement, in tests/prose/numbers.txt (definitions, parameters, names, citations)."""

from __future__ import annotations

import re

from sitekit.language.typed_numbers import prose
from sitekit.language.typed_numbers import typed as typed_numbers
from tests.conftest import REPO, english_pages

DOCS = REPO / "docs"
LISTED = REPO / "tests" / "prose" / "numbers.txt"


def _listed() -> dict[tuple[str, str], str]:
    out = {}
    for raw in LISTED.read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            page, number, why = re.split(r"\s{2,}", raw.strip(), maxsplit=2)
            out[(page, number)] = why
    return out


def test_every_typed_number_is_backed_or_explained():
    listed = _listed()
    seen, unexplained = set(), []
    for page in english_pages():
        for number, context in typed_numbers(prose(page.read_text(encoding="utf-8"))):
            seen.add((page.name, number))
            if (page.name, number) not in listed:
                unexplained.append(f"{page.name}: {number!r} in “{context}”")
    assert not unexplained, (
        "numbers typed in prose: bind them to site_data with a marker, or list them with the reason "
        "in tests/prose/numbers.txt:\n" + "\n".join(unexplained)
    )
    stale = sorted(set(listed) - seen)
    assert not stale, f"tests/prose/numbers.txt lists numbers no page types any more: {stale}"


def test_the_checker_finds_a_typed_measurement():
    text = prose(
        "The cache was {{ value('kv_cache.speedup') }} faster, about 3.07 times, "
        "for int8 and 4-bit codes (16/128 = 0.125), `x = 12`, and 1,874 tokens in all."
    )
    assert [n for n, _ in typed_numbers(text)] == ["3.07", "1,874"]
