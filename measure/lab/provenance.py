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


def module_path(module: str) -> Path | None:
    """``measure.lab.models`` -> measure/lab/models.py, a package -> its __init__.py;
    None for a name that is neither (an attribute, as in ``from m import function``)."""
    base = PACKAGE_DIR.parent.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imports_of(module: str, packages: tuple[str, ...] = ("measure",)) -> list[str]:
    """The modules and packages of ``packages`` (the project's, by default ``measure``)
    that ``module`` imports, wherever the import stands (one inside a function runs when
    the function does), relative ones resolved."""
    path = module_path(module)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from .x import y, from .. import z
                parent = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            # ``from package import module`` reads the module, not the package's namespace
            subs = [f"{base}.{a.name}" for a in node.names]
            names = [n for n in subs if module_path(n)] + ([base] if not all(map(module_path, subs)) else [])
        else:
            continue
        found += [n for n in names if n.split(".")[0] in packages and n != module and module_path(n)]
    return list(dict.fromkeys(found))


def code_files(experiment: str) -> list[Path]:
    """The experiment's module (or package) and every ``measure`` module it imports,
    directly or not, with the packages above each (whose __init__.py runs first): the
    code whose change can move its numbers (found by reading imports, not by convention,
    so an edit to the batching simulator does not stale the quality page, nor one to a
    module of the kv_cache package any other page)."""
    return reached_files(f"measure.experiments.{experiment}")


def reached_files(module: str) -> list[Path]:
    """``module`` and every ``measure`` module it reaches, with the packages above each."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        module = todo.pop()
        if module in seen or module_path(module) is None:
            continue
        seen[module] = module_path(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += imports_of(module)
    return sorted(seen.values())


def _files_hash(files: list[Path]) -> str:
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(PACKAGE_DIR).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def code_hash(experiment: str) -> str:
    """sha256 of the code that produced an experiment's numbers, so that a result can be
    recognised as stale after it changes (content, not file times, which a clone resets)."""
    return _files_hash(code_files(experiment))


def module_hash(module: str) -> str:
    """The same hash for a folder that no experiment writes (the runner's calibration)."""
    return _files_hash(reached_files(module))


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


def provenance(*, experiment: str, config, ctx, duration_s: float, code: str | None = None) -> dict:
    """An experiment's meta.json provenance; ``run``, the run's start calibration
    (``Context.calibration``), where the run was calibrated; ``code``, the code's hash when
    the runner imported it (else hashed now)."""
    run = {"run": ctx.calibration.provenance()} if ctx.calibration is not None else {}
    return {
        "title": ctx.experiment_title,
        "code_hash": code or code_hash(experiment),
        **_where(ctx.model, ctx.machine, ctx.dtype, ctx.profile, duration_s),
        "parameters": asdict(config),
        "memory_method": ctx.memory_method,
        **run,
    }


def folder_provenance(
    *, title: str, module: str, parameters: dict, model, machine: dict, dtype, profile: str, duration_s: float
) -> dict:
    """The provenance of a folder the runner writes itself (the calibration): its code
    is ``module`` and what it reaches."""
    return {
        "title": title,
        "code_hash": module_hash(module),
        **_where(model, machine, dtype, profile, duration_s),
        "parameters": parameters,
    }


def _where(model, machine: dict, dtype, profile: str, duration_s: float) -> dict:
    return {
        **git_state(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_s": round(duration_s, 2),
        "model": model.describe(),
        "device": machine,
        "dtype": str(dtype).removeprefix("torch."),
        "libraries": library_versions(),
        "profile": profile,
    }
