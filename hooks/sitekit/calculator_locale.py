"""What the calculator needs to speak its page's language: the separators the build
writes numbers with, and its messages translated from the catalogs.

The calculator formats and reads numbers itself with these separators rather than with
the browser's locale data, so it agrees with its page even in a browser without that
locale (Chromium has no Galician). Its messages are the string literals it passes to
``t("...")`` in docs/javascripts/calculator.js: the script is their one source, and a
build asks the catalog for each of them like any other generated text."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from sitekit import formatting, i18n

MESSAGE = re.compile(r'\bt\(\s*"((?:[^"\\]|\\.)*)"')
# A unit the script writes after a number: `N.unit(number, t("tokens"))` or a field's
# `unit: t("tokens")`; translated in the catalogs' after-a-number context.
COUNTED = re.compile(r'(?:\bunit\([^;]*?,\s*|\bunit:\s*)t\(\s*"([^"]+)"\s*\)')


def messages(script: str) -> list[str]:
    """Every ``t("...")`` literal of the script, in order, once."""
    found = [json.loads(f'"{m}"') for m in MESSAGE.findall(script)]
    return list(dict.fromkeys(found))


def locale_script(calculator_js: Path) -> str:
    """The ``<script type="application/json" data-calculator-locale>`` element its page carries."""
    script = calculator_js.read_text(encoding="utf-8")
    counted = set(COUNTED.findall(script))
    payload = {
        "locale": i18n.language(),
        **formatting.symbols(),
        "messages": {
            m: i18n._(m, "calculator", context=i18n.COUNT if m in counted else None) for m in messages(script)
        },
    }
    body = json.dumps(payload, ensure_ascii=False).replace("</", "<\\/")
    lang = html.escape(i18n.language())
    return f'<script type="application/json" data-calculator-locale lang="{lang}">{body}</script>'
