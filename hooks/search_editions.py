"""Search per edition: each edition's pages search an index of that edition alone, in
its own language.

mkdocs-static-i18n stacks the pages of every edition into one index (search/) that every
page loads, so a search on the Spanish pages finds Galician and English pages too. After
it has written that index, this splits it: the default edition keeps search/, each other
edition gets <locale>/search/ holding its own pages (their locations relative to its
root), and each edition's pages load their own (Material reads the index beside the
``base`` of a page's ``__config``, which here becomes the edition's root; the site uses
no instant navigation or version selector, the other readers of ``base``).

Each index names its edition's own lunr language, ``edition_<locale>``: the theme's
search worker loads assets/javascripts/lunr/min/lunr.<language>.min.js for it, which
this writes (the lunr-languages file of the stemmer, then search_editions.js, then the
edition's settings). English, Spanish and Italian are stemmed by their own stemmers
(lunr's and lunr-languages'); Galician by Spanish's, a plural in -ns read as its
singular first (lunr has no Galician stemmer, and Portuguese's keeps "cuantizacións"
apart from "cuantización"); Czech by the light stemmer of Dolamic and Savoy (lunr has
none for Czech). Accents are folded before stemming, so that "caché" finds "cache" and
a word typed without its accents finds the page's.
Why the theme's worker found nothing in a stemmed index before, and how the query is
read now: search_editions.js."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

from sitekit.language.hyphenation import unhyphenated
from sitekit.rendering import escape

# Each edition's stemmer: the language whose stemmer (lunr's for English, lunr-languages'
# otherwise, search_editions.js's for Czech) reads its words, and its stop words where
# that language's are not its own. Galician's and Czech's are their short function
# words, which every page holds and no reader searches for.
STEMMER = {"en": "en", "es": "es", "it": "it", "gl": "es", "cs": "cs"}
STOP_WORDS = {
    "gl": "a o os as un unha uns unhas de do da dos das en no na nos nas ao á aos ás e ou que se non "
    "por para con sen como máis é son foi ser este esta isto ese esa iso".split(),
    "cs": "a i o u v ve k ke s se z ze na do od po pro při za je jsou být to ten ta že jak než ale "
    "nebo tak jako už i".split(),
}
SCRIPT = Path(__file__).resolve().parent / "search_editions.js"
LUNR_FILES = Path("assets") / "javascripts" / "lunr" / "min"
CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.DOTALL)


def _editions(config) -> tuple[str, list[str]]:
    plugin = config.plugins.get("i18n")
    if plugin is None:
        return "en", []
    languages = plugin.config.languages
    default = next(lang.locale for lang in languages if lang.default)
    return default, [lang.locale for lang in languages if lang.build and not lang.default]


def language(locale: str) -> str:
    """The lunr language of an edition's index: its own, which search_editions.js defines."""
    return f"edition_{locale}"


def index_config(config: dict, locale: str) -> dict:
    """The index's settings for one edition: its own lunr language, whose plugin sets the
    whole pipeline (the theme removes none of it)."""
    return {**config, "lang": [language(locale)], "pipeline": ["stemmer", "stopWordFilter", "trimmer"]}


def language_script(site: Path, locale: str) -> str:
    """lunr.edition_<locale>.min.js: the stemmer's lunr-languages file where it has one
    (as the theme ships it), search_editions.js, and the edition's settings."""
    stemmer = STEMMER.get(locale, "en")
    parts = []
    if stemmer not in ("en", "cs"):
        parts.append((site / LUNR_FILES / f"lunr.{stemmer}.min.js").read_text(encoding="utf-8"))
    parts.append(SCRIPT.read_text(encoding="utf-8"))
    options = {
        "language": locale,
        "stemmer": stemmer,
        **({"stopWords": STOP_WORDS[locale]} if locale in STOP_WORDS else {}),
    }
    parts.append(f"lunr.edition({json.dumps(language(locale))}, {json.dumps(options, ensure_ascii=False)});\n")
    return "\n".join(parts)


def split_index(index: dict, default: str, others: list[str]) -> dict[str, dict]:
    """One index per edition from the index of all: the default's pages are those under
    no other edition's folder; an edition's locations lose its folder's prefix."""
    docs: dict[str, list] = {lang: [] for lang in [default, *others]}
    for doc in index["docs"]:
        # a header's soft hyphens (sitekit/language/hyphenation.py) would split its words
        doc = {**doc, **{k: unhyphenated(doc[k]) for k in ("title", "text") if isinstance(doc.get(k), str)}}
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
        script = site / LUNR_FILES / f"lunr.{language(lang)}.min.js"
        script.write_text(language_script(site, lang), encoding="utf-8")
