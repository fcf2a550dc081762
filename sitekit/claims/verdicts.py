"""The verdict of every claim about this machine (``hardware = true``) that a data folder
gives, and two folders compared: two runs on one machine, one after the other, should
decide every such claim alike (✓ holds, ≈ within this machine's noise, ⚠ does not hold).

    make verdicts A=site_data B=/tmp/second-run [KEY=<run key>]

Verdicts compare runs of one key (machine, model, dtype, profile; sitedata.runs): each
folder's primary run, or the run of KEY in each; two runs of different keys are refused.

A page's sentence asks one question and shows the branch its answer takes; the claims of
those branches are compared as one question, so that a question whose answer changed
counts once: a claim written as another's negation (``not <its check>``: ⚠ of the one is
✓ of the other, ≈ of both), and the claims that decide the same interval against the
same margin or limit with different words (``exceeds``, ``same``, ``undercuts`` of one
ratio: larger, practically the same, smaller), and the claims that compare the same
values with words (which ceiling a step sits under: ``memory`` or ``compute``).

Prints one line per question whose verdict differs, then a count, and how many of those
contradict (✓ against ⚠) rather than go undecided in one run; exits 1 when any
differs, 2 when a folder cannot be read. With one folder, prints every verdict.
"""

from __future__ import annotations

import argparse
import ast
import functools
import sys
from pathlib import Path

from sitedata import DataError
from sitedata.runs import run_of, runs
from sitekit.claims import claim_files, claims
from sitekit.rendering.pagedata import SiteData, SiteDataError

HOLDS, NOISE, FAILS = "✓", "≈", "⚠"
UNREADABLE = "unreadable"
CLAIMS = Path(__file__).resolve().parents[2] / "measure" / "experiments"


@functools.cache
def _book(claims_folder: Path) -> claim_files.ClaimBook:
    """The claims of a folder, read once: two folders' verdicts and their questions read the same book."""
    return claim_files.load(claims_folder, claims_folder, claims.CALLS)


def verdicts(folder: Path, claims_folder: Path = CLAIMS) -> dict[str, str]:
    """Claim id -> its mark, or "unreadable: why" where the folder lacks what it reads."""
    book = _book(claims_folder)
    data = SiteData(folder)
    out = {}
    for cid, claim in sorted(book.entries.items()):
        if not claim.hardware:
            continue
        try:
            holds, _ = claims.check(data, claim.expression)
        except (claims.ClaimError, SiteDataError) as e:
            out[cid] = f"{UNREADABLE}: {e}"
            continue
        out[cid] = NOISE if holds is claims.NOISE else HOLDS if holds else FAILS
    return out


# the claims' words that decide intervals (sitekit/claims/intervals.py): the same
# arguments under two of them are two branches of one question
DECIDING = frozenset(claims.INTERVAL_WORDS)


def questions(claims_folder: Path = CLAIMS) -> dict[str, str]:
    """Claim id -> the id of its question (the first of its claims by id), for every claim
    about this machine: claims share a question when the deciding words they call take
    the same arguments, or, calling none, when one's check is the other's negated."""
    book = _book(claims_folder)
    groups: dict[str, list[str]] = {}
    for cid, c in sorted(book.entries.items()):
        if c.hardware:
            groups.setdefault(_asks(ast.parse(c.expression, mode="eval").body), []).append(cid)
    return {cid: members[0] for members in groups.values() for cid in members}


def _asks(node: ast.AST) -> str:
    """What a check asks: the arguments of its deciding calls; else what it compares with
    words (``x.bound == 'memory'`` and ``x.bound == 'compute'`` ask which ceiling);
    else its tree without a ``not``."""
    calls = sorted(
        ast.dump(ast.Tuple(elts=n.args, ctx=ast.Load()))
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in DECIDING
    )
    if calls:
        return "\n".join(calls)
    named = sorted(
        {
            ast.dump(n.left)
            for n in ast.walk(node)
            if isinstance(n, ast.Compare)
            and all(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in n.comparators)
        }
    )
    if named:
        return "which: " + "\n".join(named)
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node = node.operand
    return ast.dump(node)


def differences(
    a: dict[str, str], b: dict[str, str], asked: dict[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(question, its verdicts in a, in b) for every question the two decide differently;
    ``asked`` (``questions``) groups the claims, each claim its own question without it.
    A question's verdicts are its claims' marks in id order; a claim either folder cannot
    read is left out of the comparison."""
    asked = asked or {}
    members: dict[str, list[str]] = {}
    for cid in sorted(a | b):
        if not (_unreadable(a.get(cid)) or _unreadable(b.get(cid))):
            members.setdefault(asked.get(cid, cid), []).append(cid)
    out = []
    for _, cids in sorted(members.items()):
        x, y = (" ".join(f.get(c, "absent") for c in cids) for f in (a, b))
        if x != y:
            out.append((", ".join(cids), x, y))
    return out


def contradicts(x: str, y: str) -> bool:
    """Two runs' marks of one question (``differences``' strings) that contradict: a claim
    holds in one run and does not in the other. A question that only one run could not
    tell (≈ against ✓ or ⚠) is an effect near the edge of its margin, not a contradiction."""
    return any({p, q} == {HOLDS, FAILS} for p, q in zip(x.split(), y.split(), strict=True))


def one_sided(a: dict[str, str], b: dict[str, str]) -> list[str]:
    """The claims one folder decides and the other cannot read (it lacks their experiment)."""
    return sorted(c for c in a | b if _unreadable(a.get(c)) != _unreadable(b.get(c)))


def _unreadable(mark: str | None) -> bool:
    """A claim a folder cannot decide (a run of some experiments only): no verdict to
    compare; ``one_sided`` lists those only one folder decides."""
    return isinstance(mark, str) and mark.startswith(UNREADABLE)


def run_folder(folder: Path, key: str | None) -> tuple[str, Path]:
    """The run a data folder gives the verdicts of: its primary, or the run of ``key``
    (sitedata.runs); DataError naming the keys it holds otherwise."""
    held = runs(folder)
    if not held:
        raise DataError(f"{folder} holds no run")
    if key is None:
        return held[0].key, held[0].root
    found = run_of(held, key)
    if found is None:
        raise DataError(f"{folder} holds no run of key {key}; it holds {', '.join(r.key for r in held)}")
    return key, found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitekit.claims.verdicts")
    parser.add_argument("folders", nargs="+", type=Path, metavar="FOLDER")
    parser.add_argument("--key", help="the run of this key in each folder (default: each folder's primary run)")
    args = parser.parse_args(argv)
    if len(args.folders) > 2:
        print("usage: python -m sitekit.claims.verdicts FOLDER [OTHER_FOLDER] [--key KEY]", file=sys.stderr)
        return 2
    for f in args.folders:
        if not f.is_dir():
            print(f"{f}: no such data folder", file=sys.stderr)
            return 2
    try:
        chosen = [run_folder(f, args.key) for f in args.folders]
    except DataError as e:
        print(f"cannot read the runs: {e}", file=sys.stderr)
        return 2
    if len({key for key, _ in chosen}) > 1:
        said = " and ".join(f"{f} holds {key}" for f, (key, _) in zip(args.folders, chosen, strict=True))
        print(f"verdicts compare runs of one key: {said}; name one with --key (KEY=)", file=sys.stderr)
        return 2
    folders = [root for _, root in chosen]
    try:
        found = [verdicts(f) for f in folders]
    except (claims.ClaimError, SiteDataError) as e:
        print(f"cannot read the claims: {e}", file=sys.stderr)
        return 2
    if len(found) == 1:
        for cid, mark in found[0].items():
            print(f"{mark}  {cid}")
        return 0
    asked = questions()
    diff = differences(*found, asked)
    for cids, x, y in diff:
        print(f"{cids}: {x} in {folders[0]}, {y} in {folders[1]}")
    counts = {m: sum(v == m for v in found[1].values()) for m in (HOLDS, NOISE, FAILS)}
    decided = [c for c in found[0] | found[1] if not any(_unreadable(f.get(c)) for f in found)]
    lacking = one_sided(*found)
    if lacking:
        print(f"{len(lacking)} claims decided in one folder only (the other lacks their data), not compared")
    against = sum(contradicts(x, y) for _, x, y in diff)
    print(
        f"{len(diff)} of {len({asked.get(c, c) for c in decided})} questions about this machine decided "
        f"differently ({len(decided)} claims; {folders[1]}: {counts[HOLDS]} ✓, {counts[NOISE]} ≈, {counts[FAILS]} ⚠)"
    )
    if diff:
        print(
            f"of those, {against} contradict (a claim ✓ in one run and ⚠ in the other) and "
            f"{len(diff) - against} were decided in one run and within its noise (≈) in the other"
        )
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
