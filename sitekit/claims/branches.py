"""Prose that reads right whichever way this run's data came out::

    <!-- if prefill_decode.decode_flat -->
    ...
    <!-- elif prefill_decode.decode_rises -->
    ...
    <!-- else -->
    ...
    <!-- end -->

Each condition is a claim's id (claim_files.py). Every condition of a block is
evaluated, so that none goes unchecked; the first that holds keeps its text, else the
``else`` text, else nothing. Blocks do not nest. A claim named in a clause this run did
not keep is still the page's: its id must be defined, and it counts as used (its check is
decided in the run whose data keeps that clause).
"""

from __future__ import annotations

import ast
import re

from sitekit.claims import claims
from sitekit.claims.claim_syntax import MAX_MARKER, parse
from sitekit.rendering import escape
from sitekit.rendering.context import PageContext
from sitekit.rendering.pagedata import SiteDataError

BLOCK = re.compile(r"<!--\s*if\s+(?P<cond>.+?)\s*-->\n?(?P<body>.*?)<!--\s*end\s*-->\n?", re.DOTALL)
CLAUSE = re.compile(r"<!--\s*(?:elif\s+(?P<cond>.+?)|else)\s*-->\n?", re.DOTALL)
MARKER = re.compile(r"\{\{\s*(.+?)\s*\}\}")  # as markers.py reads them


class BranchError(Exception):
    pass


def clauses(match: re.Match) -> list[tuple[str | None, str]]:
    """(condition, text) of each clause of a block, in order; ``else`` has no condition."""
    out: list[tuple[str | None, str]] = []
    cond: str | None = match.group("cond")
    body, pos = match.group("body"), 0
    for m in CLAUSE.finditer(body):
        if cond is None:
            raise BranchError(f"<!-- {'elif' if m.group('cond') else 'else'} --> after <!-- else -->")
        out.append((cond, body[pos : m.start()]))
        cond, pos = m.group("cond"), m.end()
    out.append((cond, body[pos:]))
    return out


def name_claims(text: str, ctx: PageContext) -> None:
    """Records the claims ``text`` names (``{{ claim('exp.name', ...) }}``) without
    rendering them: each id must be defined."""
    for m in MARKER.finditer(text):
        node = parse(m.group(1), "marker", MAX_MARKER).body
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "claim":
            ref = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "ref")]
            if ref and isinstance(ref[0], ast.Constant):
                ctx.claim(ref[0].value)


def choose_branches(markdown: str, ctx: PageContext) -> str:
    def pick(match: re.Match) -> str:
        where = f"<!-- if {escape.cut(match.group('cond'), 120, note=False)} -->"
        try:
            kept = None
            for cond, text in clauses(match):
                # a claim within this machine's noise keeps no clause of its own
                holds = True if cond is None else claims.check(ctx.data, ctx.claim(cond).expression)[0] is True
                if holds and kept is None:
                    kept = text
                else:
                    name_claims(text, ctx)
        except (BranchError, claims.ClaimError, SiteDataError, KeyError, TypeError, ValueError) as e:
            raise BranchError(f"{ctx.page}: {where}: {e}") from None
        return kept or ""

    return BLOCK.sub(pick, markdown)
