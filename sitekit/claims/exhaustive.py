"""Whether a block of branches has a clause for whatever a run finds, so that it needs no
``else``.

A page often asks one interval three ways: larger by more than the margin, smaller by
more, practically the same, and, where the interval straddles an edge, cannot tell::

    <!-- if x.rose -->...<!-- elif x.fell -->...<!-- elif x.flat -->...
    <!-- elif unsure x.flat -->...<!-- end -->

Whatever the interval, one of those clauses is met (``same`` is ``NOISE`` exactly when
none of the three holds), so an ``else`` would never be shown. This module proves such a
block complete without trusting the page's intent: it tries every outcome its claims
could meet and checks that some clause is met in each.

- A question is the arguments of a call to one of ``WORDS``, all deciding one interval of
  a ratio (1 is no difference) against a margin or a limit. Its interval is placed at
  every position that matters against the edges: wholly inside, wholly outside on either
  side, across either edge or both, exactly on one.
- Where a question names its interval's two ends (``exceeds(lo, hi, m)``...), each end is
  placed on its own, at every point that matters, low end at or below high end; an end
  two questions name (against the same margin or limit) is one value, and ``min(c)`` is
  at or below ``max(c)``. So a block that asks the envelope of a column's ranges one way
  and its extreme rows another is proved as its data allows (the arrivals' throughputs).
- Anything else a claim tests is an atom: true or false, or also ``NOISE`` where it
  calls a word other than PLAIN (``increasing``, ``faster``...). ``a != b`` is
  ``not a == b`` and ``a not in b`` is ``not a in b``, so that a test and its opposite
  are one atom.
- The clauses the block sits in are met (``within``), so their claims' outcomes hold.

Questions and atoms are tried independently, including combinations no data could give
(the order of a column's min and max, and of an interval's ends, aside), so the proof
never passes a block that some run could leave without a clause; a block it cannot prove
keeps needing its ``else``.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
from collections.abc import Callable, Iterable

from sitekit.claims import intervals
from sitekit.claims.claim_syntax import FUNCTIONS
from sitekit.claims.intervals import NOISE, kleene, kleene_not

MARGIN = 0.05  # any margin would do: the edges move with it, and the positions with them
# Each word as a function of its question's interval; faster_by(a, b, m) and
# same_time(a, b, m) decide on the range of b / a, below on a limit taken here as 1.
WORDS: dict[str, Callable[[float, float], object]] = {
    "exceeds": lambda lo, hi: intervals.exceeds(lo, hi, MARGIN),
    "undercuts": lambda lo, hi: intervals.undercuts(lo, hi, MARGIN),
    "same": lambda lo, hi: intervals.same(lo, hi, MARGIN),
    "faster_by": lambda lo, hi: intervals.exceeds(lo, hi, MARGIN),
    "same_time": lambda lo, hi: intervals.same(lo, hi, MARGIN),
    "below": lambda lo, hi: intervals.below(lo, hi, 1.0),
}
TWO_TIMINGS = frozenset({"faster_by", "same_time"})
_STEP = 1e-3
_EDGES = (1 / (1 + MARGIN), 1.0, 1 + MARGIN)
_POINTS = sorted({0.5, 2.0} | {edge + d for edge in _EDGES for d in (-_STEP, 0.0, _STEP)})
POSITIONS = [(lo, hi) for i, lo in enumerate(_POINTS) for hi in _POINTS[i:]]
# calls that read data or compute with it, never NOISE; any other word may be (increasing, faster...)
PLAIN = frozenset({"column", "cell", "interval", *FUNCTIONS})
# the most placements of questions and ends tried (atoms multiply them further): two
# questions of two timings, or four ends
MAX_PLACEMENTS = 15_000
PLACED = frozenset({"question", "end"})
# what each kind of thing a check asks may be: an interval, an end, or an atom's value
CHOICES = {"question": POSITIONS, "end": _POINTS, "atom3": (True, False, NOISE), "atom": (True, False)}


def _asked(node: ast.AST) -> tuple[list[str], bool] | None:
    """A call of WORDS with its three arguments: those, and whether they are two timings
    swapped (``b, a`` where another claim may ask ``a, b``: in the order their dumps
    sort); else None (an atom, which may not tell)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WORDS):
        return None
    if node.keywords or len(node.args) != 3:
        return None
    args = [ast.dump(a) for a in node.args]
    swapped = node.func.id in TWO_TIMINGS and args[0] > args[1]
    return ([args[1], args[0], args[2]] if swapped else args), swapped


def _key(node: ast.AST) -> tuple[str, str]:
    """What a node asks: ("question", its arguments) for a word of WORDS, else
    ("atom", the node), with a three-valued atom marked as such."""
    asked = _asked(node)
    if asked is not None:
        return "question", "\n".join([_family(node), *asked[0]])
    told = any(isinstance(n, ast.Call) and getattr(n.func, "id", None) not in PLAIN for n in ast.walk(node))
    return ("atom3" if told else "atom"), ast.dump(node)


def _family(node: ast.Call) -> str:
    """below's third argument is a limit, the others' a margin: never one question, nor one end."""
    return "limit" if node.func.id == "below" else "margin"


def _opposite(node: ast.AST) -> ast.AST | None:
    """``a == b`` for ``a != b``, ``a in b`` for ``a not in b``; None for anything else."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        flip = {ast.NotEq: ast.Eq, ast.NotIn: ast.In}.get(type(node.ops[0]))
        if flip:
            return ast.Compare(left=node.left, ops=[flip()], comparators=node.comparators)
    return None


class _Found:
    """What the checks of a block ask, in order (``keys``: questions, ends, atoms), and the
    pairs of ends whose first is at or below its second in any data (``order``)."""

    def __init__(self) -> None:
        self.keys: dict[tuple[str, str], None] = {}
        self.order: list[tuple[tuple[str, str], tuple[str, str]]] = []
        self._extremes: dict[tuple[str, str, str, str], tuple[str, str]] = {}

    def ends(self, node: ast.Call, family: str) -> tuple[tuple[str, str], tuple[str, str]]:
        """The keys of the two ends ``node`` names, against its margin or limit."""
        against = ast.dump(node.args[2])
        low, high = (("end", "\n".join([family, against, ast.dump(a)])) for a in node.args[:2])
        self.keys.update(dict.fromkeys((low, high)))
        self.order.append((low, high))
        for end, arg in ((low, node.args[0]), (high, node.args[1])):
            self._extreme(end, arg, family, against)
        return low, high

    def _extreme(self, end: tuple[str, str], arg: ast.AST, family: str, against: str) -> None:
        """``min(c)`` at or below ``max(c)``, wherever both are ends against one edge."""
        if not (isinstance(arg, ast.Call) and getattr(arg.func, "id", None) in ("min", "max") and len(arg.args) == 1):
            return
        which, column = arg.func.id, ast.dump(arg.args[0])
        self._extremes[(family, against, which, column)] = end
        low, high = (self._extremes.get((family, against, w, column)) for w in ("min", "max"))
        if low is not None and high is not None:
            self.order.append((low, high))


def _compile(node: ast.AST, found: _Found) -> Callable[[dict], object]:
    """The check as a function of one outcome (each question's interval or ends, each
    atom's value), what it asks added to ``found`` in order: parsed once, tried for every
    outcome."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        operand = _compile(node.operand, found)
        return lambda outcome: kleene_not(operand(outcome))
    if isinstance(node, ast.BoolOp):
        values, stop = [_compile(v, found) for v in node.values], isinstance(node.op, ast.Or)
        return lambda outcome: kleene(values, stop, lambda value: value(outcome))
    if (opposite := _opposite(node)) is not None:
        flipped = _compile(opposite, found)
        return lambda outcome: kleene_not(flipped(outcome))
    key = _key(node)
    if key[0] != "question":
        found.keys[key] = None
        return lambda outcome: outcome[key]
    word = WORDS[node.func.id]
    if node.func.id not in TWO_TIMINGS:
        low, high = found.ends(node, _family(node))
        return lambda outcome: word(outcome[low], outcome[high])
    found.keys[key] = None
    swapped = _asked(node)[1]
    # b / a's range for a, b asked as b, a: the inverse of the range a / b's ends give
    return lambda outcome: word(1 / outcome[key][1], 1 / outcome[key][0]) if swapped else word(*outcome[key])


def _met(value: object, unsure: bool) -> bool:
    return value is NOISE if unsure else value is True


def covers_every_outcome(
    conditions: Iterable[tuple[str, bool]],
    expression: Callable[[str], str],
    within: Iterable[tuple[str, bool]] = (),
) -> bool:
    """Whether the clauses ``conditions`` (each a claim's id, and whether the clause is
    ``unsure`` it) leave no outcome without one that is met, where the clauses ``within``
    are met; ``expression`` gives a claim's check. False where that cannot be proved."""
    return _covers(
        tuple((expression(ref), unsure) for ref, unsure in conditions),
        tuple((expression(ref), unsure) for ref, unsure in within),
    )


@functools.cache
def _covers(conditions: tuple[tuple[str, bool], ...], within: tuple[tuple[str, bool], ...]) -> bool:
    """covers_every_outcome on the checks themselves, so that a block each edition repeats
    is proved once."""
    found = _Found()
    checks = {text: _compile(ast.parse(text, mode="eval").body, found) for text, _ in [*conditions, *within]}
    placements = math.prod(len(CHOICES[kind]) for kind, _ in found.keys if kind in PLACED)
    if not conditions or placements > MAX_PLACEMENTS:
        return False
    for values in itertools.product(*(CHOICES[kind] for kind, _ in found.keys)):
        outcome = dict(zip(found.keys, values, strict=True))
        if any(outcome[low] > outcome[high] for low, high in found.order):
            continue  # no data places them so
        decided = {text: check(outcome) for text, check in checks.items()}
        if all(_met(decided[text], unsure) for text, unsure in within) and not any(
            _met(decided[text], unsure) for text, unsure in conditions
        ):
            return False
    return True
