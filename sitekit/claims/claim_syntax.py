"""The language of claims and markers: an expression parsed with ``ast`` within bounds on
its length, its terms and its nesting, and the operations it may use, each bounded
before the work it bounds. claims.py evaluates it over site_data; markers.py reads a
marker's arguments with it."""

from __future__ import annotations

import ast
import functools
import math
import operator
from typing import Any

from sitekit.rendering import escape

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


def sized(v: Any) -> Any:
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


BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: _mod,
    ast.Pow: _pow,
}
COMPARISONS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
FUNCTIONS = {
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
    are within their bounds: each refusal is one ClaimError line naming the bound. The
    tree is read, never changed, and each expression parsed once (five editions ask)."""
    if not isinstance(expr, str):
        raise ClaimError(f"a {what} must be text, not {_short(expr)}")
    return _parse(expr, what, limit)


@functools.lru_cache(maxsize=4096)
def _parse(expr: str, what: str, limit: int) -> ast.Expression:
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


def supported(node: ast.AST, calls: frozenset[str]) -> None:
    """Refuses, before anything is evaluated, every term the evaluator would refuse on
    reaching it (a claims file is checked whole when it is read, not branch by branch)."""
    if isinstance(node, ast.Expression):
        return supported(node.body, calls)
    ok = (
        isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.BoolOp))
        or (isinstance(node, ast.Dict) and None not in node.keys)
        or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))
        or (isinstance(node, ast.BinOp) and type(node.op) in BINARY)
        or (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)))
        or (isinstance(node, ast.Compare) and all(type(op) in COMPARISONS for op in node.ops))
        or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in calls
            and all(k.arg is not None for k in node.keywords)
        )
    )
    if not ok:
        raise ClaimError(f"unsupported expression: {escape.cut(ast.unparse(node), 200, note=False)}")
    if isinstance(node, ast.Attribute):
        return None
    children = [*node.args, *(k.value for k in node.keywords)] if isinstance(node, ast.Call) else []
    for child in children or [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]:
        supported(child, calls)
    return None
