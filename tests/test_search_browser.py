"""Each edition's search, in a real browser with the theme's own search worker: a word
finds its pages in the edition's language, whatever its inflection or accents, and a
page whose title holds the word comes first (hooks/search_editions.py, .js)."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.test_site_browser import CHROMIUM, browsing

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium`"),
    pytest.mark.browser,
    pytest.mark.build,
]

# edition: (query, the page its first result must be), three each: a word as its title
# writes it, the same word inflected or without its accents, and a term of the chapter.
QUERIES = {
    "en": [
        ("quantization", "weight-quantization/"),
        ("caches", "cache-size/"),
        ("speculative", "speculative-decoding/"),
    ],
    "gl": [("caché", "cache-size/"), ("cache", "cache-size/"), ("destilacion", "distillation/")],
    "es": [("caché", "cache-size/"), ("cache", "cache-size/"), ("cuantizacion", "weight-quantization/")],
    "it": [
        ("quantizzare", "weight-quantization/"),
        ("distillation", "distillation/"),
        ("outlier", "activation-outliers/"),
    ],
    "cs": [
        ("kvantizaci", "weight-quantization/"),
        ("outlieru", "activation-outliers/"),
        ("distilaci", "distillation/"),
    ],
}


def first_results(browser, origin: str, lang: str, query: str) -> list[str]:
    """The addresses of the search's results, in order, relative to the edition's root."""
    page, problems = browser.new_page(), []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(f"console {m.type}: {m.text}"))
    page.on("requestfailed", lambda r: problems.append(f"failed ({r.failure}): {r.url}"))
    page.on("pageerror", lambda e: problems.append(f"error: {e}"))
    root = f"{origin}/{lang + '/' if lang != 'en' else ''}"
    page.goto(root)
    page.fill("input.md-search__input", query)
    # The theme reads the query on a keyup, or when its worker is ready: a fill alone sends
    # no keyup, so a query filled after the worker got ready was never searched.
    page.press("input.md-search__input", "End")
    try:
        page.wait_for_selector(".md-search-result__item", timeout=90000)  # the worker indexes first
    except PlaywrightTimeout:
        meta = page.inner_text(".md-search-result__meta")
        raise AssertionError(f"{lang}: {query!r}: no result in 90 s; the search said {meta!r}; {problems}") from None
    links = page.eval_on_selector_all(
        ".md-search-result__item > .md-search-result__link", "els => els.map(e => e.getAttribute('href'))"
    )
    page.close()
    # a page's sections follow it as links of its own item: the pages, each once, in order
    return list(dict.fromkeys(link.split("?")[0].split("#")[0].removeprefix(root) for link in links))


@pytest.mark.parametrize("lang", list(QUERIES))
def test_each_edition_finds_its_pages_in_its_own_words(built_site, lang):
    with browsing(built_site) as (origin, browser):
        for query, expected in QUERIES[lang]:
            found = first_results(browser, origin, lang, query)
            assert found, f"{lang}: {query!r} found nothing"
            # first, or second after a page whose title holds the word too (the cache-size page
            # and the one on reusing the prompt's cache both answer "caché")
            assert expected in found[:2], f"{lang}: {query!r} first found {found[:4]}, not {expected}"
            assert all("/" not in f.split("#")[0].rstrip("/") for f in found), f"another edition's page: {found}"
