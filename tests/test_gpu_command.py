"""The prepared GPU command (gpu/run_systems.sh) runs the systems experiments with nothing
but torch, transformers, numpy, tqdm and the standard library: tried here on the CPU with
a tiny model and the GPU image's transformers (gpu/rehearse.sh), what it writes merged,
and the imports of every module it reaches checked."""

import ast
import json
import os
import shutil
import subprocess
import sys

import pytest

from sitedata import read_experiment
from sitedata.runs import RUNS, folder_key
from tests.conftest import REPO

SCRIPT = REPO / "gpu" / "run_systems.sh"
ALLOWED = {"torch", "transformers", "numpy", "tqdm"}
# Reached only by loading the embedded GGUF default model or a hub id, which the GPU command never does.
LAZY_EXCEPTIONS = {("measure.lab.embedded", "safetensors"), ("measure.lab.models", "huggingface_hub")}
# Reached only by `python -m measure notebooks`, which executes the notebook pages where the site is built.
LAZY_EXCEPTIONS |= {("measure.notebooks", "nbclient"), ("measure.notebooks", "nbformat")}
# Reached only by `python -m measure section` (make section), which writes a new section's
# skeleton where the site is written: its catalogs, nav and lock, never on the GPU machine.
LAZY_EXCEPTIONS |= {("measure.scaffold.edits", lib) for lib in ("babel", "sitekit", "yaml")}


def _experiments() -> list[str]:
    text = SCRIPT.read_text()
    only = text.split("--only ", 1)[1].split()[0]
    return only.split(",")


def _path(module: str):
    """measure.lab.models -> measure/lab/models.py (a package -> its __init__.py)."""
    path = REPO.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _imports(module: str) -> set[str]:
    tree = ast.parse(_path(module).read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names if _path(f"{node.module}.{a.name}").is_file())
    return names


def test_the_command_names_the_systems_experiments():
    assert _experiments() == ["kv_cache", "cache_size", "prefill_decode", "batching"]
    text = SCRIPT.read_text()
    assert "arch:qwen2.5-0.5b" in text and "cuda" in text and "python3" in text


def test_reached_modules_import_only_the_allowed_libraries():
    """The project's own packages (measure, and the data layer sitedata) are followed;
    everything else they reach must be the standard library or the allowed few."""
    start = ["measure.runner", "measure.__main__", *(f"measure.experiments.{e}" for e in _experiments())]
    seen, todo, outside = set(), start, {}
    while todo:
        mod = todo.pop()
        if mod in seen or not _path(mod).is_file():
            continue
        seen.add(mod)
        for name in _imports(mod):
            top = name.split(".")[0]
            if top in ("measure", "sitedata"):
                todo.append(name)
            elif top not in sys.stdlib_module_names and top not in ALLOWED and (mod, top) not in LAZY_EXCEPTIONS:
                outside.setdefault(mod, set()).add(top)
    assert "sitedata.store" in seen and "measure.lab.models" in seen
    assert not outside, outside


@pytest.mark.skipif(not os.access(SCRIPT, os.X_OK), reason="the script must be executable")
def test_the_command_without_its_folder_says_how_to_call_it():
    usage = subprocess.run([str(SCRIPT)], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage: gpu/run_systems.sh OUTPUT_FOLDER" in usage.stderr


def _merges_whole(out, tmp_path):
    """What the command wrote in ``out`` merges into a copy of site_data as the run of its
    own key, beside the primary, verified and whole, and leaves every other run
    byte-identical; data from other code, or damaged on the way, is refused whole."""
    site = tmp_path / "site_data"
    shutil.copytree(REPO / "site_data", site, ignore=shutil.ignore_patterns(".*.new-*"))

    def others():
        return {
            str(p.relative_to(site)): p.read_bytes() for p in site.rglob("*") if p.is_file() and into not in p.parents
        }

    key = folder_key(out)
    into = site / RUNS / key
    before = others()
    merged = _merge(out, site)
    assert merged.returncode == 0, merged.stderr
    assert f"run {key}: beside the primary run, in {into}" in merged.stdout
    assert merged.stdout.count("merged ") == len(_experiments())
    for name in _experiments():
        assert (into / name / "meta.json").read_bytes() == (out / name / "meta.json").read_bytes()
        read_experiment(into, name)
    assert others() == before  # the primary and every other run, byte for byte
    # The run's calibration came with it: the one run its experiments name.
    runs = {read_experiment(out, name).meta["run"]["id"] for name in _experiments()}
    assert len(runs) == 1 and "calibration: 1 run kept, 1 of them from" in merged.stdout
    assert [r["run"] for r in read_experiment(into, "calibration").rows("runs")] == sorted(runs)

    # Data from other code, or damaged on the way, is refused whole: nothing merged.
    merged_metas = {name: (into / name / "meta.json").read_bytes() for name in _experiments()}
    meta_path = out / "cache_size" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["code_hash"] = "0" * 16
    meta_path.write_text(json.dumps(meta))
    refused = _merge(out, site)
    assert refused.returncode == 2 and "nothing merged: cache_size" in refused.stderr and "other code" in refused.stderr
    csv_path = out / "kv_cache" / "memory.csv"
    csv_path.write_text(csv_path.read_text()[:-20])
    refused = _merge(out, site, "--only", "kv_cache")
    assert refused.returncode == 2 and "nothing merged" in refused.stderr and "memory.csv" in refused.stderr
    assert merged_metas == {name: (into / name / "meta.json").read_bytes() for name in _experiments()}
    assert others() == before


def _merge(source, into, *args):
    return subprocess.run(
        [sys.executable, "-m", "measure", "merge", str(source), "--into", str(into), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )


REHEARSAL = REPO / "gpu" / "rehearse.sh"


@pytest.mark.smoke
def test_the_rehearsal_runs_the_command_with_the_devices_transformers_and_its_data_merges(tmp_path):
    """gpu/rehearse.sh: the GPU command on this CPU with the GPU image's transformers, so
    that an API difference shows here and not in GPU time. The Qwen2 architecture at a
    tiny size: the same modeling code as Qwen2.5-0.5B, compiled in seconds, not minutes."""
    env = {**os.environ, "PYTHON": sys.executable, "MODEL": "arch:qwen2-tiny"}
    out = tmp_path / "gpu_out"
    proc = subprocess.run([str(REHEARSAL), str(out)], capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0 and "No matching distribution" in proc.stderr:
        pytest.skip("the package registry cannot be reached to install the device's transformers")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "transformers 5.17.0" in proc.stdout
    for name in _experiments():
        meta = read_experiment(out, name).meta
        assert meta["libraries"]["transformers"] == "5.17.0"
        assert meta["model"]["name"] == "arch:qwen2-tiny" and meta["profile"] == "smoke"
    # The compiled step ran with the device's transformers, and the estimate came first.
    for name in ("prefill_decode", "batching"):
        values = read_experiment(out, name).meta["values"]
        assert values["compiled_available"]["value"] is True, values["compiled_method"]
    assert proc.stderr.index("estimate:") < proc.stderr.index("(1/4)")
    assert f"make merge FROM={out}" in proc.stdout
    _merges_whole(out, tmp_path)
