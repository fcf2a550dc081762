"""What the calculator needs to speak its page's language: the separators the build
writes numbers with, and its messages translated from the catalogs.

The calculator formats and reads numbers itself with these separators rather than with
the browser's locale data, so it agrees with its page even in a browser without that
locale (Chromium has no Galician). Its messages are the string literals it passes to
``t("...")`` in its scripts, every ``.js`` file of docs/javascripts/calculator/: the
scripts are their one source, and a build asks the catalog for each of them like any
other generated text."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from sitekit.language import formatting, i18n

MESSAGE = re.compile(r'\bt\(\s*"((?:[^"\\]|\\.)*)"')
# A unit the script writes after a number: `N.unit(number, t("tokens"))` or a field's
# `unit: t("tokens")`; translated in the catalogs' after-a-number context.
COUNTED = re.compile(r'(?:\bunit\([^;]*?,\s*|\bunit:\s*)t\(\s*"([^"]+)"\s*\)')


def scripts(folder: Path) -> dict[str, str]:
    """The calculator's scripts, file name -> text: every ``.js`` file of ``folder``."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.js"))}


def messages(script: str) -> list[str]:
    """Every ``t("...")`` literal of the script, in order, once."""
    found = [json.loads(f'"{m}"') for m in MESSAGE.findall(script)]
    return list(dict.fromkeys(found))


def formats() -> list[dict]:
    """Every edition's number format (English, and each language with a catalog): a link
    of an earlier version wrote its numbers in its own page's format, which another
    edition's page then reads where the editions agree on the number."""
    editions = [i18n.DEFAULT, *sorted(p.stem for p in i18n.LOCALES.glob("*.po"))]
    keep = ("decimal", "group", "min_grouping")
    return [{"locale": lang, **{k: formatting.symbols(lang)[k] for k in keep}} for lang in editions]


def locale_script(folder: Path) -> str:
    """The ``<script type="application/json" data-calculator-locale>`` element its page
    carries; ``folder``: the calculator's scripts (docs/javascripts/calculator). The
    messages are in alphabetical order, whichever script writes them."""
    texts = scripts(folder).values()
    counted = {m for text in texts for m in COUNTED.findall(text)}
    payload = {
        "locale": i18n.language(),
        **formatting.symbols(),
        "formats": formats(),
        "messages": {
            m: i18n._(m, "calculator", context=i18n.COUNT if m in counted else None)
            for m in sorted({m for text in texts for m in messages(text)})
        },
    }
    # inside a <script> element only "<" can end it or open a comment ("</script>", "<!--"):
    # written as \u003c, the JSON is the same and no text of a catalog can close the element
    body = json.dumps(payload, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    lang = html.escape(i18n.language())
    return f'<script type="application/json" data-calculator-locale lang="{lang}">{body}</script>'
