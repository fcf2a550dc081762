"""The built site in a real browser (Debian's chromium through Playwright, as in
test_calculator_browser.py): no page asks for a file the site does not have (Material's
script once asked for a sitemap.xml beside every edition's page, four or five 404s per
page), and the calculator still works when a card's name in its presets is
``<!--<script>``, which would once have swallowed the rest of the page."""

from __future__ import annotations

import functools
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.builds import claims_of, english_build
from tests.conftest import LANGUAGES, REPO, edit_table
from tests.test_calculator_browser import CHROMIUM, FILL, LAUNCH_ARGS, READY, _Quiet, _Server

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium` (.ci/run does it)"
    ),
    pytest.mark.browser,
    pytest.mark.build,  # each drives a site built for it
]
PAGES = ("", "kv-cache/", "calculator/", "explore-the-data/", "references/")
HOSTILE_CARDS = ("<!--<script>", "</script><script>alert(1)</script>")


@contextmanager
def browsing(root: Path):
    """(origin, browser) for the site in ``root``, served on 127.0.0.1; nothing else is reached."""
    from playwright.sync_api import sync_playwright

    server = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=[*LAUNCH_ARGS, "--disable-dev-shm-usage"])
            yield f"http://127.0.0.1:{server.server_port}", browser
            browser.close()
    finally:
        server.shutdown()
        thread.join(5)


def _open(browser, origin: str, path: str, settle: str = "networkidle") -> tuple[object, list[str]]:
    """A page at ``path`` and everything that went wrong while it loaded: console errors
    and warnings, failed requests, responses of 400 and above, script errors, dialogs.
    ``settle``: the load state waited for ("networkidle" sees every late request; "load"
    is enough to measure a laid-out page, and spares half a second a page)."""
    page, problems = browser.new_page(), []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(origin) else route.abort())
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(f"console {m.type}: {m.text}"))
    page.on("requestfailed", lambda r: problems.append(f"failed ({r.failure}): {r.url}"))
    page.on("response", lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else 0)
    page.on("pageerror", lambda e: problems.append(f"error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(origin + "/" + path)
    page.wait_for_load_state(settle)
    return page, problems


def test_no_page_asks_for_a_missing_file(built_site):
    with browsing(built_site) as (origin, browser):
        for lang in ("", *(f"{lang}/" for lang in LANGUAGES)):
            for path in PAGES:
                page, problems = _open(browser, origin, lang + path)
                assert not problems, (lang + path, problems)
                page.close()


# The theme writes its "type to start searching" line once its worker has read the index
# and loaded every script the edition's search needs; a page left before that would cut
# the worker's requests short. A quiet network alone did not show it: on a busy machine
# the worker parsed the index for longer than the half second "networkidle" waits.
SEARCH_READY = """() => document.querySelector('.md-search-result__meta').textContent.trim()
    === JSON.parse(document.getElementById('__config').textContent).translations['search.result.placeholder']"""


def test_the_language_selector_leads_to_the_same_page(built_site):
    with browsing(built_site) as (origin, browser):
        page, problems = _open(browser, origin, "kv-cache/")
        page.wait_for_function(SEARCH_READY, timeout=90000)
        page.eval_on_selector("a[hreflang=gl]", "a => a.click()")
        page.wait_for_url(f"{origin}/gl/kv-cache/")
        page.wait_for_load_state("networkidle")
        page.wait_for_function(SEARCH_READY, timeout=90000)
        page.eval_on_selector("a[hreflang=en]", "a => a.click()")
        page.wait_for_url(f"{origin}/kv-cache/")
        page.wait_for_load_state("networkidle")
        page.wait_for_function(SEARCH_READY, timeout=90000)
        assert not problems, problems


def _calculator_site(dest: Path) -> Path:
    """The English calculator page (with a home page) built from site_data whose first
    two cards are named HOSTILE_CARDS."""
    data = dest / "site_data"
    shutil.copytree(REPO / "site_data", data)

    def rename(rows):
        for row, name in zip(rows[1:], HOSTILE_CARDS, strict=False):
            row[rows[0].index("card")] = name

    edit_table(data / "memory_budget", "card_presets", rename)
    docs = dest / "docs"
    docs.mkdir()
    for name in ("index.md", "calculator.md"):
        shutil.copy(REPO / "docs" / name, docs / name)
    for folder in ("javascripts", "stylesheets"):
        shutil.copytree(REPO / "docs" / folder, docs / folder)
    nav = [{"Home": "index.md"}, {"The calculator": "calculator.md"}]
    links = {"links": {"not_found": "info", "anchors": "info"}}  # to the pages left out
    extra = claims_of(dest, [docs / "index.md", docs / "calculator.md"])  # the two pages' claims alone
    proc = english_build(dest, nav=nav, validation=links, extra=extra)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return dest / "site"


def test_the_calculator_works_with_markup_in_a_cards_name(tmp_path):
    site = _calculator_site(tmp_path)
    html = (site / "calculator" / "index.html").read_text(encoding="utf-8")
    assert "<!--" not in html and "<script>alert" not in html
    with browsing(site) as (origin, browser):
        page, problems = _open(browser, origin, "calculator/")
        page.wait_for_selector(READY, timeout=10_000)
        options = page.eval_on_selector_all("[name=preset_card] option", "o => o.map(x => x.value)")
        assert options[: len(HOSTILE_CARDS)] == list(HOSTILE_CARDS)
        for card, memory in zip(HOSTILE_CARDS, ("8", "16"), strict=True):  # the first two cards' GiB
            page.eval_on_selector("form[data-calculator]", FILL, {"preset_card": card})
            assert page.input_value("[name=vram_gib]") == memory
            assert page.get_attribute("[data-status]", "data-state") in ("ok", "nofit", "overserved")
            assert page.get_attribute("[data-out=weights]", "data-value")
        # the rest of the page is there: the prose after the presets, and the table that names the cards
        assert page.is_visible("h2#what-it-computes")
        table = page.inner_text("[data-table='memory_budget.card_presets'] tbody")
        assert all(card in table for card in HOSTILE_CARDS)
        assert page.locator("footer").count() >= 1
        assert not problems, problems


SEARCHES = {
    "": "quantization",
    "gl/": "cuantización",
    "es/": "cuantización",
    "it/": "quantizzazione",
    "cs/": "kvantizace",
}


# What the theme's search does on load (its bundle): the page's __config base, resolved
# against the page's address, and the index beside it; each result's address is resolved
# against the same base.
_INDEX = """async () => {
    const config = JSON.parse(document.querySelector("#__config").textContent);
    const base = new URL(config.base, location.href);
    const index = await (await fetch(new URL("search/search_index.json", base))).json();
    return {lang: index.config.lang, docs: index.docs.map(d => [new URL(d.location, base).href, d.text])};
}"""


def test_each_edition_searches_its_own_pages_only(built_site):
    editions = [f"{lang}/" for lang in LANGUAGES if lang != "en"]
    with browsing(built_site) as (origin, browser):
        for edition, term in SEARCHES.items():
            page, problems = _open(browser, origin, edition + "kv-cache/")
            index = page.evaluate(_INDEX)
            hrefs = [href for href, _ in index["docs"]]
            assert hrefs and all(h.startswith(f"{origin}/{edition}") for h in hrefs), (edition, hrefs[:3])
            if not edition:  # the default edition is at the root, beside the others' folders
                assert not any(h[len(origin) + 1 :].startswith(tuple(editions)) for h in hrefs)
            # the edition's word for quantization is in its own index
            assert any(term in text.lower() for _, text in index["docs"]), (edition, term)
            assert not problems, (edition, problems)
            page.close()
