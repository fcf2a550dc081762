"""The prepared GPU command (gpu/run_systems.sh) runs the systems experiments with nothing
but torch, transformers, numpy, tqdm and the standard library: tried here on the CPU with
the tiny model, and the imports of every module it reaches checked."""

import ast
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "gpu" / "run_systems.sh"
ALLOWED = {"torch", "transformers", "numpy", "tqdm"}
# Reached only by loading the embedded GGUF default model, which the GPU command never does.
LAZY_EXCEPTIONS = {("models", "safetensors")}


def _experiments() -> list[str]:
    text = SCRIPT.read_text()
    only = text.split("--only ", 1)[1].split()[0]
    return only.split(",")


def _imports(module: str) -> set[str]:
    tree = ast.parse((REPO / "measure" / f"{module}.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == "measure":
                names.update(f"measure.{a.name}" for a in node.names)
    return names


def test_the_command_names_the_systems_experiments():
    assert _experiments() == ["kv_cache", "cache_size", "prefill_decode", "batching"]
    text = SCRIPT.read_text()
    assert "arch:qwen2.5-0.5b" in text and "cuda" in text and "python3" in text


def test_reached_modules_import_only_the_allowed_libraries():
    seen, todo, outside = set(), ["runner", "__main__", *_experiments()], {}
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        for name in _imports(mod):
            top = name.split(".")[0]
            if top == "measure":
                if "." in name:
                    todo.append(name.split(".")[1])
            elif top not in sys.stdlib_module_names and top not in ALLOWED and (mod, top) not in LAZY_EXCEPTIONS:
                outside.setdefault(mod, set()).add(top)
    assert not outside, outside


@pytest.mark.skipif(not os.access(SCRIPT, os.X_OK), reason="the script must be executable")
def test_the_command_runs_on_cpu(tmp_path):
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "DEVICE": "cpu",
        "PROFILE": "smoke",
        "MODEL": "arch:tiny",
    }
    proc = subprocess.run([str(SCRIPT), str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in _experiments():
        meta = json.loads((tmp_path / name / "meta.json").read_text())
        assert meta["model"]["name"] == "arch:tiny" and meta["profile"] == "smoke"
