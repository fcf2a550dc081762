"""A notebook page's outputs in the edition's language.

Every edition shows the English run's outputs (measure/notebooks.py: one run for five
editions), which the notebooks write so that a page can read them:

- printed lines are ``label: value``: the label is a message of the catalogs (asked, so
  `make messages` lists it and a build without its translation fails), the value's
  numbers are written with the digits the notebook printed and the language's decimal
  mark, and a value that is a sentence a run records (sitedata.wording) or a word the
  catalog knows is translated;
- a table's headers are the labels the site's pages give those columns, with their units
  ("step (ms)"), each a message of the catalogs (asked); in a column of numbers the
  numbers keep their printed digits, with the language's decimal mark; in any other column the words the
  catalog knows are translated and names, tokens and ids stay as written (a code hash
  that happens to be all digits is no number);
- a figure is drawn as SVG with its text as text (``svg.fonttype = "none"``): its labels
  are messages (asked) and its numbers written as the language writes them.

Anything else is code or data as the run wrote it.

An edition's code prints what its page shows: each string literal of its code is the
English notebook's, or that literal translated as its output is (``untranslated``).
"""

from __future__ import annotations

import base64
import re
from html import unescape

from sitedata import wording
from sitedata.hashes import code_cells, literal_pairs
from sitekit.language import formatting, i18n, recorded
from sitekit.rendering import escape

_PRINTED = re.compile(
    r'(<div class="jp-RenderedText[^"]*" data-mime-type="text/plain"[^>]*>\s*<pre>)(.*?)(</pre>)', re.S
)
_HEAD = re.compile(r"<thead>.*?</thead>", re.S)
_CELL = re.compile(r"(<t[hd]>)([^<>]*)(</t[hd]>)")  # an empty one too: it keeps a column's place
_BODY = re.compile(r"<tbody>.*?</tbody>", re.S)
_ROW = re.compile(r"<tr>.*?</tr>", re.S)
_LABELLED = re.compile(r"(?P<label>.+) \((?P<unit>[^()]+)\)")
_SVG = re.compile(r'(src="data:image/svg\+xml;base64,)([A-Za-z0-9+/=]+)(")')
_SVG_TEXT = re.compile(r"(<text\b[^>]*>)([^<>]+)(</text>)")
# A number as Python prints it: 46080, 78.25, -0.5, 1e-05; not part of a name (int4, q_proj).
_PYTHON_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")


def translate(html: str) -> str:
    """The outputs of a notebook page's ``html`` in the current language, and the copy
    button of each code cell, which the notebook renderer names in English."""
    if i18n.language() != i18n.DEFAULT:
        copy = escape.attribute(i18n._("Copy to clipboard", "theme"), None)
        html = html.replace('aria-label="Copy to Clipboard"', f'aria-label="{copy}"')
    html = _PRINTED.sub(lambda m: m.group(1) + _printed(m.group(2)) + m.group(3), html)
    html = _HEAD.sub(lambda m: _CELL.sub(lambda c: _swap(c, _words), m.group(0)), html)
    html = _BODY.sub(lambda m: _body(m.group(0)), html)
    return _SVG.sub(lambda m: m.group(1) + _figure(m.group(2)) + m.group(3), html)


def numbers(text: str) -> str:
    """``text`` with each number Python printed written with the digits it printed and
    no more: ungrouped, as in the notebook a reader downloads (552960, not 552,960), with
    the language's decimal mark (0,5 on a Galician page); a power of ten as the site
    writes one."""
    mark = formatting.symbols()["decimal"]

    def one(m: re.Match) -> str:
        printed = m.group(0)
        return formatting.scientific(float(printed)) if "e" in printed else printed.replace(".", mark)

    return _PYTHON_NUMBER.sub(one, text)


def _swap(m: re.Match, words) -> str:
    return m.group(1) + escape.text(words(unescape(m.group(2))), None) + m.group(3)


def _words(text: str) -> str:
    """A header or a figure's text in the language: a number as the language writes it;
    "label (unit)" as the label's and the unit's messages; any other text a message of
    its own. Each is asked, so `make messages` lists it and a build without its
    translation fails."""
    if not text.strip() or _PYTHON_NUMBER.fullmatch(text.strip().replace("\u2212", "-")):
        return numbers(text)
    labelled = _LABELLED.fullmatch(text)
    if labelled and labelled["unit"] == "%":
        return f"{i18n._(labelled['label'], 'notebook')} (%)"
    if labelled and labelled["unit"] in i18n.ENGLISH_ONE:  # a unit the site writes after its columns' labels
        return f"{i18n._(labelled['label'], 'notebook')} ({i18n._(labelled['unit'], 'unit')})"
    return i18n._(text, "notebook")


def _printed(pre: str) -> str:
    lines = []
    for line in unescape(pre).split("\n"):
        label, sep, value = line.partition(": ")
        if sep and not _PYTHON_NUMBER.fullmatch(label.strip()):
            if wording.parse(value):  # a sentence a run records, in the language's words
                value = recorded.recorded_text(value, "notebook")
            value = i18n.known(value) or value
            line = i18n._(label, "notebook") + ": " + numbers(value)
        lines.append(line)
    return escape.text("\n".join(lines), None)


def _body(body: str) -> str:
    """A table's body, column by column: a column whose every cell is a number (or NaN,
    or empty) has its numbers written as the language writes them; any other column's
    cells are words or names (``_word``)."""
    rows = [[unescape(c[1]).strip() for c in _CELL.findall(r)] for r in _ROW.findall(body)]
    width = max(map(len, rows), default=0)
    numeric = [
        all(_PYTHON_NUMBER.fullmatch(r[i]) or r[i] in ("", "NaN") for r in rows if i < len(r)) for i in range(width)
    ]

    def row(m: re.Match) -> str:
        kinds = iter(numeric)
        return _CELL.sub(lambda c: _swap(c, numbers if next(kinds, False) else _word), m.group(0))

    return _ROW.sub(row, body)


def _word(text: str) -> str:
    if text in ("True", "False") and i18n.language() != i18n.DEFAULT:  # a boolean pandas wrote
        return i18n._("yes" if text == "True" else "no", "notebook")
    return i18n.known(text) or text


def _figure(encoded: str) -> str:
    svg = base64.b64decode(encoded).decode("utf-8")

    svg = _SVG_TEXT.sub(lambda m: _swap(m, _words), svg)
    return base64.b64encode(svg.encode("utf-8")).decode("ascii")


def source_literal(text: str) -> str:
    """A string literal of the English code as the edition's code writes it: a printed
    label ("tokens in the prompt:") as the page shows the line it printed, any other text
    (a table's header, a word it prints) as the page shows that header or word."""
    if text.endswith(":") and text[:-1].strip():
        return i18n._(text[:-1], "notebook") + ":"
    return _words(text)


def untranslated(english: dict, edition: dict, language: str) -> str | None:
    """Why an edition's code does not print what its page shows, or None: a literal that is
    neither the English one nor its translation (source_literal), or one translated in
    one place and kept in another (the code would no longer run: a key renamed in a table
    and not where it is read). Code that differs otherwise is sitedata.hashes.staleness's."""
    kept, changed = set(), {}
    before = i18n.language()
    i18n.set_language(language)  # the check of every edition runs in the English build
    try:
        for ours, theirs in zip(code_cells(english), code_cells(edition), strict=False):
            for text, written in literal_pairs(ours, theirs) or []:
                if text == written:
                    kept.add(text)
                    continue
                if written != source_literal(text):
                    return f": the literal {text!r} is {written!r}, not its translation {source_literal(text)!r}"
                changed[text] = written
    finally:
        i18n.set_language(before)
    both = sorted(kept & changed.keys())
    if both:
        return f": the literal {both[0]!r} is translated in one place and kept in another"
    return None
