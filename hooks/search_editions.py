"""Search per edition: each edition's pages search an index of that edition alone.

mkdocs-static-i18n stacks the pages of every edition into one index (search/) that every
page loads, so a search on the Spanish pages finds Galician and English pages too. After
it has written that index, this splits it: the default edition keeps search/, each other
edition gets <locale>/search/ holding its own pages (their locations relative to its
root), and each edition's pages load their own (Material reads the index beside the
``base`` of a page's ``__config``, which here becomes the edition's root; the site uses
no instant navigation or version selector, the other readers of ``base``).

Each index names the lunr language whose stop words fit the edition: en, es and it their
own; gl Spanish's (the two share most short function words' spelling: de, que, se, en);
cs English's, since lunr has none for Czech. Words are matched as written (the theme's
pipeline, stop words alone): with the theme's search worker an index stemmed by lunr
answered no query in the browser, so every edition keeps exact words."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

from sitekit.rendering import escape

# the lunr language whose stop words each edition's index uses
LUNR = {"en": "en", "es": "es", "it": "it", "gl": "es", "cs": "en"}
CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.DOTALL)


def _editions(config) -> tuple[str, list[str]]:
    plugin = config.plugins.get("i18n")
    if plugin is None:
        return "en", []
    languages = plugin.config.languages
    default = next(lang.locale for lang in languages if lang.default)
    return default, [lang.locale for lang in languages if lang.build and not lang.default]


def index_config(config: dict, locale: str) -> dict:
    """The index's settings for one edition: its lunr language, the theme's pipeline."""
    return {**config, "lang": [LUNR.get(locale, "en")]}


def split_index(index: dict, default: str, others: list[str]) -> dict[str, dict]:
    """One index per edition from the index of all: the default's pages are those under
    no other edition's folder; an edition's locations lose its folder's prefix."""
    docs: dict[str, list] = {lang: [] for lang in [default, *others]}
    for doc in index["docs"]:
        lang = doc["location"].split("/", 1)[0]
        if lang in others:
            docs[lang].append({**doc, "location": doc["location"][len(lang) + 1 :]})
        else:
            docs[default].append(doc)
    return {lang: {**index, "config": index_config(index["config"], lang), "docs": d} for lang, d in docs.items()}


def on_post_page(output, page, config, **kwargs):
    """An edition's page loads its edition's index: ``base`` points at its root."""
    _, others = _editions(config)
    lang = page.url.split("/", 1)[0]
    if lang not in others:
        return output

    def rebase(m: re.Match) -> str:
        settings = json.loads(m.group(2))
        settings["base"] = f"{settings['base']}/{lang}/"  # a folder: the index is resolved inside it
        return m.group(1) + escape.json_script(settings) + m.group(3)

    return CONFIG.sub(rebase, output, count=1)


@event_priority(-150)  # after mkdocs-static-i18n (-100) has written the index of every edition
def on_post_build(config, **kwargs):
    plugin = config.plugins.get("i18n")
    if plugin is not None and plugin.building:  # an edition built inside the default's build
        return
    site = Path(config.site_dir)
    path = site / "search" / "search_index.json"
    if not path.is_file():
        return
    default, others = _editions(config)
    for lang, index in split_index(json.loads(path.read_text(encoding="utf-8")), default, others).items():
        target = path if lang == default else site / lang / "search" / "search_index.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
