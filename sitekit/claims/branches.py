"""Prose that reads right whichever way this run's data came out::

    <!-- if batching.costs_rise -->
    ... {{ claim('batching.costs_rise', 'every larger batch cost more') }} ...
    <!-- elif unsure batching.costs_rise -->
    ... {{ claim('batching.costs_rise', 'the larger batches seemed to cost more') }} ...
    <!-- else -->
    ... what was found instead, in values ...
    <!-- end -->

A condition is a claim's id (claim_files.py): its clause is kept when the claim holds;
``unsure`` and an id: when the claim's intervals cannot tell (NOISE). Every condition of
a block is evaluated, so that none goes unchecked; the first clause whose condition is
met keeps its text, else the ``else`` text, else nothing. Blocks nest. A claim named in
a clause this run did not keep is still the page's: its id must be defined, and it
counts as used (its check is decided in the run whose data keeps that clause).

The rule for a sentence a page shows. The build refuses a page that breaks its first two
parts, naming the claim and its numbers:

* a claim's sentence that is shown holds: one that does not hold is never printed, with
  a mark or without; the page's branch for that outcome says what was found instead;
* a claim that the intervals cannot tell (≈) is shown only inside a clause
  ``unsure <its id>``, whose wording admits it.

The third part does not depend on the data, and ``check_guards`` checks it on every page
(tests/test_branches.py, with its list of the sentences still waiting for their
branches): a claim about this hardware (``hardware = true``), which another run may
decide otherwise, sits inside a clause whose condition is that claim (``<id>`` or
``unsure <id>``), in a block with an ``else`` or whose clauses cover whatever a run
finds (exhaustive.py), so that whichever way the next run comes out, the page has a
branch for it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from sitekit.claims import claims
from sitekit.claims.claim_syntax import MAX_MARKER, parse
from sitekit.claims.exhaustive import covers_every_outcome
from sitekit.claims.intervals import NOISE
from sitekit.rendering import escape
from sitekit.rendering.context import PageContext
from sitekit.rendering.pagedata import SiteDataError

TAG = re.compile(r"<!--\s*(?:(?P<kw>if|elif)\s+(?P<cond>.+?)|(?P<bare>else|end))\s*-->\n?", re.DOTALL)
CONDITION = re.compile(r"(?P<unsure>unsure\s+)?(?P<ref>[A-Za-z0-9_]+\.[A-Za-z0-9_]+)")
MARKER = re.compile(r"\{\{\s*(.+?)\s*\}\}")  # as markers.py reads them
CLAIM_CALL = re.compile(r"claim\s*\(")


class BranchError(Exception):
    pass


@dataclass(frozen=True)
class Condition:
    ref: str  # the claim's id
    unsure: bool  # met when the claim is NOISE, not when it holds

    def __str__(self) -> str:
        return f"unsure {self.ref}" if self.unsure else self.ref


@dataclass
class Block:
    tag: str  # the opening comment, for messages
    clauses: list[tuple[Condition | None, list]]  # (condition, nodes); ``else`` has none


def condition(text: str) -> Condition:
    found = CONDITION.fullmatch(text.strip())
    if not found:
        raise BranchError(f"a condition is a claim's id, or unsure and a claim's id, not {text!r}")
    return Condition(found.group("ref"), bool(found.group("unsure")))


def parse_blocks(markdown: str) -> list:
    """The page as nodes: text (str) and blocks of clauses, each clause a list of nodes."""
    top: list = []
    open_blocks: list[Block] = []
    pos = 0

    def here() -> list:
        return open_blocks[-1].clauses[-1][1] if open_blocks else top

    for m in TAG.finditer(markdown):
        here().append(markdown[pos : m.start()])
        pos = m.end()
        tag = escape.cut(m.group(0).strip(), 120, note=False)
        if m.group("kw") == "if":
            block = Block(tag, [(condition(m.group("cond")), [])])
            here().append(block)
            open_blocks.append(block)
            continue
        if not open_blocks:
            raise BranchError(f"{tag} outside any <!-- if ... --> block")
        block = open_blocks[-1]
        if m.group("bare") == "end":
            open_blocks.pop()
        elif block.clauses[-1][0] is None:
            raise BranchError(f"<!-- {m.group('kw') or 'else'} --> after <!-- else --> in the block {block.tag}")
        else:
            block.clauses.append((condition(m.group("cond")) if m.group("kw") else None, []))
    if open_blocks:
        raise BranchError(f"{open_blocks[-1].tag} has no <!-- end -->")
    top.append(markdown[pos:])
    return top


def claim_markers(text: str) -> list[tuple[str, str]]:
    """The claims ``text`` shows (``{{ claim('exp.name', 'sentence') }}``), in order: each
    one's id and its sentence."""
    found = []
    for m in MARKER.finditer(text):
        if not CLAIM_CALL.match(m.group(1)):
            continue
        try:
            node = parse(m.group(1), "marker", MAX_MARKER).body
        except claims.ClaimError:
            continue  # markers.py refuses it when it renders it, saying why
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "claim":
            args = {k.arg: k.value for k in node.keywords}
            if set(args) - {"ref", "text"} or len(node.args) > 2:
                continue  # no sentence of a claim: the marker's own call refuses it, naming the argument
            ref, sentence = [*node.args, None, None][:2]
            ref, sentence = ref or args.get("ref"), sentence or args.get("text")
            if isinstance(ref, ast.Constant):
                found.append((ref.value, sentence.value if isinstance(sentence, ast.Constant) else ""))
    return found


class Walk:
    """One page's branches chosen and its shown claims checked against the rule above."""

    def __init__(self, ctx: PageContext, *, guards: bool) -> None:
        self.ctx = ctx
        self.guards = guards  # check that every hardware claim's sentence has its branches
        self.unguarded: dict[str, str] = {}  # every one that has not: its id, and why

    def walk(self, markdown: str, *, kept: bool) -> str:
        return self.nodes(parse_blocks(markdown), (), kept=kept)

    def outcome(self, cond: Condition) -> bool:
        holds = claims.check(self.ctx.data, self.ctx.claim(cond.ref).expression)[0]
        return holds is NOISE if cond.unsure else holds is True

    def guarded(self, ref: str, guards: tuple[tuple[Condition, Block], ...]) -> None:
        """A hardware claim's sentence sits in a clause of its own claim, in a block with
        an ``else`` (checked whether or not this run keeps the clause)."""
        if not self.ctx.claim(ref).hardware:
            return
        own = [block for cond, block in guards if cond.ref == ref]
        if not own:
            self.unguarded.setdefault(
                ref,
                f"the sentence of {ref}, a claim about this hardware, is not inside <!-- if {ref} --> "
                f"(or <!-- elif unsure {ref} -->): another run may decide it otherwise; give it a branch, "
                "and in <!-- else --> say what was found instead",
            )
        elif not self.complete(own[-1], guards):
            self.unguarded.setdefault(
                ref,
                f"the block {own[-1].tag} shows the sentence of {ref}, a claim about this hardware, and has no "
                "<!-- else -->: say what was found when it does not hold",
            )

    def complete(self, block: Block, guards: tuple[tuple[Condition, Block], ...]) -> bool:
        """A block with an ``else``, or one whose clauses cover whatever a run finds where
        the clauses it sits in are met (exhaustive.py); ``guards``: the clauses from the
        page's top to a sentence inside the block."""
        conditions = [(c.ref, c.unsure) for c, _ in block.clauses if c is not None]
        outside = next(i for i, (_, b) in enumerate(guards) if b is block)
        within = [(c.ref, c.unsure) for c, _ in guards[:outside]]
        return len(conditions) < len(block.clauses) or covers_every_outcome(
            conditions, lambda ref: self.ctx.claim(ref).expression, within
        )

    def shown(self, ref: str, sentence: str, guards: tuple[tuple[Condition, Block], ...]) -> None:
        """A claim whose sentence this run shows holds, or is NOISE inside ``unsure`` it."""
        expression = self.ctx.claim(ref).expression
        holds, read = claims.check(self.ctx.data, expression)
        if holds is True or (holds is NOISE and any(cond == Condition(ref, True) for cond, _ in guards)):
            return
        said = f"claim {escape.cut(sentence, 200, note=False)!r}"
        if holds is NOISE:
            raise BranchError(
                f"{said} cannot be told by this run's intervals, and is shown outside <!-- elif unsure {ref} -->, "
                f"where a sentence may admit it: {ref} = {expression} with {claims.numbers(read)}"
            )
        raise BranchError(
            f"{said} does not hold: {ref} = {expression} with {claims.numbers(read)}; a sentence whose claim "
            f"does not hold is never shown: put it inside <!-- if {ref} --> and say in <!-- else --> what was "
            "found instead"
        )

    def choose(self, block: Block) -> int | None:
        """The clause this run keeps: every condition decided, so that none goes
        unchecked; the first met, else the ``else``, else none."""
        try:
            met = [cond is None or self.outcome(cond) for cond, _ in block.clauses]
        except (claims.ClaimError, SiteDataError, KeyError, TypeError, ValueError) as e:
            raise BranchError(f"{block.tag}: {e}") from None
        return met.index(True) if True in met else None

    def text(self, text: str, guards: tuple, *, kept: bool) -> str:
        for ref, sentence in claim_markers(text):
            self.ctx.claim(ref)  # defined, and this page's
            if self.guards:
                self.guarded(ref, guards)
            if kept:
                self.shown(ref, sentence, guards)
        return text

    def nodes(self, nodes: list, guards: tuple, *, kept: bool) -> str:
        out = []
        for node in nodes:
            if isinstance(node, str):
                out.append(self.text(node, guards, kept=kept))
                continue
            try:
                chosen = self.choose(node) if kept else None
                for cond, _ in node.clauses:
                    if cond is not None:
                        self.ctx.claim(cond.ref)  # defined, and this page's
                for i, (cond, body) in enumerate(node.clauses):
                    inner = (*guards, (cond, node)) if cond is not None else guards
                    text = self.nodes(body, inner, kept=i == chosen)
                    if i == chosen:
                        out.append(text)
            except (claims.ClaimError, SiteDataError) as e:  # an unknown id, a datum missing: say where
                raise BranchError(f"{node.tag}: {e}") from None
        return "".join(out)


def unguarded(markdown: str, ctx: PageContext) -> dict[str, str]:
    """The part of the rule that does not depend on the data (no data is read): every
    claim the page names is defined (BranchError if not), and each claim about this
    hardware whose sentence has no branches of its own, with why."""
    walk = Walk(ctx, guards=True)
    try:
        walk.walk(markdown, kept=False)
    except (BranchError, claims.ClaimError, KeyError) as e:
        raise BranchError(f"{ctx.page}: {e}") from None
    return walk.unguarded


def check_guards(markdown: str, ctx: PageContext) -> None:
    """``unguarded`` as one BranchError naming every such sentence of the page."""
    found = unguarded(markdown, ctx)
    if found:
        raise BranchError(f"{ctx.page}: " + "; ".join(found.values()))


def choose_branches(markdown: str, ctx: PageContext) -> str:
    """The page's text with each block's kept clause in its place, every claim the page
    names checked against the rule above (BranchError names the page and the claim)."""
    try:
        return Walk(ctx, guards=False).walk(markdown, kept=True)
    except (BranchError, claims.ClaimError, SiteDataError, KeyError) as e:
        raise BranchError(f"{ctx.page}: {e}") from None
