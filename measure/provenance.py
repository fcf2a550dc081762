"""Who, what and where for every result: captured automatically, never typed."""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import torch

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent

# Modules whose code does not influence a number: changing them must not mark results stale.
_NOT_MEASUREMENT_CODE = {
    "__init__.py",
    "__main__.py",
    "store.py",
    "provenance.py",
    "registry.py",
    "errors.py",
    "progress.py",
    "check.py",
    "compare.py",
}


def shared_code_files() -> list[Path]:
    """The non-experiment modules every experiment may call (loading, timing, memory...)."""
    from measure.registry import EXPERIMENTS

    experiment_files = {f"{name}.py" for name in EXPERIMENTS}
    return sorted(
        p for p in PACKAGE_DIR.glob("*.py") if p.name not in _NOT_MEASUREMENT_CODE and p.name not in experiment_files
    )


def code_hash(experiment: str) -> str:
    """sha256 of the experiment's module and the shared measurement code, so that a
    result can be recognised as stale after either changes (content, not file times,
    which a clone resets)."""
    h = hashlib.sha256()
    for p in [PACKAGE_DIR / f"{experiment}.py", *shared_code_files()]:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def git_state() -> dict:
    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=REPO_DIR, capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--", "measure"))
    return {"git_commit": commit or "unknown", "measure_code_modified": dirty}


def library_versions() -> dict:
    versions = {"python": platform.python_version(), "torch": torch.__version__}
    for pkg in ("transformers", "numpy", "gguf"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    return versions


def provenance(*, experiment: str, config, ctx, duration_s: float) -> dict:
    return {
        "title": ctx.experiment_title,
        "code_hash": code_hash(experiment),
        **git_state(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_s": round(duration_s, 2),
        "model": ctx.model.describe(),
        "device": ctx.fingerprint,
        "dtype": str(ctx.dtype).removeprefix("torch."),
        "libraries": library_versions(),
        "profile": ctx.profile,
        "parameters": asdict(config),
        "memory_method": ctx.memory_method,
    }
