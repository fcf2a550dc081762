"""Shared fixtures: smoke runs of experiments into temporary folders, built once per
session, and a built site from the committed data; the tiers that mark the tests which
use them (pyproject.toml registers the markers, `make test-fast` leaves those tests out)."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from hypothesis import settings

from sitekit.language.editions import editions

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


LANGUAGES = editions()  # docs/<page>.<lang>.md beside docs/<page>.md, as mkdocs.yml lists them


def nav_pages() -> list[str]:
    """The site's pages (docs/<page>) in the order of the nav in mkdocs.yml, read as the
    build reads it (hooks/render.py)."""
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [page for page, _title in hook("render")._nav_titles(nav)]


# Experiments whose code now writes other tables, columns or values than site_data/ holds:
# their data is measured again (on a quiet machine) before it can state what the code
# declares. The tests that hold the committed data to the code pass over these, and one
# holds each still stale, so that an entry goes when its data comes.
AWAITING_MEASUREMENT: dict[str, str] = {  # experiment: what changed in its code
}


def pytest_report_header(config) -> list[str]:
    """Edition pages that make section wrote in English and nobody has written since: the
    tests of an edition's words fail on them, and tests/test_editions_follow.py says why."""
    from sitekit.language.editions import pending

    waiting = pending()
    return [f"edition pages that follow nothing yet (make section wrote them in English): {', '.join(waiting)}"] * bool(
        waiting
    )


def english_pages() -> list:
    """docs/<page>.md, the English edition that every other edition follows."""
    return sorted(p for p in DOCS.glob("*.md") if p.suffixes == [".md"])


# Property tests: no per-example deadline (a shared CI machine stalls now and then); under
# `make mutate` (tests/mutation/run.py sets HYPOTHESIS_PROFILE) fewer examples per test,
# since every mutant runs them again.
settings.register_profile("default", deadline=None)
settings.register_profile("mutation", deadline=None, max_examples=25)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def hook(name: str) -> ModuleType:
    """hooks/<name>.py, loaded as MkDocs loads a hook: from its file, as the module
    ``name`` (once per process, as a build loads it once)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "hooks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# The tiers (registered in pyproject.toml). A test that smoke-runs an experiment or builds
# the site through these fixtures or helpers must carry their marker, or `make test-fast`
# would run it: one that does not fails, naming the marker, before the work starts.
TIERS = {"smoke_data": "smoke", "built_site": "build"}
_running: list = []  # the test being set up or run, for the helpers below


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _running[:] = [item]
    for fixture, marker in TIERS.items():
        if fixture in item.fixturenames and item.get_closest_marker(marker) is None:
            pytest.fail(f"{item.nodeid} uses {fixture}: mark it @pytest.mark.{marker}", pytrace=False)


def pytest_runtest_teardown(item):
    _running.clear()


def require_marker(marker: str, what: str) -> None:
    """Fail the running test unless it carries ``marker`` (called by what smoke-runs or
    builds). Outside a test (a fixture's teardown, a script), nothing is asked."""
    if _running and _running[0].get_closest_marker(marker) is None:
        pytest.fail(f"{_running[0].nodeid} {what}: mark it @pytest.mark.{marker}", pytrace=False)


def session_folder(factory, name: str) -> Path:
    """A folder of this test session that its xdist workers share (they run in one base
    folder), so that what one worker smoke-ran or built the other reads instead of doing
    it again; without workers, a folder of its own."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = factory.getbasetemp().parent / name
        folder.mkdir(exist_ok=True)
        return folder
    return factory.mktemp(name)


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Held by one process at a time: the workers take turns to write a shared folder
    (the lock file lies beside it, so the folder holds only what was written there)."""
    with open(folder.parent / f".{folder.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class SmokeRuns:
    """Each experiment smoke-run once per test session, on demand, into one temporary
    folder that the workers share: the tiny random-weights model where that is valid,
    the embedded trained model where an experiment needs trained weights."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.done: set[str] = set()

    def locked(self):
        """Held while the folder's shared records (its calibration) are read."""
        return locked(self.root)

    def __truediv__(self, name: str) -> Path:
        from measure import registry
        from measure.runner import run_experiments

        if name not in self.done:
            require_marker("smoke", f"smoke-runs {name}")
            with locked(self.root):
                if not (self.root / name / "meta.json").exists():  # the other worker's run
                    trained = getattr(registry.load(name), "NEEDS_TRAINED", False)
                    run_experiments(
                        names=[name],
                        model="default" if trained else "arch:tiny",
                        device="cpu",
                        profile="smoke",
                        out=self.root,
                        quiet=True,
                    )
            self.done.add(name)
        return self.root / name


@pytest.fixture(scope="session")
def smoke_data(tmp_path_factory) -> SmokeRuns:
    """``smoke_data / "kv_cache"`` is the folder of a smoke run of that experiment."""
    return SmokeRuns(session_folder(tmp_path_factory, "smoke_site_data"))


def copy_project_files(work: Path) -> None:
    """What a build reads beside the pages: the citation file and each edition's glossary."""
    shutil.copy(REPO / "CITATION.cff", work / "CITATION.cff")
    shutil.copytree(REPO / "includes", work / "includes", dirs_exist_ok=True)


def build_site(
    dest: Path, *, docs: Path | None = None, data: Path | None = None, locales: Path | None = None
) -> subprocess.CompletedProcess:
    """mkdocs build --strict of a copy of the project config, optionally with other docs,
    data or catalogs (a folder of .po files), into ``dest``; returns the finished process."""
    require_marker("build", "builds the site")
    work = dest / "project"
    work.mkdir(parents=True)
    shutil.copy(REPO / "mkdocs.yml", work / "mkdocs.yml")
    # The hooks' files, which mkdocs.yml names; the packages they import are the installed project's.
    shutil.copytree(REPO / "hooks", work / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    if locales is not None:
        shutil.rmtree(work / "hooks" / "locales")
        shutil.copytree(locales, work / "hooks" / "locales")
    # Each experiment's claims file, read as data; the measuring code beside it stays behind.
    shutil.copytree(
        REPO / "measure/experiments", work / "measure/experiments", ignore=shutil.ignore_patterns("*.py", "__pycache__")
    )
    shutil.copytree(docs or REPO / "docs", work / "docs")
    shutil.copytree(data or REPO / "site_data", work / "site_data")
    copy_shown_code(work / "docs", work)
    copy_project_files(work)
    return subprocess.run(
        [sys.executable, "-c", _BUILD, str(dest / IMPORTED), "--strict", "--site-dir", str(dest / "site")],
        cwd=work,
        capture_output=True,
        text=True,
        # drawn figures are kept by what they are drawn from, so every build of a copy shares them
        env={**_env(), **BUILD_ENV},
    )


# `mkdocs build ARGS`, and then a record of which packages of the measuring stack the build
# imported, one per line (the site builds without them: test_sitedata_read reads it)
_BUILD = """
import runpy, sys
record, sys.argv = sys.argv[1], ["mkdocs", "build", *sys.argv[2:]]
try:
    runpy.run_module("mkdocs", run_name="__main__", alter_sys=True)
finally:
    heavy = [m for m in sorted(sys.modules) if m.split(".")[0] in ("torch", "transformers", "measure")]
    with open(record, "w", encoding="utf-8") as out:
        out.write("".join(m + "\\n" for m in heavy))
"""
IMPORTED = "imported.txt"  # beside the built site

# How a test builds a copy of the project: figures drawn once for every copy, and the
# source archive made from the checkout the copy came from
BUILD_ENV = {
    "NO_MKDOCS_2_WARNING": "1",
    "SITEKIT_FIGURE_CACHE": str(REPO / ".cache" / "figures"),
    "SITEKIT_SOURCE_ROOT": str(REPO),
}
SHOWN_CODE = re.compile(r'--8<--\s+"([^":]+)(?::[^"]*)?"')


def copy_shown_code(docs: Path, work: Path) -> None:
    """The measuring code's lines a page shows (pymdownx.snippets), copied into the copy as
    files to read: the build reads them as text and never imports them."""
    for page in docs.glob("*.md"):
        for rel in SHOWN_CODE.findall(page.read_text(encoding="utf-8")):
            if not (work / rel).exists():
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(REPO / rel, work / rel)


def _env() -> dict:
    import os

    return dict(os.environ)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site built from the committed data once per session (the workers share it);
    tests read it and never write into it."""
    root = session_folder(tmp_path_factory, "built")
    with locked(root):
        done = root / "built.done"
        if not done.exists():
            shutil.rmtree(root / "build", ignore_errors=True)
            proc = build_site(root / "build")
            assert proc.returncode == 0, proc.stderr[-3000:]
            done.touch()
    return root / "build" / "site"


# The provenance of hand-made test data: every field a reader requires, none measured.
PROVENANCE = {
    "title": "E",
    "code_hash": "0" * 16,
    "git_commit": "unknown",
    "date": "2026-01-01T00:00:00+00:00",
    "duration_s": 1.0,
    "model": {"name": "m", "spec": "arch:tiny", "parameters": 1, "weights": "w"},
    "device": {"id": "cpu:X:2threads", "type": "cpu", "cpu": "X", "torch_threads": 2},
    "dtype": "float32",
    "libraries": {},
    "profile": "smoke",
    "parameters": {},
}


def write_data(
    root: Path, name: str, tables: dict, values: dict | None = None, units: dict | None = None, **provenance
) -> Path:
    """A small experiment folder written through the data layer, for tests that need
    hand-made data: ``tables`` maps a table name to its rows; every column is exact,
    every value numeric."""
    from sitedata import Column, Result, Table, Value, write_experiment
    from sitedata.policies import NUMERIC

    specs = tuple(Table(t, t.upper(), tuple(Column(c) for c in rows[0])) for t, rows in tables.items())
    meta = {**PROVENANCE, "title": name, **provenance}
    return write_experiment(
        root,
        name,
        Result(tables=tables, values=values or {}),
        tables=specs,
        values=tuple(Value(v, (units or {}).get(v, ""), policy=NUMERIC) for v in values or {}),
        provenance=meta,
    )


def edit_table(folder: Path, table: str, edit) -> None:
    """Change a committed table as a run would have written it: ``edit(rows)`` changes
    the rows (lists of strings, header first) and the checksum in meta.json follows."""
    import csv
    import io
    import json

    from sitedata.store import sha256

    path = folder / f"{table}.csv"
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    edit(rows)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    meta["tables"][table]["sha256"] = sha256(buf.getvalue())
    meta["tables"][table]["rows"] = len(rows) - 1
    (folder / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
