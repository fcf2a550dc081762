"""Shared fixtures: smoke runs of experiments into temporary folders, built once per
session, and a built site from the committed data."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "hooks"))


class SmokeRuns:
    """Each experiment smoke-run once per test session, on demand, into one temporary
    folder: the tiny random-weights model where that is valid, the embedded trained
    model where an experiment needs trained weights."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.done: set[str] = set()

    def __truediv__(self, name: str) -> Path:
        from measure import registry
        from measure.runner import run_experiments

        if name not in self.done:
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
    return SmokeRuns(tmp_path_factory.mktemp("smoke_site_data"))


def build_site(dest: Path, *, docs: Path | None = None, data: Path | None = None) -> subprocess.CompletedProcess:
    """mkdocs build --strict of a copy of the project config, optionally with other docs
    or data, into ``dest``; returns the finished process."""
    work = dest / "project"
    work.mkdir(parents=True)
    shutil.copy(REPO / "mkdocs.yml", work / "mkdocs.yml")
    shutil.copytree(REPO / "hooks", work / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "measure", work / "measure", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(docs or REPO / "docs", work / "docs")
    shutil.copytree(data or REPO / "site_data", work / "site_data")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(dest / "site")],
        cwd=work,
        capture_output=True,
        text=True,
        env={**_env(), "NO_MKDOCS_2_WARNING": "1"},
    )


def _env() -> dict:
    import os

    return dict(os.environ)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("built")
    proc = build_site(dest)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dest / "site"
