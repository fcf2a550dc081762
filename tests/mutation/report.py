"""The kill rate of `make mutate`, per module, and every survivor not explained.

Reads `mutmut results --all true` (one ``name: status`` line per mutant) and
tests/mutation/equivalent.txt (``name  reason``: mutants that change no behaviour any
caller can see). A mutant counts as caught when a test failed or timed out; one that
no test runs counts as surviving. Exits non-zero when a survivor is left unexplained
or an explained one no longer exists, so the list cannot go stale.

    python tests/mutation/report.py            # after `make mutate`, again
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
CAUGHT = {"killed", "timeout"}
LINE = re.compile(r"^\s*(?P<name>\S+): (?P<status>.+?)\s*$")


def module_of(name: str) -> str:
    """``measure.lab.budget.x_weight_bytes__mutmut_3`` -> ``measure.lab.budget``; methods
    are named ``module.xǁClassǁmethod__mutmut_N``."""
    return re.split(r"\.xǁ|\.x_", name, maxsplit=1)[0]


def equivalents(path: Path = HERE / "equivalent.txt") -> dict[str, str]:
    out = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            if not reason.strip():
                raise SystemExit(f"equivalent.txt: {name} has no reason")
            out[name] = reason.strip()
    return out


def results(cwd: Path) -> dict[str, str]:
    text = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {m["name"]: m["status"] for m in map(LINE.match, text.splitlines()) if m}


def main(cwd: Path = HERE.parents[1] / ".mutation") -> int:
    status, explained = results(cwd), equivalents()
    if not status:
        print("no mutants: run `mutmut run` first")
        return 1
    per_module: dict[str, Counter] = defaultdict(Counter)
    unexplained = []
    for name, s in sorted(status.items()):
        module = module_of(name)
        if name in explained and s not in CAUGHT:
            per_module[module]["equivalent"] += 1
        elif s in CAUGHT:
            per_module[module]["caught"] += 1
        else:
            per_module[module]["survived"] += 1
            unexplained.append(f"{name}: {s}")
    print(f"{'module':36} {'mutants':>8} {'equiv.':>7} {'caught':>7} {'kill rate':>10}")
    total: Counter = Counter()
    for module, c in [*sorted(per_module.items()), ("all", None)]:
        if c is None:
            c = total
        else:
            total.update(c)
        rate = c["caught"] / max(1, c["caught"] + c["survived"])
        print(f"{module:36} {sum(c.values()):8} {c['equivalent']:7} {c['caught']:7} {rate:10.1%}")
    stale = sorted(set(explained) - set(status))
    for name in stale:
        print(f"equivalent.txt names {name}, which is no longer a mutant")
    killed = sorted(n for n in explained if status.get(n) in CAUGHT)
    for name in killed:
        print(f"equivalent.txt names {name}, which a test kills: it is not equivalent")
    stale += killed
    if unexplained:
        print(f"\n{len(unexplained)} survivors (`mutmut show NAME` for the change):")
        print("\n".join(f"  {u}" for u in unexplained))
    return 1 if unexplained or stale else 0


if __name__ == "__main__":
    sys.exit(main())
