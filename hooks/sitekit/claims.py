"""Claims: sentences of the prose checked against site_data when the site is built.

A claim is defined once, by name, in its experiment's claims file (claim_files.py), as a
small expression over the data; a page names it and writes its own sentence::

    [every_cache_matches_formula]                       # cache_size/claims.toml
    check = "all(column('cache_size.measured', 'matches_formula'))"

    {{ claim('cache_size.every_cache_matches_formula', 'every cache equals the formula') }}

The expression is parsed with ``ast`` (claim_syntax.py, within its bounds) and evaluated
by a small interpreter (no ``eval``): ``experiment.value`` names a value from meta.json;
``cell(table, column, where={...})`` one cell; ``column(table, column, where={...})`` a
whole column as a list; plus literals, arithmetic, comparisons, ``and``/``or``
(short-circuit)/``not`` and ``all any min max abs len sum sorted round``.

A claim that does not hold fails the build, naming the page, the claim and the
numbers. Claims about hardware-bound numbers (``hardware = true``) may legitimately not
hold on another machine: they render a visible warning on the page instead.
"""

from __future__ import annotations

import ast
from typing import Any

from sitekit import escape
from sitekit.claim_files import Claim
from sitekit.claim_syntax import BINARY, COMPARISONS, FUNCTIONS, MAX_MARKER, ClaimError, parse, sized
from sitekit.i18n import _
from sitekit.pagedata import SiteData, SiteDataError

__all__ = ["CALLS", "MAX_MARKER", "ClaimError", "Evaluator", "check", "parse", "render"]

# the functions a claim may call: the data's, then Python's few (claim_syntax.FUNCTIONS)
CALLS = frozenset({"column", "cell", *FUNCTIONS})


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


class Evaluator:
    """Evaluates one claim expression, recording every datum it read."""

    def __init__(self, data: SiteData) -> None:
        self.data = data
        self.read: dict[str, Any] = {}

    def column(self, ref: str, col: str, where: dict | None = None) -> list:
        t = self.data.table(ref)
        t.column(col)
        values = [_plain(v) for v in t.rows(where)[col].tolist()]
        if not values:
            raise SiteDataError(f"column {ref}.{col} where {where} is empty")
        self.read[f"{ref}.{col}" + (f" {where}" if where else "")] = values
        return values

    def cell(self, ref: str, col: str, where: dict | None = None) -> Any:
        v, _ = self.data.cell(ref, col, where)
        v = _plain(v)
        self.read[f"{ref}.{col}" + (f" {where}" if where else "")] = v
        return v

    def eval(self, node: ast.AST) -> Any:
        """The value of ``node``; whatever goes wrong in Python's arithmetic or functions
        is one ClaimError naming the expression (a missing datum stays SiteDataError)."""
        try:
            return self._eval(node)
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, RecursionError, MemoryError) as e:
            raise ClaimError(f"{escape.cut(ast.unparse(node), 200, note=False)}: {type(e).__name__}: {e}") from None

    def _eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return self._eval(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return sized([self._eval(e) for e in node.elts])
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise ClaimError("unpacking a dictionary ({**...}) refused")
            return sized({self._eval(k): self._eval(v) for k, v in zip(node.keys, node.values, strict=True)})
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            ref = f"{node.value.id}.{node.attr}"
            v = self.data.value(ref)["value"]
            self.read[ref] = v
            return v
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            try:
                return sized(BINARY[type(node.op)](self._eval(node.left), self._eval(node.right)))
            except (ArithmeticError, TypeError) as e:
                raise ClaimError(f"{escape.cut(ast.unparse(node), 200, note=False)}: {e}") from None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            v = self._eval(node.operand)
            return not v if isinstance(node.op, ast.Not) else -v
        if isinstance(node, ast.BoolOp):
            # Short-circuit as Python does, so a guard can protect what follows it:
            # ``x.available and x.speedup >= 1`` never compares a missing speed-up.
            stop = isinstance(node.op, ast.Or)
            for v in node.values:
                if bool(self._eval(v)) == stop:
                    return stop
            return not stop
        if isinstance(node, ast.Compare) and all(type(op) in COMPARISONS for op in node.ops):
            left = self._eval(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._eval(right_node)
                if not COMPARISONS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if any(k.arg is None for k in node.keywords):
                raise ClaimError("unpacking keyword arguments (**...) refused")
            args = [self._eval(a) for a in node.args]
            kwargs = {k.arg: self._eval(k.value) for k in node.keywords}
            if node.func.id == "column":
                return self.column(*args, **kwargs)
            if node.func.id == "cell":
                return self.cell(*args, **kwargs)
            if node.func.id in FUNCTIONS:
                return sized(FUNCTIONS[node.func.id](*args, **kwargs))
        raise ClaimError(f"unsupported expression: {escape.cut(ast.unparse(node), 200, note=False)}")


def check(data: SiteData, expr: str) -> tuple[bool, dict[str, Any]]:
    """(holds, data read) for one claim expression."""
    tree = parse(expr)
    ev = Evaluator(data)
    return bool(ev.eval(tree)), ev.read


def _numbers(read: dict[str, Any]) -> str:
    """What a claim read, for its tooltip and its failure: lists cut to eight items and
    every datum to a bound, so that a long text in the data cannot make a long page."""

    def short(v):
        if isinstance(v, list) and len(v) > 8:
            return f"[{', '.join(escape.cut(x, note=False) for x in v[:8])}, ...]"
        if isinstance(v, list):
            return f"[{', '.join(escape.cut(repr(x), note=False) for x in v)}]"
        return escape.cut(v, note=False)

    return "; ".join(f"{escape.cut(k, 200, note=False)} = {short(v)}" for k, v in read.items())


def render(data: SiteData, page: str, claim: Claim, text: str) -> str:
    """The page's sentence with its mark: ✓ with what was checked in its tooltip, or, for a
    claim about this hardware that does not hold here, ⚠ and the numbers; any other
    claim that does not hold fails the build."""
    expr = claim.expression
    holds, read = check(data, expr)
    if holds:
        title = escape.attribute(
            _("Checked when this page was built: {expression}").format(expression=f"{claim.id}: {expr}")
            + f"  [{_numbers(read)}]",
            None,
        )
        return f'{text}<sup class="claim claim-ok" title="{title}">✓</sup>'
    message = f"claim {text!r} does not hold: {claim.id} = {expr} with {_numbers(read)}"
    if not claim.hardware:
        raise ClaimError(f"{page}: {message}")
    return (
        f'{text}<sup class="claim claim-failed" title="{escape.attribute(f"{claim.id}: {expr}", None)}">⚠</sup> '
        f'<span class="claim-warning">('
        + escape.text(
            _("not borne out by this run's measurements on this hardware: {values}").format(values=_numbers(read)),
            None,
        )
        + ")</span>"
    )
