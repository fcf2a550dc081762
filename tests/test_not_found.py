"""A "page not found" page in each edition (hooks/not_found.py): the root's in English, each
other edition's in its own folder, in its language, menu and search; and a static host
that answers every missing address with the root's page shows a reader under an
edition's folder that edition's page (a browser, as GitHub Pages serves it)."""

from __future__ import annotations

import functools
import json
import os
import re
import threading

import pytest

from sitekit.language import i18n
from tests.conftest import LANGUAGES
from tests.test_calculator_browser import CHROMIUM, LAUNCH_ARGS, _Quiet, _Server
from tests.test_english_words import english_words, visible

pytestmark = pytest.mark.build


def _config(html: str) -> dict:
    return json.loads(re.search(r'<script id="__config" type="application/json">(.*?)</script>', html, re.S).group(1))


def test_the_roots_page_is_the_english_one(built_site):
    html = (built_site / "404.html").read_text(encoding="utf-8")
    assert '<html lang="en"' in html and "<h1>404 · Page not found</h1>" in html
    assert "404 - Not found" not in html
    assert _config(html)["base"] == "/"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_edition_has_its_own_page_in_its_words_menu_and_search(built_site, lang):
    html = (built_site / lang / "404.html").read_text(encoding="utf-8")
    heading = i18n.translations(lang)[(None, "Page not found")]
    assert f'<html lang="{lang}"' in html and f"<h1>404 · {heading}</h1>" in html
    assert _config(html)["base"] == f"/{lang}/"  # its search reads the edition's index
    assert f'href="/{lang}/kv-cache/"' in html  # its menu leads to its pages
    selector = dict(re.findall(r'<a href="([^"]*)" hreflang="([a-z]+)" class="md-select__link"', html))
    assert selector == {"/": "en", **{f"/{other}/": other for other in LANGUAGES}}  # each edition's home
    words = [w for text in visible(html) for w in english_words(" ".join(text.split()), lang, ["Material for MkDocs"])]
    assert not words, words


class _LikeAStaticHost(_Quiet):
    """Answers a missing file with the root's 404.html and the status 404, as GitHub Pages does."""

    def send_head(self):
        if not os.path.exists(self.translate_path(self.path)):
            self.path = "/404.html"
        return super().send_head()

    def send_response(self, code, message=None):
        super().send_response(404 if self.path == "/404.html" and code == 200 else code, message)


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium`")
def test_a_missing_address_under_an_edition_shows_that_editions_page(built_site):
    from playwright.sync_api import sync_playwright

    server = _Server(("127.0.0.1", 0), functools.partial(_LikeAStaticHost, directory=str(built_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            origin = f"http://127.0.0.1:{server.server_port}"
            page = browser.new_page()
            for lang in ("", *LANGUAGES):
                page.goto(f"{origin}/{lang + '/' if lang else ''}no-such-page/")
                page.wait_for_load_state("load")
                wanted = i18n.translations(lang).get((None, "Page not found")) if lang else "Page not found"
                page.wait_for_function(
                    "t => document.querySelector('h1') && document.querySelector('h1').textContent.includes(t)",
                    arg=wanted,
                )
                assert page.evaluate("document.documentElement.lang") == (lang or "en")
            browser.close()
    finally:
        server.shutdown()
        thread.join(5)
