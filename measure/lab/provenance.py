"""Who, what and where for every result: captured automatically, never typed."""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import platform
import subprocess
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import torch

PACKAGE_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = PACKAGE_DIR.parent


def code_files(experiment: str) -> list[Path]:
    """The experiment's module and every ``measure`` module it imports, directly or not:
    the code whose change can move its numbers (found by reading imports, not by
    convention, so an edit to the batching simulator does not stale the quality page)."""
    seen: dict[str, Path] = {}
    todo = [f"measure.experiments.{experiment}"]
    while todo:
        module = todo.pop()
        path = PACKAGE_DIR.parent.joinpath(*module.split(".")).with_suffix(".py")
        if module in seen or not path.is_file():
            continue
        seen[module] = path
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("measure"):
                todo.append(node.module)
                todo += [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("measure")]
    return sorted(seen.values())


def code_hash(experiment: str) -> str:
    """sha256 of the code that produced an experiment's numbers, so that a result can be
    recognised as stale after it changes (content, not file times, which a clone resets)."""
    h = hashlib.sha256()
    for p in code_files(experiment):
        h.update(p.relative_to(PACKAGE_DIR).as_posix().encode())
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
        "device": ctx.machine,
        "dtype": str(ctx.dtype).removeprefix("torch."),
        "libraries": library_versions(),
        "profile": ctx.profile,
        "parameters": asdict(config),
        "memory_method": ctx.memory_method,
    }
