"""Claims: sentences of the prose checked against site_data when the site is built.

A claim is a small expression over the data, e.g.::

    {{ claim("kv_cache.tokens_identical", "the two token streams are identical") }}
    {{ claim("all(column('cache_size.measured', 'matches_formula'))", "every cache equals the formula") }}
    {{ claim("max(column('prefill_decode.decode', 'step_ms')) < 1.3 * min(column('prefill_decode.decode', 'step_ms'))",
             "decode time is flat in context", hardware=True) }}

The expression is parsed with ``ast`` and evaluated by a small interpreter (no
``eval``): ``experiment.value`` names a value from meta.json; ``cell(table, column,
where={...})`` one cell; ``column(table, column, where={...})`` a whole column as a list;
plus literals, arithmetic, comparisons, ``and``/``or`` (short-circuit)/``not`` and ``all any min max abs
len sum sorted round``.

A claim that does not hold fails the build, naming the page, the claim and the
numbers. Claims about hardware-bound numbers (``hardware=True``) may legitimately not
hold on another machine: they render a visible warning on the page instead.
"""

from __future__ import annotations

import ast
import html
import operator
from typing import Any

from sitekit.i18n import _
from sitekit.pagedata import SiteData, SiteDataError

# Bounds that keep a claim from running away (``9**9**9``, ``'x' * 10**9``): a claim
# compares measured numbers; it never needs a huge power or a long repeated sequence.
MAX_EXPONENT = 64
MAX_SEQUENCE = 10_000


class ClaimError(Exception):
    pass


def _pow(a: Any, b: Any) -> Any:
    if not isinstance(b, (int, float)) or isinstance(b, bool) or abs(b) > MAX_EXPONENT:
        raise ClaimError(f"exponent {b!r} refused: claims allow powers up to {MAX_EXPONENT}")
    if isinstance(a, int) and isinstance(b, int) and abs(a) > 2**64:
        raise ClaimError("power of a huge integer refused")
    return operator.pow(a, b)


def _mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_SEQUENCE:
            raise ClaimError(f"repeating a sequence to more than {MAX_SEQUENCE} items refused")
    return operator.mul(a, b)


_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _pow,
}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_FUNCS = {
    "all": all,
    "any": any,
    "min": min,
    "max": max,
    "abs": abs,
    "len": len,
    "sum": sum,
    "sorted": sorted,
    "round": round,
}


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
        if isinstance(node, ast.Expression):
            return self.eval(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            ref = f"{node.value.id}.{node.attr}"
            v = self.data.value(ref)["value"]
            self.read[ref] = v
            return v
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            try:
                return _BIN[type(node.op)](self.eval(node.left), self.eval(node.right))
            except (ArithmeticError, TypeError) as e:
                raise ClaimError(f"{ast.unparse(node)}: {e}") from None
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand)
            if isinstance(node.op, ast.Not):
                return not v
            if isinstance(node.op, ast.USub):
                return -v
        if isinstance(node, ast.BoolOp):
            # Short-circuit as Python does, so a guard can protect what follows it:
            # ``x.available and x.speedup >= 1`` never compares a missing speed-up.
            stop = isinstance(node.op, ast.Or)
            for v in node.values:
                if bool(self.eval(v)) == stop:
                    return stop
            return not stop
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self.eval(right_node)
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = [self.eval(a) for a in node.args]
            kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
            if node.func.id == "column":
                return self.column(*args, **kwargs)
            if node.func.id == "cell":
                return self.cell(*args, **kwargs)
            if node.func.id in _FUNCS:
                return _FUNCS[node.func.id](*args, **kwargs)
        raise ClaimError(f"unsupported expression: {ast.unparse(node)}")


def check(data: SiteData, expr: str) -> tuple[bool, dict[str, Any]]:
    """(holds, data read) for one claim expression."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ClaimError(f"cannot parse claim {expr!r}: {e.msg}") from None
    ev = Evaluator(data)
    return bool(ev.eval(tree)), ev.read


def _numbers(read: dict[str, Any]) -> str:
    def short(v):
        if isinstance(v, list) and len(v) > 8:
            return f"[{', '.join(map(str, v[:8]))}, ...]"
        return str(v)

    return "; ".join(f"{k} = {short(v)}" for k, v in read.items())


def render(data: SiteData, page: str, expr: str, text: str, hardware: bool = False) -> str:
    holds, read = check(data, expr)
    if holds:
        title = html.escape(
            _("Checked when this page was built: {expression}").format(expression=expr) + f"  [{_numbers(read)}]"
        )
        return f'{text}<sup class="claim claim-ok" title="{title}">✓</sup>'
    message = f"claim {text!r} does not hold: {expr} with {_numbers(read)}"
    if not hardware:
        raise ClaimError(f"{page}: {message}")
    return (
        f'{text}<sup class="claim claim-failed" title="{html.escape(expr)}">⚠</sup> '
        f'<span class="claim-warning">('
        + html.escape(
            _("not borne out by this run's measurements on this hardware: {values}").format(values=_numbers(read))
        )
        + ")</span>"
    )
