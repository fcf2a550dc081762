"""The drift gate's report: printed, and written as JSON where ``--report`` says, a path
checked before anything is regenerated so that an unwritable one is one line, not a
traceback after minutes of measuring. It writes a new file, or over a report of its own
(one that begins as every report does, with ``"report": REPORT``; an older one, with its
``kinds``), never over any other file."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections import Counter, defaultdict
from pathlib import Path

from measure.errors import UserError
from sitedata.findings import Finding

REPORT = "the drift gate's report (python -m measure check)"  # the first key of every report
# How a report of this command begins, as write_report writes it (json.dumps, indent=1);
# reports written before REPORT began with their kinds.
_OWN_STARTS = (b'{\n "report": ' + json.dumps(REPORT).encode(), b'{\n "kinds": [')
FAILING = {"drift", "stale", "missing", "invalid", "unused", "unknown"}
COMPARED = {"ok", "drift", "cannot tell"}  # "cannot tell": a timing whose range straddles the band


def check_report_path(report: Path) -> None:
    """The report can be written there: said in one line before minutes of regeneration
    (and again just before it is written)."""
    report = Path(report)
    if report.is_dir():
        raise UserError(f"--report {report} is a folder, not a file")
    folder = next(p for p in [report.parent, *report.parent.parents] if p.exists())
    if not folder.is_dir():
        raise UserError(f"--report {report}: {folder} is a file, not a folder")
    if (report.exists() or report.is_symlink()) and not is_own_report(report):
        raise UserError(
            f"--report {report} exists and is not a report of this command: it is never written over; "
            "give the name of a new file"
        )
    try:
        if report.exists():
            with open(report, "a", encoding="utf-8"):
                pass
        else:
            probe = folder / f".report-probe-{os.getpid()}"
            probe.write_text("", encoding="utf-8")
            probe.unlink()
    except OSError as e:
        raise UserError(f"--report {report}: cannot be written ({e.strerror or e})") from None


def is_own_report(report: Path) -> bool:
    """Whether ``report`` is a regular file (not a link) that begins as this command's reports do."""
    try:
        fd = os.open(report, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, 256).startswith(_OWN_STARTS)
    finally:
        os.close(fd)


def write_report(report: Path, payload: dict) -> None:
    check_report_path(report)  # a file put there while the gate ran is not written over either
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"report": REPORT, **payload}, indent=1, default=str) + "\n"
        report.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(f"--report {report}: cannot be written ({e.strerror or e})") from None


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


def table_summary(findings: list[Finding]) -> dict[str, dict[str, int]]:
    summary: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        summary[f"{f.experiment}.{f.table}"][f.verdict] += 1
    return {k: dict(v) for k, v in sorted(summary.items())}


def _short(v, width: int = 18) -> str:
    s = str(v)
    return s if len(s) <= width else s[: width - 1] + "…"


def print_report(
    findings: list[Finding], kinds: tuple[str, ...], summary: dict, passed: bool, speeds: dict | None = None
) -> None:
    w = sys.stdout.write
    w(f"\ndrift check (kinds compared: {', '.join(kinds)})\n\n")
    for line, names in (speeds or {}).items():
        w(f"machine: {line} ({len(names)} experiment{'s' if len(names) != 1 else ''})\n\n")
    w(f"{'table':40} {'cells':>6} {'ok':>6} {'drift':>6} {'?':>6} {'n/c':>6} {'skip':>6}  notes\n")
    for table, counts in table_summary(findings).items():
        cells = sum(counts.values())
        notes = ", ".join(k for k in counts if k in FAILING - {"drift"})
        w(
            f"{table:40} {cells:6} {counts.get('ok', 0):6} {counts.get('drift', 0):6} {counts.get('cannot tell', 0):6} "
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
    unsure = [f for f in findings if f.verdict == "cannot tell"]
    if unsure:
        w(f"\ntimings that cannot be told within or beyond the band ({len(unsure)}; reported, not failed):\n")
        for f in unsure[:20]:
            where = f"{f.experiment}.{f.table}" + ("" if f.row is None else f"[{f.row}]")
            w(f"  {where:40} {_short(f.column or '', 24):24} {f.tolerance}\n")
        if len(unsure) > 20:
            w(f"  ... and {len(unsure) - 20} more (see the JSON report)\n")
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


def print_brief(findings: list[Finding], summary: dict, passed: bool, speeds: dict | None = None) -> None:
    """The report a reviewer reads first: the machine's speed, the counts, then only what
    failed (the full report is the JSON one)."""
    w = sys.stdout.write
    for line, names in (speeds or {}).items():
        w(f"Machine: {line} ({', '.join(names)}).\n\n")
    counts = Counter(f.verdict for f in findings)
    w(
        f"{summary['compared']} of {summary['cells']} cells compared: {counts.get('ok', 0)} within tolerance, "
        f"{counts.get('drift', 0)} drifted, {counts.get('cannot tell', 0)} timings that cannot be told; "
        f"{summary['not_comparable']} not comparable on this machine.\n"
    )
    bad = [f for f in findings if f.verdict in FAILING]
    for f in bad[:50]:
        where = f"{f.experiment}.{f.table}" + ("" if f.row is None else f" row {f.row}")
        where += f" {f.column}" if f.column else ""
        change = f"{_short(f.committed, 24)} -> {_short(f.new, 24)}"
        w(f"- {f.verdict}: {where}: {change} {f.tolerance} {f.reason}".rstrip() + "\n")
    if len(bad) > 50:
        w(f"- ... and {len(bad) - 50} more (the JSON report lists them)\n")
    w("\nPassed.\n" if passed else f"\nFailed: {len(bad)} finding(s).\n")
