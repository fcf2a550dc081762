"""The five editions as a reader meets them, in the built HTML: every page in every
language with the right ``lang``, the language selector leading to the same page,
numbers written as each locale writes them, notebooks rendered as pages whose outputs
are the data's, and nothing fetched from a third party."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from sitekit.language import i18n
from sitekit.rendering import escape
from tests.conftest import LANGUAGES, REPO, english_pages

EDITIONS = ("en", *LANGUAGES)
NOTEBOOKS = sorted(p.stem for p in (REPO / "docs").glob("*.ipynb") if "." not in p.stem)
PAGES = [p.stem for p in english_pages()] + NOTEBOOKS


def page_dir(site, lang: str, page: str):
    base = site if lang == "en" else site / lang
    return base if page == "index" else base / page


def read(site, lang: str, page: str) -> str:
    path = page_dir(site, lang, page) / "index.html"
    assert path.exists(), f"{path.relative_to(site)} was not built"
    return path.read_text(encoding="utf-8")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.alternates: dict[str, str] = {}
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("hreflang"):
            self.alternates[a["hreflang"]] = a["href"]
        url = a.get("src") if tag in ("script", "img") else a.get("href") if tag == "link" else None
        if url and re.match(r"(https?:)?//", url):
            self.external.append(url)


def test_notebook_pages_exist_in_every_edition():
    for name in NOTEBOOKS:
        for lang in LANGUAGES:
            assert (REPO / "docs" / f"{name}.{lang}.ipynb").exists(), f"docs/{name}.{lang}.ipynb is missing"


@pytest.mark.build
@pytest.mark.parametrize("lang", EDITIONS)
def test_every_page_exists_with_its_language_and_a_selector_to_the_same_page(built_site, lang):
    for page in PAGES:
        html = read(built_site, lang, page)
        assert re.search(rf'<html lang="{lang}"', html), f"{lang}/{page}: wrong lang attribute"
        links = _Links()
        links.feed(html)
        assert set(links.alternates) == set(EDITIONS), f"{lang}/{page}: selector offers {sorted(links.alternates)}"
        here = page_dir(built_site, lang, page)
        for other, href in links.alternates.items():
            assert not re.match(r"(https?:)?/", href), f"{lang}/{page}: the {other} link {href} is not relative"
            target = (here / href).resolve()
            assert target == page_dir(built_site, other, page).resolve(), (
                f"{lang}/{page}: the {other} link leads to {target}, not the same page"
            )


@pytest.mark.build
@pytest.mark.parametrize("lang", EDITIONS)
def test_nothing_is_fetched_from_a_third_party(built_site, lang):
    for page in PAGES:
        links = _Links()
        links.feed(read(built_site, lang, page))
        assert not links.external, f"{lang}/{page} loads {links.external}"


THEME_ENGLISH = ("Switch to dark mode", "Switch to light mode", "Made with", "Permanent link")


@pytest.mark.build
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_themes_own_words_are_in_the_editions_language(built_site, lang):
    for page in PAGES:
        html = read(built_site, lang, page)
        assert not [w for w in THEME_ENGLISH if w in html], f"{lang}/{page}"
    # and the English edition keeps them, so the test reads the words the theme writes
    assert all(w in read(built_site, "en", "kv-cache") for w in THEME_ENGLISH)


# How each locale writes a grouped integer and a decimal, worked by hand, not by Babel:
# English groups with a comma, Spanish and Italian with a dot, Galician and Czech with a
# no-break space; every edition but English writes a decimal comma.
GROUP = {"en": ",", "es": ".", "it": ".", "gl": "\u00a0", "cs": "\u00a0"}
DECIMAL = {"en": ".", "es": ",", "it": ",", "gl": ",", "cs": ","}


def _meta(experiment: str) -> dict:
    return json.loads((REPO / "site_data" / experiment / "meta.json").read_text(encoding="utf-8"))


@pytest.mark.build
@pytest.mark.parametrize("lang", EDITIONS)
def test_a_known_value_is_written_as_the_locale_writes_it(built_site, lang):
    html = read(built_site, lang, "kv-cache")
    params = _meta("kv_cache")["model"]["parameters"]  # in every table's provenance
    assert f"{params:,}".replace(",", GROUP[lang]) in html
    speedup = _meta("kv_cache")["values"]["speedup"]["value"]  # a ratio: 2 decimals under 10, 1 under 100
    decimals = 0 if speedup >= 100 else 1 if speedup >= 10 else 2
    assert f"{speedup:.{decimals}f}".replace(".", DECIMAL[lang]) + "×" in html


@pytest.mark.build
@pytest.mark.parametrize("lang", EDITIONS)
def test_notebooks_render_as_pages_whose_outputs_are_the_data(built_site, lang):
    for name in NOTEBOOKS:
        html = read(built_site, lang, name)
        assert html.count("jp-Cell ") >= 4 and "jp-OutputArea" in html, f"{lang}/{name}: no cells rendered"
        assert '"cell_type"' not in html, f"{lang}/{name}: the notebook's JSON, not a page"
        source = re.search(r'<a href="([^"]+\.ipynb)" download>', html)
        assert source and (page_dir(built_site, lang, name) / source.group(1)).exists(), "no download of the notebook"
    explore = read(built_site, lang, "explore-the-data")
    names = sorted(p.parent.name for p in (REPO / "site_data").glob("*/meta.json"))
    assert ", ".join(name.replace("_", "&#95;") for name in names) in explore  # printed, as escaped for the page
    for name in names:
        assert _meta(name)["code_hash"][:12] in explore  # the provenance table, as site_data holds it
    measured = read(built_site, lang, "measure-it-yourself")
    rows = (REPO / "site_data" / "cache_size" / "measured.csv").read_text(encoding="utf-8").splitlines()
    per_token = {line.split(",")[8] for line in rows[1:] if ",float32," in line and line.startswith("HuggingFaceTB")}
    assert len(per_token) == 1, "the cache-size run holds one float32 bytes-per-token for the embedded model"
    try:  # printed as "label: value": the label in the edition's words, the digits as the notebook printed them
        i18n.set_language(lang)
        shown = f"{i18n._('bytes per token, measured')}: {int(per_token.pop())}"
    finally:
        i18n.set_language(i18n.DEFAULT)
    assert escape.text(shown, None) in measured


@pytest.mark.build
@pytest.mark.parametrize("lang", EDITIONS)
def test_a_page_with_claim_marks_says_once_how_to_read_them(built_site, lang):
    """After the paragraph holding a page's first mark: the marks the page uses, in the
    edition's language, and a link to the same edition's account of claims."""
    legends = 0
    for page in PAGES:
        html = read(built_site, lang, page)
        first = html.find('<a class="claim ')
        found = re.findall(r'<p class="claim-legend">(.*?)<a href="([^"]+)">', html)
        if first < 0 or page == "methods":
            assert not found, f"{lang}/{page}"
            continue
        assert len(found) == 1, f"{lang}/{page}: {len(found)} legends"
        legends += 1
        text, href = found[0]
        assert html.index('class="claim-legend"') > first
        assert ("≈" in text) == ("claim-noise" in html) and "⚠" not in text, page
        target = (page_dir(built_site, lang, page) / href.split("#")[0] / "index.html").resolve()
        assert target == (page_dir(built_site, lang, "methods") / "index.html").resolve(), f"{lang}/{page}: {href}"
        if lang != "en":
            assert "checked against" not in text, f"{lang}/{page}: English legend"
    assert legends >= 8, lang
