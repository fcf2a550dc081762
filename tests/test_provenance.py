"""Staleness by the import graph: an experiment's code hash covers its module or package
and every ``measure`` module it reaches, and nothing else."""

import shutil
from pathlib import Path

import pytest

from measure import registry
from measure.lab import provenance
from sitedata import read_experiment
from tests.conftest import REPO


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "measure" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "measure"


# Two experiments: ``one`` a package with a helper only it uses, ``two`` a module; both
# reach lab/shared.py; ``two`` reaches lab/lazy.py only from inside a function.
FAKE = {
    "__init__.py": "",
    "experiments/__init__.py": "",
    "experiments/one/__init__.py": "from measure.experiments.one.helper import f\nfrom measure.lab.shared import g\n",
    "experiments/one/helper.py": "from .rows import r\n",
    "experiments/one/rows.py": "",
    "experiments/two.py": "from measure.lab import shared\n\ndef run():\n    from measure.lab.lazy import h\n",
    "lab/__init__.py": "",
    "lab/shared.py": "",
    "lab/lazy.py": "",
}


@pytest.fixture
def fake(tmp_path, monkeypatch) -> Path:
    package = _tree(tmp_path, FAKE)
    monkeypatch.setattr(provenance, "PACKAGE_DIR", package)
    return package


def test_packages_and_modules_resolve(fake):
    assert provenance.module_path("measure.experiments.one") == fake / "experiments" / "one" / "__init__.py"
    assert provenance.module_path("measure.experiments.two") == fake / "experiments" / "two.py"
    assert provenance.module_path("measure.lab.shared.g") is None  # an attribute, not a module


def test_imports_are_read_inside_functions_and_relative_ones_resolved(fake):
    assert provenance.imports_of("measure.experiments.two") == ["measure.lab.shared", "measure.lab.lazy"]
    assert provenance.imports_of("measure.experiments.one.helper") == ["measure.experiments.one.rows"]
    # a name that is not a submodule is read from the package's namespace
    assert provenance.imports_of("measure.experiments.one") == ["measure.experiments.one.helper", "measure.lab.shared"]


def test_a_package_hashes_its_modules_and_the_packages_above_them(fake):
    files = {p.relative_to(fake).as_posix() for p in provenance.code_files("one")}
    assert files == {
        "__init__.py",
        "experiments/__init__.py",
        "experiments/one/__init__.py",
        "experiments/one/helper.py",
        "experiments/one/rows.py",
        "lab/__init__.py",
        "lab/shared.py",
    }


@pytest.mark.parametrize(
    ("edited", "stale"),
    [
        ("experiments/one/rows.py", {"one"}),  # reached through the package's helper only
        ("lab/lazy.py", {"two"}),  # imported inside a function
        ("lab/shared.py", {"one", "two"}),
    ],
)
def test_an_edit_stales_exactly_the_experiments_that_reach_it(fake, edited, stale):
    before = {name: provenance.code_hash(name) for name in ("one", "two")}
    with open(fake / edited, "a") as f:
        f.write("# edited\n")
    after = {name: provenance.code_hash(name) for name in ("one", "two")}
    assert {name for name in before if before[name] != after[name]} == stale


@pytest.mark.slow
def test_editing_a_module_only_one_experiment_uses_stales_that_one_alone(tmp_path, monkeypatch):
    """On a copy of the real measure/: every file that a single experiment reaches (its
    package's modules among them) stales that experiment when edited, and no other."""
    copy = tmp_path / "measure"
    shutil.copytree(REPO / "measure", copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    monkeypatch.setattr(provenance, "PACKAGE_DIR", copy)
    names = registry.EXPERIMENTS
    graph = {name: provenance.code_files(name) for name in names}
    # An appended comment changes no import: the graph read once stands for every edit
    # (reading it again after each of some sixty edits took most of this test's minute).
    monkeypatch.setattr(provenance, "code_files", graph.__getitem__)
    reached = {name: set(files) for name, files in graph.items()}
    own = {name: files - set().union(*(reached[o] for o in names if o != name)) for name, files in reached.items()}
    in_packages = {p.relative_to(copy).as_posix() for n, files in own.items() for p in files if p.parent.name == n}
    assert {"experiments/kv_cache/head.py", "experiments/speculative_decoding/sampling.py"} <= in_packages
    before = {name: provenance.code_hash(name) for name in names}
    for name, files in own.items():
        for path in files:
            text = path.read_text()
            path.write_text(text + "# edited\n")
            after = {n: provenance.code_hash(n) for n in names}
            path.write_text(text)
            assert {n for n in names if after[n] != before[n]} == {name}, path.relative_to(copy)


@pytest.mark.smoke
def test_a_run_records_the_code_as_it_imported_it(tmp_path, monkeypatch):
    """A file edited while a run goes on is not the code that ran: the hash is taken when
    the runner imports the experiments, never when it writes their data."""
    import importlib

    from measure import runner
    from measure.lab import provenance as prov

    module = importlib.import_module("measure.experiments.cache_size")
    real, edited = module.run, []

    def run_then_edit(config, ctx):  # the experiment runs; meanwhile its file is edited
        edited.append(True)
        return real(config, ctx)

    monkeypatch.setattr(module, "run", run_then_edit)
    monkeypatch.setattr(prov, "code_hash", lambda name: "edited since" if edited else "as imported")
    runner.run_experiments(
        names=["cache_size"], model="arch:tiny", device="cpu", profile="smoke", out=tmp_path, quiet=True, force=True
    )
    assert edited and read_experiment(tmp_path, "cache_size").meta["code_hash"] == "as imported"
