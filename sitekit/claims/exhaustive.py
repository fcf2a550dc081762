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
- Anything else a claim tests is an atom: true or false, or also ``NOISE`` where it
  calls a word other than PLAIN (``increasing``, ``faster``...). ``a != b`` is
  ``not a == b`` and ``a not in b`` is ``not a in b``, so that a test and its opposite
  are one atom.
- The clauses the block sits in are met (``within``), so their claims' outcomes hold.

Questions and atoms are tried independently, including combinations no data could give,
so the proof never passes a block that some run could leave without a clause; a block it
cannot prove keeps needing its ``else``.
"""

from __future__ import annotations

import ast
import functools
import itertools
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
MAX_QUESTIONS = 2  # each one multiplies the outcomes tried by len(POSITIONS)


def _asked(node: ast.AST) -> tuple[list[str], bool] | None:
    """A call of WORDS: its arguments, and whether they are two timings swapped (``b, a``
    where another claim may ask ``a, b``: in the order their dumps sort); else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WORDS) or node.keywords:
        return None
    args = [ast.dump(a) for a in node.args]
    swapped = node.func.id in TWO_TIMINGS and len(args) == 3 and args[0] > args[1]
    return ([args[1], args[0], args[2]] if swapped else args), swapped


def _key(node: ast.AST) -> tuple[str, str]:
    """What a node asks: ("question", its arguments) for a word of WORDS, else
    ("atom", the node), with a three-valued atom marked as such."""
    asked = _asked(node)
    if asked is not None:
        # below's third argument is a limit, the others' a margin: never one question
        family = "limit" if node.func.id == "below" else "margin"
        return "question", "\n".join([family, *asked[0]])
    told = any(isinstance(n, ast.Call) and getattr(n.func, "id", None) not in PLAIN for n in ast.walk(node))
    return ("atom3" if told else "atom"), ast.dump(node)


def _opposite(node: ast.AST) -> ast.AST | None:
    """``a == b`` for ``a != b``, ``a in b`` for ``a not in b``; None for anything else."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        flip = {ast.NotEq: ast.Eq, ast.NotIn: ast.In}.get(type(node.ops[0]))
        if flip:
            return ast.Compare(left=node.left, ops=[flip()], comparators=node.comparators)
    return None


def _compile(node: ast.AST, found: dict[tuple[str, str], None]) -> Callable[[dict], object]:
    """The check as a function of one outcome (each question's interval, each atom's
    value), its questions and atoms added to ``found`` in order: parsed once, tried for
    every outcome."""
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
    found[key] = None
    if key[0] != "question":
        return lambda outcome: outcome[key]
    word, swapped = WORDS[node.func.id], _asked(node)[1]
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
    found: dict[tuple[str, str], None] = {}
    checks = {text: _compile(ast.parse(text, mode="eval").body, found) for text, _ in [*conditions, *within]}
    if not conditions or sum(kind == "question" for kind, _ in found) > MAX_QUESTIONS:
        return False
    choices = [
        POSITIONS if kind == "question" else (True, False, NOISE) if kind == "atom3" else (True, False)
        for kind, _ in found
    ]
    for values in itertools.product(*choices):
        outcome = dict(zip(found, values, strict=True))
        decided = {text: check(outcome) for text, check in checks.items()}
        if all(_met(decided[text], unsure) for text, unsure in within) and not any(
            _met(decided[text], unsure) for text, unsure in conditions
        ):
            return False
    return True
