"""An edition's words as its reader meets them, read from its sources with their lines:
its pages (docs/<page>.<lang>.md), its catalog (hooks/locales/<lang>.po) and its
notebooks (docs/<name>.<lang>.ipynb), without what is code, a name or an address.

- a page: its prose; of a marker, the words it shows (a claim's sentence, a table's
  caption, a figure's description and caption), never its ids; of a formula, its
  ``\\text{...}`` words; never a code span, a code block, a link's address or a comment;
- a catalog: each translation, without its placeholders;
- a notebook: its text cells as a page, and of its code the comments and the string
  literals it writes in its own words (sitedata.hashes.literal_pairs).

Used by tests/test_style_sheets.py, which holds each edition to its style sheet."""

from __future__ import annotations

import ast
import json
import re
import tokenize
from collections.abc import Iterator
from io import StringIO

from babel.messages.pofile import read_po

from sitedata.hashes import code_cells, literal_pairs
from tests.conftest import DOCS, REPO

# A marker's arguments that are words a reader sees: a claim's sentence is its second.
SHOWN = ("caption", "alt", "text")
FENCE = re.compile(r"^\s*(```|~~~)")
MARKER = re.compile(r"\{\{\s*(.+?)\s*\}\}", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+)\$", re.S)
TEXT_IN_MATH = re.compile(r"\\(?:text|mathrm)\{([^{}]*)\}")
LINK = re.compile(r"(!?)\[([^\]]*)\]\([^)]*\)")
ATTRIBUTES = re.compile(r"\{[:#.][^{}]*\}")
TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
SNIPPET = re.compile(r"^\s*-{2}8<-{2}.*$", re.M)
PLACEHOLDER = re.compile(r"\{[a-z_0-9]*\}")


def _marker_words(expr: str) -> str:
    """The words a marker shows: its claim sentence, caption, description."""
    try:
        call = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return " "
    if not isinstance(call, ast.Call):
        return " "
    words = [k.value.value for k in call.keywords if k.arg in SHOWN and isinstance(k.value, ast.Constant)]
    if isinstance(call.func, ast.Name) and call.func.id == "claim" and len(call.args) > 1:
        if isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
            words.append(call.args[1].value)
    return " " + " · ".join(str(w) for w in words) + " "


def _same_lines(m: re.Match, text: str) -> str:
    """``text`` in place of a match, with as many line breaks as it had (lines stay right)."""
    return text.replace("\n", " ") + "\n" * m.group(0).count("\n")


def prose(markdown: str) -> str:
    """A page's text with only its words, line for line."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line)
    text = "\n".join(lines)
    text = SNIPPET.sub("", text)
    text = COMMENT.sub(lambda m: _same_lines(m, " "), text)
    text = MARKER.sub(lambda m: _same_lines(m, _marker_words(m.group(1))), text)
    text = MATH.sub(lambda m: _same_lines(m, " ".join(TEXT_IN_MATH.findall(m.group(0))) or " "), text)
    text = CODE_SPAN.sub(" ", text)
    text = LINK.sub(lambda m: m.group(2), text)
    text = ATTRIBUTES.sub(" ", text)
    return TAG.sub(" ", text)


def pages(lang: str) -> Iterator[tuple[str, int, str]]:
    """(file, line, words) of every page of the edition."""
    for path in sorted(DOCS.glob(f"*.{lang}.md")):
        for n, line in enumerate(prose(path.read_text(encoding="utf-8")).split("\n"), 1):
            if line.strip():
                yield f"docs/{path.name}", n, line


def catalog(lang: str) -> Iterator[tuple[str, int, str]]:
    """(file, line, words) of every translation in the edition's catalog."""
    path = REPO / "hooks" / "locales" / f"{lang}.po"
    with path.open("rb") as f:
        for m in read_po(f, locale=lang):
            if m.id and m.string:
                line = m.lineno or 0
                yield f"hooks/locales/{path.name}", line, PLACEHOLDER.sub(" ", str(m.string))


def _comments(source: str) -> list[str]:
    try:
        return [
            t.string.lstrip("# ")
            for t in tokenize.generate_tokens(StringIO(source).readline)
            if t.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


def notebook_comments(path) -> list[str]:
    """The comments and docstrings of a notebook's code cells, as written."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            found += _comments(source) + re.findall(r'"""(.*?)"""', source, re.S)
    return found


def notebooks(lang: str) -> Iterator[tuple[str, int, str]]:
    """(file, cell, words) of every notebook of the edition: its text cells, its code's
    comments and the literals it translates."""
    for path in sorted(DOCS.glob(f"*.{lang}.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        english = json.loads((DOCS / f"{path.name.split('.')[0]}.ipynb").read_text(encoding="utf-8"))
        name = f"docs/{path.name}"
        for n, cell in enumerate(nb["cells"], 1):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "markdown":
                yield from ((name, n, line) for line in prose(source).split("\n") if line.strip())
            elif cell["cell_type"] == "code":
                yield from ((name, n, c) for c in _comments(source))
        for ours, theirs in zip(code_cells(english), code_cells(nb), strict=False):
            for text, written in literal_pairs(ours, theirs) or []:
                if text != written:
                    yield name, 0, written


def everything(lang: str) -> Iterator[tuple[str, int, str]]:
    yield from pages(lang)
    yield from catalog(lang)
    yield from notebooks(lang)
