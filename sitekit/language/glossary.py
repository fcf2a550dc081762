"""The glossary: a short definition on hover for each term a reader meets before a page
explains it (Python-Markdown's ``abbr``, shown as the theme's tooltips). Each edition has
its own list, ``includes/glossary.<language>.md``, in its own words for its own terms;
``pymdownx.snippets`` appends it to every page of that edition (``auto_append``)."""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

from sitekit.rendering import escape

FILE = "includes/glossary.{language}.md"
ROOT = Path(__file__).resolve().parents[2]  # the project's root, where includes/ is
_ENTRY = re.compile(r"^\*\[(?P<term>[^\]]+)\]:\s*(?P<definition>.+)$", re.M)


def path(language: str) -> str:
    return FILE.format(language=language)


def append_to_pages(config, language: str) -> None:
    """Every page of the edition being built ends with its glossary (invisible: a list of
    definitions the ``abbr`` extension reads). The build fails naming a missing list."""
    found = Path(config.config_file_path).resolve().parent / path(language)
    if not found.is_file():
        raise FileNotFoundError(f"{path(language)}: the {language} edition has no glossary")
    config.mdx_configs.setdefault("pymdownx.snippets", {})["auto_append"] = [path(language)]


@cache
def definitions(language: str) -> dict[str, str]:
    """The edition's terms and their definitions, as its glossary file gives them."""
    found = ROOT / path(language)
    text = found.read_text(encoding="utf-8") if found.is_file() else ""
    return {m["term"]: m["definition"].strip() for m in _ENTRY.finditer(text)}


@lru_cache(maxsize=4096)  # the same fields (a model, a device, the libraries) on every page of an edition
def explain(shown: str, language: str) -> str:
    """Escaped text that a page shows in its own HTML (a provenance field, which ``abbr``
    never reads) with the first use of each glossary term marked as ``abbr`` marks its own:
    the term, its definition on hover. Tags, and the terms already marked, are left alone."""
    for term, definition in definitions(language).items():
        word = re.escape(escape.text(term, None))
        mark = f'<abbr title="{escape.attribute(definition, None)}">{escape.text(term, None)}</abbr>'
        parts, inside, done = re.split(r"(<[^>]*>)", shown), False, False
        for i, part in enumerate(parts):
            if part.startswith("<"):
                inside = part.startswith("<abbr") or (inside and not part.startswith("</abbr"))
            elif not inside and not done:
                parts[i], done = re.subn(rf"(?<!\w){word}(?!\w)", mark, part, count=1)
        shown = "".join(parts)
    return shown
