"""Formulas written in LaTeX, rendered to MathML when the site is built.

A page writes ``$...$`` inside a sentence and ``$$...$$`` for a formula on its own line;
``pymdownx.arithmatex`` (``generic: true``, mkdocs.yml) finds them and leaves each in a
``<span class="arithmatex">\\(...\\)</span>`` or ``<div class="arithmatex">\\[...\\]</div>``.
:func:`render` turns those into MathML, which browsers draw themselves: no script, no
font and no third-party address, so a page shows its formulas offline. The LaTeX stays
in each formula as its ``application/x-tex`` annotation, for copying and for screen
readers. A formula that does not convert, or that names a command the converter does not
know (it would show the command's name as a letter), raises :class:`MathsError` naming it.
"""

from __future__ import annotations

import re
from html import escape, unescape

from latex2mathml.converter import convert

# a formula in a page's Markdown, as arithmatex finds one: its braces are not a marker's
IN_MARKDOWN = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?![\s$])[^\n]+?(?<![\s\\])\$", re.S)
ARITHMATEX = re.compile(r'(<(span|div) class="arithmatex">)(.*?)(</\2>)', re.S)
DELIMITED = re.compile(r"\A\s*\\[(\[](.*)\\[)\]]\s*\Z", re.S)
TAG = re.compile(r"<[^>]+>")


class MathsError(ValueError):
    """A formula that cannot be rendered; the message names the formula."""


def to_mathml(tex: str, *, display: bool = False) -> str:
    """The MathML of one LaTeX formula, its source kept as the annotation."""
    source = tex.strip()
    try:
        out = convert(source, display="block" if display else "inline")
    except Exception as e:  # the converter raises its own types, and IndexError on some input
        raise MathsError(f"formula cannot be rendered as MathML ({type(e).__name__}): {source}") from None
    start = out.index(">") + 1
    head, body = out[:start], out[start : out.rindex("</math>")]
    unknown = re.findall(r"\\[A-Za-z]+", unescape(TAG.sub(" ", body)))
    if unknown:
        raise MathsError(f"formula cannot be rendered as MathML (unknown {', '.join(unknown)}): {source}")
    note = f'<annotation encoding="application/x-tex">{escape(source, quote=False)}</annotation>'
    return f"{head}<semantics>{body}{note}</semantics></math>"


def render(html: str) -> str:
    """Every formula arithmatex marked in a page's HTML, as MathML inside its span or div."""

    def one(m: re.Match) -> str:
        found = DELIMITED.match(unescape(m.group(3)))
        if not found:
            raise MathsError(f"formula without its delimiters: {unescape(m.group(3)).strip()}")
        return m.group(1) + to_mathml(found.group(1), display=m.group(2) == "div") + m.group(4)

    return ARITHMATEX.sub(one, html)
