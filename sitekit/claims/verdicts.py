"""The verdict of every claim about this machine (``hardware = true``) that a data folder
gives, and two folders compared: two runs on one machine, one after the other, should
decide every such claim alike (✓ holds, ≈ within this machine's noise, ⚠ does not hold).

    make verdicts A=site_data B=/tmp/second-run [KEY=<run key>]

Verdicts compare runs of one key (machine, model, dtype, profile; sitedata.runs): each
folder's primary run, or the run of KEY in each; two runs of different keys are refused.

Prints one line per claim whose verdict differs, then a count; exits 1 when any differs,
2 when a folder cannot be read. With one folder, prints every verdict.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sitedata import DataError
from sitedata.runs import run_of, runs
from sitekit.claims import claim_files, claims
from sitekit.rendering.pagedata import SiteData, SiteDataError

HOLDS, NOISE, FAILS = "✓", "≈", "⚠"
UNREADABLE = "unreadable"
CLAIMS = Path(__file__).resolve().parents[2] / "measure" / "experiments"


def verdicts(folder: Path, claims_folder: Path = CLAIMS) -> dict[str, str]:
    """Claim id -> its mark, or "unreadable: why" where the folder lacks what it reads."""
    book = claim_files.load(claims_folder, claims_folder, claims.CALLS)
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


def differences(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, str, str]]:
    """(claim id, verdict in a, verdict in b) for every claim the two decide differently."""
    return [
        (cid, a.get(cid, "absent"), b.get(cid, "absent"))
        for cid in sorted(a | b)
        if a.get(cid) != b.get(cid) and not (_unreadable(a.get(cid)) or _unreadable(b.get(cid)))
    ]


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
    diff = differences(*found)
    for cid, x, y in diff:
        print(f"{cid}: {x} in {folders[0]}, {y} in {folders[1]}")
    counts = {m: sum(v == m for v in found[1].values()) for m in (HOLDS, NOISE, FAILS)}
    decided = [c for c in found[0] | found[1] if not any(_unreadable(f.get(c)) for f in found)]
    lacking = one_sided(*found)
    if lacking:
        print(f"{len(lacking)} claims decided in one folder only (the other lacks their data), not compared")
    print(
        f"{len(diff)} of {len(decided)} claims about this machine decided differently "
        f"({folders[1]}: {counts[HOLDS]} ✓, {counts[NOISE]} ≈, {counts[FAILS]} ⚠)"
    )
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
