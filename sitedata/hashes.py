"""The two hashes that tie what a build shows to what produced it.

* The data's hash (``data_hash``): sha256 over every experiment's meta.json, each of
  which records its tables' checksums, so any change to a published number changes it.
* A notebook's code hash (``notebook_code_hash``): sha256 over its code cells.

An edition's notebook holds the English notebook's code in its own words: the same
tokens, its comments and docstrings its own, and a string literal either the English one
or its translation (``literal_pairs`` lists them for the build to check against the
catalogs, hooks/render.py). It carries the English run's outputs and stamp.

A notebook page is executed against site_data/ and records both in its metadata, under
``NOTEBOOK_KEY``: ``{"data": <data hash>, "code": <code hash>}``. The build compares them
with the current ones, so a notebook can never show older numbers than the pages beside
it (measure/notebooks.py, hooks/render.py); the figures' cache is keyed by the data's
hash too (sitekit/figures)."""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize
from pathlib import Path

from sitedata.read import experiment_names
from sitedata.store import META

NOTEBOOK_KEY = "site"  # notebook.metadata["site"] = {"data": <data hash>, "code": <code hash>}


def data_hash(root: Path) -> str:
    """sha256 over every experiment's meta.json, as written: each records its tables'
    checksums, so a change to any published number changes this."""
    return metas_hash({name: (Path(root) / name / META).read_bytes() for name in experiment_names(root)})


def metas_hash(metas: dict[str, bytes]) -> str:
    """``data_hash`` of meta.json texts already read (experiment -> bytes): a build hashes
    the snapshot it renders, never a second read of the folder."""
    h = hashlib.sha256()
    for name in sorted(metas):
        h.update(name.encode())
        h.update(metas[name])
    return h.hexdigest()[:16]


def code_cells(notebook: dict) -> list[str]:
    """The code cells' sources; a raw .ipynb may hold a source as a list of lines."""
    sources = [cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return ["".join(s) if isinstance(s, list) else s for s in sources]


def notebook_code_hash(notebook: dict) -> str:
    """sha256 over the notebook's code cells, in order: what ran, not the words around it."""
    h = hashlib.sha256()
    for source in code_cells(notebook):
        h.update(source.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


# What a reader of the code reads and the interpreter does not: an edition writes its own.
_WORDS_ONLY = {tokenize.COMMENT, tokenize.NL}
_LINE_STARTS = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.COMMENT}


def _tokens(source: str) -> list[tuple[int, str, bool]]:
    """(kind, text, free) of a code cell's tokens, comments left out. ``free``: a string
    literal that is a statement of its own (a docstring), words for the reader alone.
    A cell Python cannot read as tokens is one token, its whole text."""
    try:
        found = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.ENDMARKER]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [(tokenize.ERRORTOKEN, source, False)]
    out: list[tuple[int, str, bool]] = []
    for i, t in enumerate(found):
        if t.type in _WORDS_ONLY:
            continue
        before = next((p.type for p in reversed(found[:i]) if p.type not in (tokenize.COMMENT, tokenize.NL)), None)
        after = next((n.type for n in found[i + 1 :] if n.type not in (tokenize.COMMENT, tokenize.NL)), None)
        free = t.type == tokenize.STRING and (before is None or before in _LINE_STARTS) and after == tokenize.NEWLINE
        out.append((t.type, t.string, free))
    return out


def _value(literal: str) -> str | None:
    """A plain string literal's text; None for an f-string or bytes (code, not words)."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def literal_pairs(english: str, edition: str) -> list[tuple[str, str]] | None:
    """The (English, edition) texts of every plain string literal of an edition's code cell
    beside the English one's, docstrings aside; None where the code itself differs
    (another token, an f-string or a number changed, a statement added)."""
    ours, theirs = _tokens(english), _tokens(edition)
    if len(ours) != len(theirs):
        return None
    out = []
    for (kind, text, free), (kind2, text2, free2) in zip(ours, theirs, strict=True):
        if kind != kind2 or free != free2:
            return None
        if free or kind != tokenize.STRING and text == text2:
            continue
        pair = (_value(text), _value(text2)) if kind == tokenize.STRING else (None, None)
        if pair[0] is None or pair[1] is None:
            if text == text2:  # an f-string or bytes, as the English cell has it
                continue
            return None
        out.append(pair)
    return out


def staleness(notebook: dict, data: str, english: dict | None = None) -> str | None:
    """Why a notebook's outputs cannot stand beside the data whose hash is ``data``, or
    None: executed against other data, its code changed since, or, for an edition, code
    cells other than its ``english`` notebook's in their own words (literal_pairs)."""
    stamp = notebook.get("metadata", {}).get(NOTEBOOK_KEY, {})
    if stamp.get("data") != data:
        return " was executed against other data than site_data/ holds now"
    if english is None and stamp.get("code") != notebook_code_hash(notebook):
        return ": its code changed since it was executed"
    if english is not None and stamp.get("code") != notebook_code_hash(english):
        return ": its code changed since it was executed, or its English notebook's did"
    if english is not None and not same_code(english, notebook):
        return ": its code cells differ from its English notebook's beyond comments and words"
    return None


def same_code(english: dict, edition: dict) -> bool:
    """Whether an edition's code cells are the English notebook's, cell by cell, in the
    edition's words (literal_pairs)."""
    ours, theirs = code_cells(english), code_cells(edition)
    return len(ours) == len(theirs) and all(literal_pairs(a, b) is not None for a, b in zip(ours, theirs, strict=True))
