"""The project's layout: no import circle among the modules of its packages (``measure``,
``sitedata``, ``sitekit``), no module so long that it wants splitting by what it holds,
and no folder of the site kit so full that it wants grouping."""

from measure.lab.provenance import imports_of
from tests.conftest import REPO

PACKAGES = ("measure", "sitedata", "sitekit")  # the installed packages (pyproject.toml)


def _modules(package: str) -> list[str]:
    """Every module and package of ``package``, by its dotted name."""
    names = []
    for path in sorted((REPO / package).rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _cycle(graph: dict[str, list[str]]) -> list[str]:
    """One import circle of ``graph`` (depth-first search), or [] if there is none."""
    state: dict[str, str] = {}  # "open" while on the current path, then "done"
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        path.pop()
        return []

    for node in graph:
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_search_finds_a_circle():
    assert _cycle({"a": ["b"], "b": ["c"], "c": ["a"], "d": []}) == ["a", "b", "c", "a"]
    assert _cycle({"a": ["b", "c"], "b": ["c"], "c": []}) == []


def test_no_import_circle_among_the_projects_modules():
    """Function-level imports count: a circle hidden inside a function is still one. An
    import from one package into another is an edge too (sitekit reads sitedata)."""
    graph = {m: imports_of(m, PACKAGES) for package in PACKAGES for m in _modules(package)}
    assert len(graph) > 150 and "measure.lab.generation" in graph["measure.experiments.speculative_decoding.sampling"]
    assert "sitedata.wording" in graph["sitekit.language.recorded"]  # across packages
    assert "sitekit.language.formatting" in graph["sitekit.rendering.escape"]  # inside a function
    assert _cycle(graph) == [], " -> ".join(_cycle(graph))


def test_a_circle_hidden_inside_a_function_is_found(tmp_path, monkeypatch):
    """The reader follows an import that stands in a function body, as the layout test needs."""
    from measure.lab import provenance

    for name, text in {"a.py": "import pkg.b\n", "b.py": "def f():\n    from pkg import a\n"}.items():
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.setattr(provenance, "PACKAGE_DIR", tmp_path / "measure")  # module_path reads from its parent
    graph = {m: provenance.imports_of(m, ("pkg",)) for m in ("pkg.a", "pkg.b")}
    assert _cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]


LONGEST = 300  # lines; published facts typed as data (measure/reference/, the bibliography) are exempt
DATA_MODULES = ("measure/reference/", "sitekit/sources/works.py")


def test_no_module_over_300_lines():
    long = {
        name: n
        for folder in (*PACKAGES, "hooks")
        for path in (REPO / folder).rglob("*.py")
        if not (name := path.relative_to(REPO).as_posix()).startswith(DATA_MODULES)
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST
    }
    assert not long, long


MOST_MODULES = 12  # in one folder of the site kit: past that, it wants grouping by what it does


def test_no_site_kit_folder_holds_more_than_a_dozen_modules():
    full = {
        folder.relative_to(REPO).as_posix(): n
        for folder in [REPO / "sitekit", *(p for p in (REPO / "sitekit").rglob("*") if p.is_dir())]
        if (n := len([f for f in folder.glob("*.py") if f.name != "__init__.py"])) > MOST_MODULES
    }
    assert not full, full
