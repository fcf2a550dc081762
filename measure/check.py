"""``python -m measure check``: regenerate measurements into a temporary folder and
compare them with the committed site_data, never writing over it.

Each cell is compared where its declared scope allows (see ``sitedata.compare``): byte
counts and formulas wherever the committed run came from, float results of the model on
the same device type and dtype, timings on the same machine only. The report says how
many cells were compared and how many could not be here, and why.

How each cell is compared, where it reproduces, and which tables, columns and values
there are, are the code's declarations (the experiment module's ``TABLES``, ``VALUES``
and ``Config`` for the committed profile), never the meta.json's being checked; the
committed data must state the same (``sitedata.declared``).

Fails (exit 1) on: a drifted cell or value; a table whose producing code changed since
it was measured (stale); committed data that is missing or does not verify against its
meta.json, or whose declarations, parameters or dtype differ from the code's, or that
lacks a table, column or value the code declares; a regenerated run that is no rerun of
the committed one; a table a page uses that no experiment produces, or one no page shows;
and a check that compared nothing at all. A report path that cannot be written is one
line (exit 2) before anything is regenerated.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path

from measure import registry
from measure.errors import UserError
from sitedata import DataError, Experiment, read_experiment
from sitedata.compare import Finding, compare_experiment
from sitedata.declared import Declared, as_stored

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


def declared(exp: Experiment) -> Declared | Finding:
    """What the code declares for the committed run of an experiment: its tables, values,
    the parameters of the run's profile and the dtype the code measures in on the run's
    device type; or the finding that the run names a profile or device the code has not."""
    import torch

    from measure.lab.context import PROFILES
    from measure.lab.devices import default_dtype

    mod, meta = registry.load(exp.name), exp.meta
    where = f"{exp.folder.parent.name}/{exp.name}/meta.json"
    if meta["profile"] not in PROFILES:
        reason = f"{where} names profile {meta['profile']!r}, which the code does not have ({', '.join(PROFILES)})"
        return Finding(
            experiment=exp.name,
            table="meta",
            column="profile",
            verdict="invalid",
            committed=meta["profile"],
            reason=reason,
        )
    try:
        dtype = str(default_dtype(torch.device(meta["device"]["type"]))).removeprefix("torch.")
    except (RuntimeError, TypeError, ValueError):
        reason = f"{where} names device type {meta['device']['type']!r}, which torch does not know"
        return Finding(experiment=exp.name, table="meta", column="device", verdict="invalid", reason=reason)
    return Declared(
        title=mod.TITLE,
        tables=tuple(mod.TABLES),
        values=tuple(mod.VALUES),
        parameters=as_stored(asdict(mod.Config.for_profile(meta["profile"]))),
        dtype=dtype,
    )


def check_report_path(report: Path) -> None:
    """The report can be written there: said in one line before minutes of regeneration."""
    report = Path(report)
    if report.is_dir():
        raise UserError(f"--report {report} is a folder, not a file")
    folder = next(p for p in [report.parent, *report.parent.parents] if p.exists())
    if not folder.is_dir():
        raise UserError(f"--report {report}: {folder} is a file, not a folder")
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


def _write_report(report: Path, payload: dict) -> None:
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps(payload, indent=1, default=str) + "\n", encoding="utf-8")
    except OSError as e:
        raise UserError(f"--report {report}: cannot be written ({e.strerror or e})") from None


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
    from measure.lab.provenance import code_hash
    from measure.runner import run_experiments

    names = registry.select(only)
    if report is not None:
        check_report_path(report)
    findings: list[Finding] = []
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    read: dict[str, tuple[Experiment, Declared]] = {}
    for name in names:
        found, exp = _committed_findings(name, committed)
        findings += found
        if exp is None:
            continue
        code = declared(exp)
        if isinstance(code, Finding):
            findings.append(code)
            continue
        read[name] = (exp, code)
        groups[(exp.meta["model"]["spec"], exp.meta["profile"])].append(name)

    with tempfile.TemporaryDirectory(prefix="measure-check-") as tmp:
        out = regenerated or Path(tmp)
        if regenerated is None:
            for (model, profile), group in groups.items():
                run_experiments(names=group, model=model, device=device, profile=profile, out=out, quiet=quiet)
        for name, (exp, code) in read.items():
            try:
                new = read_experiment(out, name)
            except DataError as e:
                findings.append(Finding(experiment=name, table="meta", verdict="missing", reason=f"regenerated: {e}"))
                continue
            if new.meta["code_hash"] != code_hash(name):
                reason = "the regenerated data was measured by other code than this checkout's; regenerate it"
                findings.append(
                    Finding(experiment=name, table="meta", column="code_hash", verdict="stale", reason=reason)
                )
                continue
            findings += compare_experiment(exp, new, code=code, kinds=kinds)
    if docs is not None:
        produced = {f"{name}.{t}" for name, (exp, _) in read.items() for t in exp.meta["tables"]}
        findings += _pages_findings(produced, docs)
    summary = coverage(findings)
    passed = not any(f.verdict in FAILING for f in findings) and summary["compared"] > 0
    _print_report(findings, kinds, summary, passed)
    if report is not None:
        payload = {
            "kinds": list(kinds),
            "passed": passed,
            "coverage": summary,
            "counts": Counter(f.verdict for f in findings),
            "findings": [f.as_dict() for f in findings if f.verdict != "ok"],
            "tables": _table_summary(findings),
        }
        _write_report(report, payload)
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
