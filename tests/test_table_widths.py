"""The measured tables fit the page (in Debian's chromium through Playwright, as in
test_site_browser.py): in a 1280 px desktop window no table of any page of any edition
scrolls sideways, and on a 390 px phone each memory budget table keeps its model and its
answer, the users that fit a card, in view however far it is scrolled. No page shows a
Python exception's text."""

from __future__ import annotations

import re

import pytest

from tests.conftest import LANGUAGES
from tests.test_calculator_browser import CHROMIUM
from tests.test_site_browser import _open, browsing

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium` (.ci/run does it)"
    ),
    pytest.mark.browser,
    pytest.mark.build,  # each drives a site built for it
]
EDITIONS = [""] + [f"{lang}/" for lang in LANGUAGES if lang != "en"]
# Every table box that scrolls sideways: the theme wraps each table in one.
_SCROLLING = """() => [...document.querySelectorAll('.md-typeset__scrollwrap')]
    .filter(w => w.scrollWidth > w.clientWidth)
    .map(w => {
        const box = w.closest('[data-table]'), caption = box && box.querySelector('.table-caption');
        return `${box ? box.dataset.table : 'a table written in the page'}`
            + ` "${caption ? caption.textContent.trim() : w.querySelector('tr').textContent.trim().slice(0, 60)}"`
            + ` (${w.scrollWidth} px in ${w.clientWidth})`;
    })"""
_EXCEPTION = re.compile(r"\b[A-Z]\w*(Error|Exception): ")


def _pages(site) -> list[str]:
    """Every page of the default edition, as the path under an edition's root."""
    found = []
    for html in sorted(site.rglob("index.html")):
        path = html.parent.relative_to(site).as_posix()
        if path.split("/")[0] in LANGUAGES or path.startswith(("search", "assets")):
            continue
        found.append("" if path == "." else path + "/")
    return found


def _laid_out(url: str, origin: str) -> bool:
    """A request the page's layout may need: the site's own files but its search index."""
    return url.startswith(origin) and not url.endswith("/search/search_index.json")


@pytest.mark.parametrize("edition", EDITIONS)  # one test per edition: the two workers share them
def test_no_table_scrolls_in_a_desktop_window(built_site, edition):
    pages = _pages(built_site)
    assert "memory-budget/" in pages and "" in pages, pages
    scrolling, exceptions = [], []
    with browsing(built_site) as (origin, browser):
        # One tab for every page, and no search index: the largest file a page fetches,
        # parsed by a worker, plays no part in the layout (test_site_browser loads it).
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", lambda route: route.continue_() if _laid_out(route.request.url, origin) else route.abort())
        for path in pages:
            page.goto(origin + "/" + edition + path, wait_until="load")
            page.evaluate("document.fonts.ready.then(() => 0)")
            scrolling += [f"{edition + path or '/'}: {table}" for table in page.evaluate(_SCROLLING)]
            text = page.inner_text("article")
            exceptions += [f"{edition + path or '/'}: {m.group(0)}" for m in _EXCEPTION.finditer(text)]
    assert not scrolling, "tables that scroll in a 1280 px window:\n" + "\n".join(scrolling)
    assert not exceptions, "pages that show an exception's text:\n" + "\n".join(exceptions)


# Where each table's first and last columns stand against the box that scrolls it, at the
# start of the scroll and at its end.
_ENDS = """() => [...document.querySelectorAll('.measured-table[data-table^="memory_budget."]')].map(box => {
    const wrap = box.querySelector('.md-typeset__scrollwrap'), out = [];
    const inside = cell => { const c = cell.getBoundingClientRect(), w = wrap.getBoundingClientRect();
        return c.left >= w.left - 1 && c.right <= w.right + 1; };
    for (const end of [0, wrap.scrollWidth]) {
        wrap.scrollLeft = end;
        const row = wrap.querySelector('tbody tr');
        out.push({first: inside(row.firstElementChild), last: inside(row.lastElementChild)});
    }
    return {table: box.dataset.table, caption: box.querySelector('.table-caption').textContent.trim(), ends: out};
})"""


def test_a_phone_keeps_the_memory_budget_answers_in_view(built_site):
    lost = []
    with browsing(built_site) as (origin, browser):
        for edition in EDITIONS:
            page, _problems = _open(browser, origin, edition + "memory-budget/")
            page.set_viewport_size({"width": 390, "height": 844})
            tables = page.evaluate(_ENDS)
            budgets = [t for t in tables if t["table"] == "memory_budget.budget"]
            assert len(budgets) >= 6, (edition, [t["table"] for t in tables])
            for t in tables:
                for at, end in zip(("start", "end"), t["ends"], strict=True):
                    if not end["first"]:
                        lost.append(f"{edition}memory-budget/ {t['caption']}: first column out of view at the {at}")
                    if t["table"] == "memory_budget.budget" and not end["last"]:
                        lost.append(f"{edition}memory-budget/ {t['caption']}: the users column out of view at the {at}")
            page.close()
    assert not lost, "\n".join(lost)
