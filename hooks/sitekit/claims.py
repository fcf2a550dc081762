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
import math
import operator
from typing import Any

from sitekit import escape
from sitekit.i18n import _
from sitekit.pagedata import SiteData, SiteDataError

# Bounds on what a claim may cost, each checked before the work it bounds (``9**9**9``,
# ``'x' * 10**9``, ``'%0999999999d' % 1``, a thousand nested ``not``): a claim compares
# measured numbers; it never needs a huge power, a long sequence or a deep expression.
MAX_EXPONENT = 64
MAX_SEQUENCE = 10_000  # items (nested ones counted) of any list or characters of any text it makes
MAX_LENGTH = 2_000  # characters of a claim's expression
MAX_MARKER = 4_000  # characters of a marker, a claim's sentence with it
MAX_NODES = 500  # terms of its syntax tree
MAX_DEPTH = 50  # nesting of its syntax tree
MAX_DIGITS = 30  # round()'s digits


class ClaimError(Exception):
    pass


def _short(v: Any) -> str:
    try:
        return escape.cut(repr(v), 60, note=False)
    except ValueError:  # an integer past Python's digits for text
        return "an integer of thousands of digits"


def _size(v: Any) -> int:
    """Items in ``v``, nested ones counted (a text's characters), stopping past the bound."""
    count, stack = 0, [v]
    while stack and count <= MAX_SEQUENCE:
        x = stack.pop()
        if isinstance(x, (str, bytes)):
            count += max(1, len(x))
        elif isinstance(x, (list, tuple, dict)) and x:
            stack.extend(list(x.items()) if isinstance(x, dict) else x)
        else:
            count += 1
    return count


def _sized(v: Any) -> Any:
    if isinstance(v, (str, bytes, list, tuple, dict)) and _size(v) > MAX_SEQUENCE:
        raise ClaimError(f"a sequence of more than {MAX_SEQUENCE} items refused")
    return v


def _pow(a: Any, b: Any) -> Any:
    if not isinstance(b, (int, float)) or isinstance(b, bool) or abs(b) > MAX_EXPONENT:
        raise ClaimError(f"exponent {_short(b)} refused: claims allow powers up to {MAX_EXPONENT}")
    if isinstance(a, int) and isinstance(b, int) and abs(a) > 2**64:
        raise ClaimError("power of a huge integer refused")
    return operator.pow(a, b)


def _mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and _size(seq) * n > MAX_SEQUENCE:
            raise ClaimError(f"repeating a sequence to more than {MAX_SEQUENCE} items refused")
    return operator.mul(a, b)


def _mod(a: Any, b: Any) -> Any:
    if isinstance(a, (str, bytes)):
        raise ClaimError("formatting text with % refused: claims compare numbers")
    return operator.mod(a, b)


def _sum(values: Any, start: Any = 0) -> Any:
    if not isinstance(start, (int, float)):
        raise ClaimError(f"sum starting from {_short(start)} refused: claims add numbers")
    return sum(values, start)


def _round(x: Any, digits: Any = None) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        raise ClaimError(f"round({x}) refused: not a finite number")
    if digits is not None and (not isinstance(digits, int) or abs(digits) > MAX_DIGITS):
        raise ClaimError(f"round to {_short(digits)} digits refused: claims round to at most {MAX_DIGITS}")
    return round(x, digits)


_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: _mod,
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
    "sum": _sum,
    "sorted": sorted,
    "round": _round,
}


def parse(expr: Any, what: str = "claim", limit: int = MAX_LENGTH) -> ast.Expression:
    """A claim's (or a marker's) syntax tree, once its length, its terms and its nesting
    are within their bounds: each refusal is one ClaimError line naming the bound."""
    if not isinstance(expr, str):
        raise ClaimError(f"a {what} must be text, not {_short(expr)}")
    if len(expr) > limit:
        raise ClaimError(f"a {what} of {len(expr):,} characters refused: at most {limit:,}")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ClaimError(f"cannot parse {what} {escape.cut(expr, 200, note=False)!r}: {e.msg}") from None
    except (RecursionError, MemoryError, ValueError) as e:
        raise ClaimError(f"cannot parse {what}: {type(e).__name__}") from None
    nodes, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise ClaimError(f"a {what} of more than {MAX_NODES} terms refused")
        if depth > MAX_DEPTH:
            raise ClaimError(f"a {what} nested more than {MAX_DEPTH} deep refused")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


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
            return _sized([self._eval(e) for e in node.elts])
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise ClaimError("unpacking a dictionary ({**...}) refused")
            return _sized({self._eval(k): self._eval(v) for k, v in zip(node.keys, node.values, strict=True)})
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            ref = f"{node.value.id}.{node.attr}"
            v = self.data.value(ref)["value"]
            self.read[ref] = v
            return v
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            try:
                return _sized(_BIN[type(node.op)](self._eval(node.left), self._eval(node.right)))
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
        if isinstance(node, ast.Compare) and all(type(op) in _CMP for op in node.ops):
            left = self._eval(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._eval(right_node)
                if not _CMP[type(op)](left, right):
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
            if node.func.id in _FUNCS:
                return _sized(_FUNCS[node.func.id](*args, **kwargs))
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


def render(data: SiteData, page: str, expr: str, text: str, hardware: bool = False) -> str:
    holds, read = check(data, expr)
    if holds:
        title = escape.attribute(
            _("Checked when this page was built: {expression}").format(expression=expr) + f"  [{_numbers(read)}]",
            None,
        )
        return f'{text}<sup class="claim claim-ok" title="{title}">✓</sup>'
    message = f"claim {text!r} does not hold: {expr} with {_numbers(read)}"
    if not hardware:
        raise ClaimError(f"{page}: {message}")
    return (
        f'{text}<sup class="claim claim-failed" title="{escape.attribute(expr, None)}">⚠</sup> '
        f'<span class="claim-warning">('
        + escape.text(
            _("not borne out by this run's measurements on this hardware: {values}").format(values=_numbers(read)),
            None,
        )
        + ")</span>"
    )
