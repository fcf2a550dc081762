"""The verdict of every claim about this machine (``hardware = true``) that a data folder
gives, and two folders compared: two runs on one machine, one after the other, should
decide every such claim alike (✓ holds, ≈ within this machine's noise, ⚠ does not hold).

    make verdicts A=site_data B=/tmp/second-run

Prints one line per claim whose verdict differs, then a count; exits 1 when any differs,
2 when a folder cannot be read. With one folder, prints every verdict.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sitekit.claims import claim_files, claims
from sitekit.rendering.pagedata import SiteData, SiteDataError

HOLDS, NOISE, FAILS = "✓", "≈", "⚠"
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
            out[cid] = f"unreadable: {e}"
            continue
        out[cid] = NOISE if holds is claims.NOISE else HOLDS if holds else FAILS
    return out


def differences(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, str, str]]:
    """(claim id, verdict in a, verdict in b) for every claim the two decide differently."""
    return [(cid, a.get(cid, "absent"), b.get(cid, "absent")) for cid in sorted(a | b) if a.get(cid) != b.get(cid)]


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python -m sitekit.claims.verdicts FOLDER [OTHER_FOLDER]", file=sys.stderr)
        return 2
    folders = [Path(f) for f in argv]
    for f in folders:
        if not f.is_dir():
            print(f"{f}: no such data folder", file=sys.stderr)
            return 2
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
    print(
        f"{len(diff)} of {len(found[0] | found[1])} claims about this machine decided differently "
        f"({folders[1]}: {counts[HOLDS]} ✓, {counts[NOISE]} ≈, {counts[FAILS]} ⚠)"
    )
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
