"""``python -m measure check``: regenerate measurements into a temporary folder and
compare them with the committed site_data, never writing over it.

Fails (exit 1) on: a drifted cell or value, a table whose producing code changed
since it was measured (stale), an experiment with no committed data, a table a page
uses that no experiment produces, and a committed table no page shows.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from measure import registry
from measure.compare import Finding, compare_experiment
from measure.devices import choose_device
from measure.provenance import code_hash

FAILING = {"drift", "stale", "missing", "unused", "unknown"}
_TABLE_REF = re.compile(r"""(?:table|cell|column)\(\s*['"]([a-z0-9_]+\.[a-z0-9_]+)['"]""")


def page_table_refs(docs: Path) -> dict[str, set[str]]:
    """table ref -> the pages that use it (tables, cells, and claims over columns)."""
    refs: dict[str, set[str]] = defaultdict(set)
    for page in sorted(docs.rglob("*.md")):
        for ref in _TABLE_REF.findall(page.read_text(encoding="utf-8")):
            refs[ref].add(str(page.relative_to(docs)))
    return refs


def _pages_findings(committed: Path, docs: Path) -> list[Finding]:
    used = page_table_refs(docs)
    produced = set()
    for meta in committed.glob("*/meta.json"):
        produced |= {f"{meta.parent.name}.{t}" for t in json.loads(meta.read_text())["tables"]}
    out = []
    for ref in sorted(set(used) - produced):
        exp, table = ref.split(".")
        out.append(
            Finding(
                experiment=exp,
                table=table,
                verdict="unknown",
                reason=f"used by {', '.join(sorted(used[ref]))} but produced by no experiment",
            )
        )
    for ref in sorted(produced - set(used)):
        exp, table = ref.split(".")
        out.append(
            Finding(
                experiment=exp,
                table=table,
                verdict="unused",
                reason="produced but shown on no page",
            )
        )
    return out


def run_check(
    *,
    only: str | None,
    committed: Path,
    device: str = "auto",
    kinds: tuple[str, ...],
    report: Path | None,
    docs: Path | None,
    regenerated: Path | None = None,
    quiet: bool = False,
) -> int:
    from measure.runner import run_experiments

    names = registry.select(only)
    dev = choose_device(device)
    findings: list[Finding] = []
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in names:
        meta_path = committed / name / "meta.json"
        if not meta_path.is_file():
            findings.append(
                Finding(
                    experiment=name,
                    table="meta",
                    committed="absent",
                    new="",
                    verdict="missing",
                    reason=f"no committed data in {committed / name}",
                )
            )
            continue
        meta = json.loads(meta_path.read_text())
        if meta["code_hash"] != code_hash(name):
            findings.append(
                Finding(
                    experiment=name,
                    table="meta",
                    column="code_hash",
                    kind="exact",
                    committed=meta["code_hash"],
                    new=code_hash(name),
                    tolerance="equal",
                    verdict="stale",
                    reason="the code that produced this data has changed since it was measured",
                )
            )
        if meta["device"]["type"] != dev.type:
            findings.append(
                Finding(
                    experiment=name,
                    table="meta",
                    committed=meta["device"]["id"],
                    new=dev.type,
                    verdict="not comparable",
                    reason=f"committed on a {meta['device']['type']} device; this machine runs {dev.type}: "
                    "dtype and kernels differ, nothing to compare",
                )
            )
            continue
        groups[(meta["model"].get("spec", "default"), meta["profile"])].append(name)

    with tempfile.TemporaryDirectory(prefix="measure-check-") as tmp:
        out = regenerated or Path(tmp)
        if regenerated is None:
            for (model, profile), group in groups.items():
                run_experiments(names=group, model=model, device=device, profile=profile, out=out, quiet=quiet)
        for group in groups.values():
            for name in group:
                findings += compare_experiment(committed / name, out / name, kinds=kinds)
    if docs is not None:
        findings += _pages_findings(committed, docs)
    _print_report(findings, kinds)
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        counts = Counter(f.verdict for f in findings)
        report.write_text(
            json.dumps(
                {
                    "kinds": list(kinds),
                    "counts": counts,
                    "passed": not any(f.verdict in FAILING for f in findings),
                    "findings": [f.as_dict() for f in findings if f.verdict != "ok"],
                    "tables": _table_summary(findings),
                },
                indent=1,
                default=str,
            )
            + "\n"
        )
    return 1 if any(f.verdict in FAILING for f in findings) else 0


def _table_summary(findings: list[Finding]) -> dict[str, dict[str, int]]:
    summary: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        summary[f"{f.experiment}.{f.table}"][f.verdict] += 1
    return {k: dict(v) for k, v in sorted(summary.items())}


def _short(v, width: int = 18) -> str:
    s = str(v)
    return s if len(s) <= width else s[: width - 1] + "…"


def _print_report(findings: list[Finding], kinds: tuple[str, ...]) -> None:
    w = sys.stdout.write
    w(f"\ndrift check (kinds compared: {', '.join(kinds)})\n\n")
    w(f"{'table':34} {'cells':>6} {'ok':>6} {'drift':>6} {'n/c':>6}  notes\n")
    for table, counts in _table_summary(findings).items():
        cells = sum(counts.values())
        notes = ", ".join(f"{k}" for k in counts if k in FAILING - {"drift"})
        w(
            f"{table:34} {cells:6} {counts.get('ok', 0):6} {counts.get('drift', 0):6} "
            f"{counts.get('not comparable', 0):6}  {notes}\n"
        )
    bad = [f for f in findings if f.verdict in FAILING]
    reasons = sorted({f"{f.experiment}: {f.reason}" for f in findings if f.verdict == "not comparable"})
    if reasons:
        w("\nnot comparable (reported, not failed):\n" + "".join(f"  {r}\n" for r in reasons[:20]))
    if bad:
        w(f"\n{'verdict':8} {'table':30} {'row':>4} {'column':24} {'committed':>18} {'new':>18}  tolerance / reason\n")
        for f in bad[:200]:
            w(
                f"{f.verdict:8} {f.experiment + '.' + f.table:30} {'' if f.row is None else f.row:>4} "
                f"{_short(f.column or '', 24):24} {_short(f.committed):>18} {_short(f.new):>18}  "
                f"{f.tolerance}{' ' if f.tolerance and f.reason else ''}{f.reason}\n"
            )
        if len(bad) > 200:
            w(f"... and {len(bad) - 200} more (see the JSON report)\n")
        w(f"\nFAILED: {len(bad)} finding(s)\n")
    else:
        w("\npassed: every compared value is within its tolerance\n")
