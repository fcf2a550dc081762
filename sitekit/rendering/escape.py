"""The one way text from site_data reaches a page: every name, label, title, unit, cell,
value and field of provenance goes through here, in the form its place on the page needs.

Data is text, never markup. A page is Markdown before it is HTML, and Python-Markdown
rewrites more than HTML's characters: ``[x](javascript:...)`` becomes a link, backticks
a code span and ``*a*`` emphasis, even inside an inline tag's attribute. So data is
written as HTML in which each of Markdown's characters is a numeric character reference
(``[`` as ``&#91;``): Markdown leaves a reference alone and the browser shows the
character. No link ever comes from data: ``link`` makes one only to an http(s) address on
a site this module names. Every string shown is cut to a bound first (``cut``), so that no
page grows with the data. In a figure, a ``$`` of the data is written ``\\$``, which
matplotlib draws as a dollar sign rather than reading ``$x^2$`` as mathtext.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import urlsplit

from sitekit.language.i18n import _

NAME = 200  # a name, a label, a title, a field of provenance
TEXT = 1_000  # a text shown whole: a model's answer, a quoted prompt
FIGURE = 60  # a label drawn in a figure

# Sites a source address in the data may link to (the cards' vendors, the model hub):
# an address elsewhere fails the build, naming it, until it is added here.
LINK_SITES = ("amd.com", "huggingface.co", "nvidia.com")

_MARKDOWN = "\\`*_[]{}|#~^$\n\r"  # escapes, code, emphasis, links, attributes, tables, headings, maths
_ENTITIES = {c: f"&#{ord(c)};" for c in _MARKDOWN} | {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_TEXT = str.maketrans(_ENTITIES)
_ATTRIBUTE = str.maketrans(_ENTITIES | {'"': "&quot;", "'": "&#x27;"})
# What makes a line a block when it starts one: a list item, a rule, a setext underline,
# an admonition ("!!! note") or a details block ("??? note"), an ordered item ("1. x"),
# indentation. A data text can start a line of the page.
_BLOCK_START = re.compile(r"[-+=!?\s]|\d+[.)](\s|$)")
# A JSON string literal, and what may not appear in one inside a <script>: "<!--",
# "<script", "</script" and "{{" can never be formed.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_UNSAFE = re.compile("[<>&{}\u2028\u2029]")


def cut(value: Any, limit: int | None = NAME, *, note: bool = True) -> str:
    """``value`` as text, at most ``limit`` characters of it: past that, an ellipsis and
    (with ``note``) the whole length, so that a reader knows something was left out."""
    text = str(value)
    if limit is None or len(text) <= limit:
        return text
    if not note:
        return text[:limit] + "…"
    from sitekit.language.formatting import integer

    return text[:limit] + "… " + _("({count} characters in all)").format(count=integer(len(text)))


def text(value: Any, limit: int | None = NAME) -> str:
    """Data as the content of an element (prose, a table cell, a caption, a list item):
    shown literally wherever the marker stands, in a paragraph, a Markdown table, a
    blockquote or a raw HTML block."""
    shown = cut(value, limit)
    if not shown:
        return shown
    first = shown[0]
    if _BLOCK_START.match(shown):
        return f"&#{ord(first)};" + shown[1:].translate(_TEXT)
    return shown.translate(_TEXT)


def attribute(value: Any, limit: int | None = NAME) -> str:
    """Data as the value of a double-quoted attribute (a tooltip)."""
    return cut(value, limit).translate(_ATTRIBUTE)


def figure_text(value: Any) -> str:
    """Data as a label drawn in a figure (an axis tick, a legend entry): cut short, and
    every ``$`` a literal dollar sign (matplotlib reads ``\\$`` as one, math or not)."""
    return cut(value, FIGURE, note=False).replace("$", "\\$")


def json_script(payload: Any) -> str:
    """``payload`` as JSON to sit inside ``<script type="application/json">``: every text
    cut to a bound, a non-finite number as null, and ``<``, ``>``, ``&`` (and braces) in
    strings written as ``\\u`` escapes, which JSON.parse reads back as the same characters."""
    dumped = json.dumps(_bounded(payload), ensure_ascii=False, allow_nan=False)
    return _JSON_STRING.sub(lambda m: _JSON_UNSAFE.sub(lambda c: f"\\u{ord(c.group()):04x}", m.group()), dumped)


def _bounded(node: Any) -> Any:
    if isinstance(node, dict):
        return {cut(k, note=False): _bounded(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_bounded(v) for v in node]
    if isinstance(node, str):
        return cut(node, TEXT, note=False)
    if isinstance(node, float) and not math.isfinite(node):
        return None
    return node


def link(url: Any) -> str:
    """A source's address as a link named by its site, so that a column of addresses stays
    narrow; only an http(s) address on one of LINK_SITES, else SiteDataError."""
    from sitekit.rendering.pagedata import SiteDataError

    address = str(url)
    try:
        parts = urlsplit(address)
        host, plain = parts.hostname or "", parts.username is None and parts.port is None
    except ValueError:  # a port that is no number
        parts, host, plain = urlsplit(""), "", False
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SiteDataError(f"style 'link' needs an http(s) address, not {cut(address, 80)!r}")
    plain = plain and not re.search(r"[\s\"'<>\\`]", address)
    if not plain or not any(host == s or host.endswith("." + s) for s in LINK_SITES):
        raise SiteDataError(
            f"source address {cut(address, 80)!r} is not on a site the pages link to ({', '.join(LINK_SITES)}); "
            "add its site to LINK_SITES in sitekit/rendering/escape.py if it is a source"
        )
    return f'<a href="{attribute(address, None)}">{text(host.removeprefix("www."))}</a>'
