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

A simulated table is not compared cell by cell where it follows the timings: it is run
again on the committed run's own costs and held to its rows (``measure/resimulation.py``).

Fails (exit 1) on: a drifted cell or value, or a simulation that no longer gives its
rows; a table whose producing code changed since it was measured (stale); committed data
that is missing or does not verify against its meta.json, or whose declarations,
parameters or dtype differ from the code's, or that lacks a table, column or value the
code declares; a regenerated run that is no rerun of the committed one; a table a page
uses that no experiment produces, or one no page shows; and a check that compared
nothing at all. A report path that cannot be written is one
line (exit 2) before anything is regenerated.
"""

from __future__ import annotations

import re
import tempfile
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict
from pathlib import Path

from measure import registry
from measure.check_report import (
    FAILING,
    check_report_path,
    coverage,
    print_brief,
    print_report,
    table_summary,
    write_report,
)
from measure.resimulation import resimulation_findings
from sitedata import DataError, Experiment, read_experiment
from sitedata.compare import Finding, compare_experiment
from sitedata.declared import Declared, as_stored
from sitedata.machine_speed import MachineState, Speed
from sitedata.named import EXPRESSION_KEYS
from sitedata.runs import folder_keys, run_of, runs

_TABLE_REF = re.compile(r"""(?:table|cell|column)\(\s*['"]([a-z0-9_]+\.[a-z0-9_]+)['"]""")
# a claim a page names (claim('exp.name', ...) or <!-- if/elif exp.name -->), defined in
# measure/experiments/<exp>/claims.toml, or an answer (answer('exp.name')), in answers.toml
_NAMED_REF = re.compile(
    r"""(claim|answer)\(\s*['"]([a-z0-9_]+\.[a-z0-9_]+)['"]|<!--\s*(?:el)?if\s+([a-z0-9_]+\.[a-z0-9_]+)\s*-->"""
)
CLAIMS = Path(__file__).resolve().parent / "experiments"


def page_table_refs(docs: Path, claims: Path = CLAIMS) -> dict[str, set[str]]:
    """table ref -> the pages that use it: in tables and cells, and in the expressions of
    the claims and answers they name (each experiment's claims.toml and answers.toml
    under ``claims``)."""
    expressions: dict[tuple[str, str], str] = {}
    for kind, key in EXPRESSION_KEYS.items():
        for path in sorted(claims.glob(f"*/{kind}.toml")):
            for name, entry in tomllib.loads(path.read_text(encoding="utf-8")).items():
                if isinstance(entry, dict) and isinstance(entry.get(key), str):
                    expressions[(kind, f"{path.parent.name}.{name}")] = entry[key]
    refs: dict[str, set[str]] = defaultdict(set)
    for page in sorted(docs.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        named = {
            ("answers" if call == "answer" else "claims", ref or cond) for call, ref, cond in _NAMED_REF.findall(text)
        }
        for ref in _TABLE_REF.findall(text + "\n".join(expressions.get(n, "") for n in sorted(named))):
            refs[ref].add(str(page.relative_to(docs)))
    return refs


def _pages_findings(names: list[str], docs: Path) -> list[Finding]:
    """The pages' table use against the tables the code of the experiments checked
    (``names``) produces; a table of an experiment not checked here is not judged. The
    runner's calibration folder is produced by every run: a page may use its tables, and
    one that none shows is not a finding (it is a record of the runs, not a result)."""
    from measure import calibration_folder

    runner = {f"{calibration_folder.FOLDER}.{t.name}" for t in calibration_folder.TABLES}
    produced = {f"{name}.{t.name}" for name in names for t in registry.load(name).TABLES}
    used = page_table_refs(docs)
    out = []
    for ref in sorted(set(used) - produced - runner):
        exp, table = ref.split(".")
        if exp in registry.EXPERIMENTS and exp not in names:
            continue
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


def _speed(committed: Path, old: Experiment, out: Path, new: Experiment) -> Speed | None:
    """The regenerated run's machine against the committed run's, from their calibrations
    (None where either has none: then timings are compared as measured)."""
    runs = [e.meta.get("run", {}).get("id") if isinstance(e.meta.get("run"), dict) else None for e in (old, new)]
    if not all(isinstance(r, str) for r in runs):
        return None
    states = MachineState.of(committed, runs[0]), MachineState.of(out, runs[1])
    return Speed.between(*states) if all(states) else None


@contextmanager
def _timings_not_compared() -> Iterator[None]:
    """A regeneration whose timings nobody reads: every point timed once, nothing compiled."""
    from measure.lab.compiled_decode import eager_stand_in
    from measure.lab.medians import minimal_rounds

    with minimal_rounds(), eager_stand_in():
        yield


def _committed_run(committed: Path, regenerated: Path) -> Path:
    """The committed run of the regenerated run's key (sitedata.runs): the primary or
    one under runs/<key>; where site_data holds none, the primary, said in one line (what
    reproduces on any machine is compared across machines; the rest is not comparable)."""
    try:
        keys = set(folder_keys(regenerated, readable_only=True).values())
        key = keys.pop() if len(keys) == 1 else None
        held = run_of(runs(committed), key) if key is not None else None
    except DataError:  # a link or damaged data: each experiment's own reading says what is wrong
        return committed
    if key is None:  # nothing readable, or runs of several keys: compared as before, with the primary
        return committed
    if held is None:
        print(
            f"{committed} holds no run of key {key}: compared with its primary run, where the cells that reproduce "
            f"on this machine only are not comparable; make merge FROM={regenerated} adds this run beside it"
        )
        return committed
    print(f"compared with the committed run of key {key}" + ("" if held == committed else f" ({held})"))
    return held


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
    brief: bool = False,
) -> int:
    from measure.lab.provenance import code_hash
    from measure.runner import run_experiments

    names = registry.select(only)
    if report is not None:
        check_report_path(report)
    if regenerated is not None:
        committed = _committed_run(Path(committed), Path(regenerated))
    findings: list[Finding] = []
    speeds: dict[str, list[str]] = {}  # each pair of runs' speed, said once, with its experiments
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
        if "numeric" in kinds:  # arithmetic only: it reproduces on any machine
            findings += resimulation_findings(exp)
        groups[(exp.meta["model"]["spec"], exp.meta["profile"])].append(name)

    # A check that compares no timing times each point once and compiles nothing: what it
    # compares depends neither on how long a point was timed (medians.minimal_rounds) nor
    # on the compiled step, whose only products are timings (compiled_decode.eager_stand_in).
    quick = "timing" not in kinds
    with tempfile.TemporaryDirectory(prefix="measure-check-") as tmp:
        out = regenerated or Path(tmp)
        if regenerated is None and groups and quick and not quiet:
            print("timings are not compared: every timed point is timed once, nothing is compiled", flush=True)
        if regenerated is None:
            for (model, profile), group in groups.items():
                with _timings_not_compared() if quick else nullcontext():
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
            speed = _speed(committed, exp, out, new) if "timing" in kinds else None
            if speed is not None:
                speeds.setdefault(speed.describe(), []).append(name)
            findings += compare_experiment(exp, new, code=code, kinds=kinds, speed=speed)
    if docs is not None:
        findings += _pages_findings(names, docs)
    summary = coverage(findings)
    passed = not any(f.verdict in FAILING for f in findings) and summary["compared"] > 0
    if brief:
        print_brief(findings, summary, passed, speeds)
    else:
        print_report(findings, kinds, summary, passed, speeds)
    if report is not None:
        payload = {
            "kinds": list(kinds),
            "timings_sampled": "minimal rounds" if quick else "as the profile asks",
            "passed": passed,
            "coverage": summary,
            "counts": Counter(f.verdict for f in findings),
            "findings": [f.as_dict() for f in findings if f.verdict != "ok"],
            "tables": table_summary(findings),
            "machine_speed": speeds,
        }
        write_report(report, payload)
    return 0 if passed else 1
