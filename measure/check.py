"""``python -m measure check``: regenerate measurements into a temporary folder and
compare them with the committed site_data, never writing over it.

Each cell is compared where its declared scope allows (see ``sitedata.compare``): byte
counts and formulas wherever the committed run came from, float results of the model on
the same device type and dtype, timings on the same machine only. The report says how
many cells were compared and how many could not be here, and why.

Fails (exit 1) on: a drifted cell or value; a table whose producing code changed since
it was measured (stale); committed data that is missing or does not verify against its
meta.json; a table a page uses that no experiment produces, or one no page shows; and a
check that compared nothing at all.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from measure import registry
from sitedata import DataError, read_experiment
from sitedata.compare import Finding, compare_experiment

FAILING = {"drift", "stale", "missing", "invalid", "unused", "unknown"}
COMPARED = {"ok", "drift"}
_TABLE_REF = re.compile(r"""(?:table|cell|column)\(\s*['"]([a-z0-9_]+\.[a-z0-9_]+)['"]""")


def page_table_refs(docs: Path) -> dict[str, set[str]]:
    """table ref -> the pages that use it (tables, cells, and claims over columns)."""
    refs: dict[str, set[str]] = defaultdict(set)
    for page in sorted(docs.rglob("*.md")):
        for ref in _TABLE_REF.findall(page.read_text(encoding="utf-8")):
            refs[ref].add(str(page.relative_to(docs)))
    return refs


def _pages_findings(produced: set[str], docs: Path) -> list[Finding]:
    used = page_table_refs(docs)
    out = []
    for ref in sorted(set(used) - produced):
        exp, table = ref.split(".")
        where = ", ".join(sorted(used[ref]))
        out.append(
            Finding(
                experiment=exp, table=table, verdict="unknown", reason=f"used by {where} but produced by no experiment"
            )
        )
    for ref in sorted(produced - set(used)):
        exp, table = ref.split(".")
        out.append(Finding(experiment=exp, table=table, verdict="unused", reason="produced but shown on no page"))
    return out


def _committed_findings(name: str, committed: Path) -> tuple[list[Finding], object | None]:
    from measure.lab.provenance import code_hash

    try:
        exp = read_experiment(committed, name)
    except DataError as e:
        verdict = "missing" if not (committed / name / "meta.json").is_file() else "invalid"
        return [Finding(experiment=name, table="meta", verdict=verdict, reason=str(e))], None
    now = code_hash(name)
    if exp.meta["code_hash"] != now:
        stale = Finding(
            experiment=name,
            table="meta",
            column="code_hash",
            committed=exp.meta["code_hash"],
            new=now,
            verdict="stale",
            reason=f"the code that produced this data has changed since it was measured; make measure ONLY={name}",
        )
        return [stale], exp
    return [], exp


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
    findings: list[Finding] = []
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    read = {}
    for name in names:
        found, exp = _committed_findings(name, committed)
        findings += found
        if exp is not None:
            read[name] = exp
            groups[(exp.meta["model"]["spec"], exp.meta["profile"])].append(name)

    with tempfile.TemporaryDirectory(prefix="measure-check-") as tmp:
        out = regenerated or Path(tmp)
        if regenerated is None:
            for (model, profile), group in groups.items():
                run_experiments(names=group, model=model, device=device, profile=profile, out=out, quiet=quiet)
        for name, exp in read.items():
            try:
                new = read_experiment(out, name)
            except DataError as e:
                findings.append(Finding(experiment=name, table="meta", verdict="missing", reason=f"regenerated: {e}"))
                continue
            findings += compare_experiment(exp, new, kinds=kinds)
    if docs is not None:
        produced = {f"{name}.{t}" for name, exp in read.items() for t in exp.meta["tables"]}
        findings += _pages_findings(produced, docs)
    summary = coverage(findings)
    passed = not any(f.verdict in FAILING for f in findings) and summary["compared"] > 0
    _print_report(findings, kinds, summary, passed)
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "kinds": list(kinds),
            "passed": passed,
            "coverage": summary,
            "counts": Counter(f.verdict for f in findings),
            "findings": [f.as_dict() for f in findings if f.verdict != "ok"],
            "tables": _table_summary(findings),
        }
        report.write_text(json.dumps(payload, indent=1, default=str) + "\n")
    return 0 if passed else 1


def coverage(findings: list[Finding]) -> dict:
    """Cells compared, and cells not compared here with the reason (scope) or the choice (kinds)."""
    cells = [f for f in findings if f.column is not None and f.table != "meta"]
    by_reason: Counter = Counter()
    by_scope: Counter = Counter()
    for f in cells:
        if f.verdict == "not comparable":
            by_reason[_general(f.reason)] += 1
        if f.verdict in COMPARED:
            by_scope[f.scope] += 1
    return {
        "cells": len(cells),
        "compared": sum(by_scope.values()),
        "compared_by_scope": dict(by_scope),
        "not_comparable": sum(by_reason.values()),
        "not_comparable_by_reason": dict(by_reason),
        "not_compared": sum(1 for f in cells if f.verdict == "not compared"),
    }


def _general(reason: str) -> str:
    return reason.split(":")[0]


def _table_summary(findings: list[Finding]) -> dict[str, dict[str, int]]:
    summary: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        summary[f"{f.experiment}.{f.table}"][f.verdict] += 1
    return {k: dict(v) for k, v in sorted(summary.items())}


def _short(v, width: int = 18) -> str:
    s = str(v)
    return s if len(s) <= width else s[: width - 1] + "…"


def _print_report(findings: list[Finding], kinds: tuple[str, ...], summary: dict, passed: bool) -> None:
    w = sys.stdout.write
    w(f"\ndrift check (kinds compared: {', '.join(kinds)})\n\n")
    w(f"{'table':40} {'cells':>6} {'ok':>6} {'drift':>6} {'n/c':>6} {'skip':>6}  notes\n")
    for table, counts in _table_summary(findings).items():
        cells = sum(counts.values())
        notes = ", ".join(k for k in counts if k in FAILING - {"drift"})
        w(
            f"{table:40} {cells:6} {counts.get('ok', 0):6} {counts.get('drift', 0):6} "
            f"{counts.get('not comparable', 0):6} {counts.get('not compared', 0):6}  {notes}\n"
        )
    w(
        f"\ncoverage: {summary['compared']} of {summary['cells']} cells compared "
        f"({', '.join(f'{n} {s}-scope' for s, n in sorted(summary['compared_by_scope'].items())) or 'none'}); "
        f"{summary['not_comparable']} not comparable here; {summary['not_compared']} of kinds not selected\n"
    )
    reasons = Counter(f"{f.experiment}: {f.reason}" for f in findings if f.verdict == "not comparable")
    if reasons:
        w("\nnot comparable here (reported, not failed):\n")
        w("".join(f"  {n:5} cells  {r}\n" for r, n in sorted(reasons.items())[:30]))
    bad = [f for f in findings if f.verdict in FAILING]
    if bad:
        w(f"\n{'verdict':8} {'table':36} {'row':>4} {'column':24} {'committed':>18} {'new':>18}  tolerance / reason\n")
        for f in bad[:200]:
            w(
                f"{f.verdict:8} {f.experiment + '.' + f.table:36} {'' if f.row is None else f.row:>4} "
                f"{_short(f.column or '', 24):24} {_short(f.committed):>18} {_short(f.new):>18}  "
                f"{f.tolerance}{' ' if f.tolerance and f.reason else ''}{f.reason}\n"
            )
        if len(bad) > 200:
            w(f"... and {len(bad) - 200} more (see the JSON report)\n")
        w(f"\nFAILED: {len(bad)} finding(s)\n")
    elif not passed:
        w("\nFAILED: no cell could be compared here, so nothing was checked\n")
    else:
        w("\npassed: every compared value is within its tolerance\n")
