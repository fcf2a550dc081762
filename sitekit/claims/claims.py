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
(short-circuit)/``not`` and ``all any min max abs len sum sorted round``; and the
words for timings, which decide on intervals and may answer "within this machine's
noise" (intervals.py): ``interval faster within_noise increasing flat inside_band
below``, and against a smallest effect that matters ``exceeds undercuts same faster_by
same_time``.

A claim whose sentence a page shows and that does not hold fails the build, naming the
page, the claim and the numbers: a sentence is never printed with a mark saying it is
wrong. Claims about hardware-bound numbers (``hardware = true``) may legitimately not
hold on another machine, so their sentences sit in branches for every outcome
(branches.py), and the run's data picks the branch.
"""

from __future__ import annotations

import ast
import inspect
import re
import weakref
from typing import Any

from sitekit.claims import claim_legend, intervals
from sitekit.claims.claim_files import Claim
from sitekit.claims.claim_syntax import BINARY, COMPARISONS, FUNCTIONS, MAX_MARKER, ClaimError, parse, sized
from sitekit.claims.intervals import NOISE, Interval
from sitekit.language import statuses
from sitekit.rendering import escape
from sitekit.rendering.pagedata import SiteData, SiteDataError

__all__ = ["CALLS", "MAX_MARKER", "NOISE", "ClaimError", "Evaluator", "check", "numbers", "parse", "render"]

# the words for timings that need only their arguments (the others read the data)
INTERVAL_WORDS = {
    "faster": intervals.faster,
    "within_noise": intervals.within_noise,
    "inside_band": intervals.inside_band,
    "below": intervals.below,
    "exceeds": intervals.exceeds,
    "undercuts": intervals.undercuts,
    "same": intervals.same,
    "faster_by": intervals.faster_by,
    "same_time": intervals.same_time,
}
DATA_CALLS = ("column", "cell", "interval", "increasing", "flat")
# the functions a claim may call: the data's, the timings', then Python's few (claim_syntax.FUNCTIONS)
CALLS = frozenset({*DATA_CALLS, *INTERVAL_WORDS, *FUNCTIONS})


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

    def _interval_of(self, t, col: dict, row) -> Interval:
        bounds = col.get("noise", {}).get("interval")
        if not bounds:
            raise SiteDataError(f"column {t.experiment}.{t.name}.{col['name']} declares no interval")
        return Interval(*(float(_plain(row[c])) for c in (col["name"], *bounds)))

    def interval(self, ref: str, col: str, where: dict | None = None) -> Interval:
        """One cell's median with its column's declared 95 % interval."""
        t = self.data.table(ref)
        bounds = t.column(col).get("noise", {}).get("interval")
        if not bounds:
            raise SiteDataError(f"column {t.experiment}.{t.name}.{col} declares no interval")
        v = Interval(*(float(_plain(self.data.cell(ref, c, where)[0])) for c in (col, *bounds)))
        self.read[f"{ref}.{col}" + (f" {where}" if where else "")] = v
        return v

    def _series(self, ref: str, col: str, by: str, where: dict | None) -> tuple[list, list[Interval]]:
        t = self.data.table(ref)
        column = t.column(col)
        t.column(by)
        frame = t.rows(where).sort_values(by)
        if frame.empty:
            raise SiteDataError(f"column {ref}.{col} where {where} is empty")
        points = [self._interval_of(t, column, row) for _, row in frame.iterrows()]
        xs = [_plain(x) for x in frame[by].tolist()]
        self.read[f"{ref}.{col} by {by}" + (f" {where}" if where else "")] = [
            f"{x}: {p!r}" for x, p in zip(xs, points, strict=True)
        ]
        return xs, points

    def increasing(self, ref: str, col: str, by: str, where: dict | None = None) -> Any:
        return intervals.increasing(self._series(ref, col, by, where)[1])

    def flat(self, ref: str, col: str, by: str, within: float = 0.05, where: dict | None = None) -> Any:
        xs, points = self._series(ref, col, by, where)
        rate, low, high = intervals.per_doubling(xs, points)
        self.read[f"change per doubling of {by}"] = f"{rate:+.1%} [{low:+.1%}, {high:+.1%}], band ±{within:.0%}"
        return intervals.flat(xs, points, within)

    def eval(self, node: ast.AST) -> Any:
        """The value of ``node``; whatever goes wrong in Python's arithmetic or functions
        is one ClaimError naming the expression (a missing datum stays SiteDataError)."""
        try:
            return self._eval(node)
        except intervals.ClaimNoiseError as e:
            raise ClaimError(f"{escape.cut(ast.unparse(node), 200, note=False)}: {e}") from None
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
            return intervals.kleene_not(v) if isinstance(node.op, ast.Not) else -v
        if isinstance(node, ast.BoolOp):
            # Short-circuit as Python does, so a guard can protect what follows it:
            # ``x.available and x.speedup >= 1`` never compares a missing speed-up;
            # three-valued where a timing word answered NOISE.
            return intervals.kleene(node.values, isinstance(node.op, ast.Or), self._eval)
        if isinstance(node, ast.Compare) and all(type(op) in COMPARISONS for op in node.ops):
            left = self._eval(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._eval(right_node)
                if left is NOISE or right is NOISE:
                    raise intervals.ClaimNoiseError("a result within this machine's noise cannot be compared")
                if not COMPARISONS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if any(k.arg is None for k in node.keywords):
                raise ClaimError("unpacking keyword arguments (**...) refused")
            args = [self._eval(a) for a in node.args]
            kwargs = {k.arg: self._eval(k.value) for k in node.keywords}
            if node.func.id in DATA_CALLS:
                call = getattr(self, node.func.id)
                where = inspect.signature(call).bind(*args, **kwargs).arguments.get("where")  # TypeError: caught
                if where is not None and not isinstance(where, dict):
                    shown = escape.cut(repr(where), 60, note=False)
                    raise ClaimError(f"{node.func.id}(): where must be a {{column: value}} dictionary, not {shown}")
                return call(*args, **kwargs)
            if node.func.id in INTERVAL_WORDS:
                return INTERVAL_WORDS[node.func.id](*args, **kwargs)
            if node.func.id in FUNCTIONS:
                return sized(FUNCTIONS[node.func.id](*args, **kwargs))
        raise ClaimError(f"unsupported expression: {escape.cut(ast.unparse(node), 200, note=False)}")


# Each expression's outcome, decided once per data folder: five editions ask the same claims.
_decided: weakref.WeakKeyDictionary[SiteData, dict[str, tuple[Any, dict[str, Any]]]] = weakref.WeakKeyDictionary()


def check(data: SiteData, expr: str) -> tuple[Any, dict[str, Any]]:
    """(True, False or NOISE, data read) for one claim expression. A page's view of the
    data (context.ReadData) notes the experiments the expression names; the outcome is
    decided once for the data folder behind it."""
    inner = getattr(data, "inner", data)
    if inner is not data:
        for ref in re.findall(r"\b([a-z][a-z0-9_]*)\.[a-z][a-z0-9_]*", expr):
            if ref in inner.experiments:
                data.note(ref)
    decided = _decided.setdefault(inner, {})
    if expr not in decided:
        decided[expr] = _decide(inner, expr)
    return decided[expr]


def _decide(data: SiteData, expr: str) -> tuple[Any, dict[str, Any]]:
    tree = parse(expr)
    ev = Evaluator(data)
    result = ev.eval(tree)
    try:
        return (result if result is NOISE else bool(result)), ev.read
    except (TypeError, ValueError) as e:  # a value with no truth of its own (an interval)
        raise ClaimError(f"{escape.cut(expr, 200, note=False)}: {type(e).__name__}: {e}") from None


def numbers(read: dict[str, Any]) -> str:
    """What a claim read, for its tooltip and its failure: lists cut to eight items,
    every datum to a bound, so that a long text in the data cannot make a long page, and
    a float to the six significant digits that decide any comparison a reader can check."""

    def one(x):
        return f"{x:.6g}" if isinstance(x, float) else statuses.in_words(x)

    def short(v):
        if isinstance(v, list) and len(v) > 8:
            return f"[{', '.join(escape.cut(one(x), note=False) for x in v[:8])}, ...]"
        if isinstance(v, list):
            return f"[{', '.join(escape.cut(one(x) if isinstance(x, float) else repr(x), note=False) for x in v)}]"
        return escape.cut(one(v), note=False)

    return "; ".join(f"{escape.cut(k, 200, note=False)} = {short(v)}" for k, v in read.items())


def render(data: SiteData, page: str, claim: Claim, text: str, checks: dict | None = None) -> str:
    """The page's sentence with its mark: ✓ where it holds; ≈ and "within this machine's
    noise" where the intervals cannot tell (NOISE: branches.py allows it only in a clause
    for that outcome). The mark says in words what it means and leads to the check itself,
    with the numbers it read, in the page's list of checks (``checks``, claim_legend.py). A
    claim that does not hold fails the build: its sentence is never printed."""
    expr = claim.expression
    holds, read = check(data, expr)
    if holds is not NOISE and not holds:
        raise ClaimError(f"{page}: claim {text!r} does not hold: {claim.id} = {expr} with {numbers(read)}")
    state = "noise" if holds is NOISE else "ok"
    if checks is not None:
        checks.setdefault(claim.id, claim_legend.Check(state, expr, numbers(read), text))
    return claim_legend.mark(state, claim.id, text)
