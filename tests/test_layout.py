"""The measuring code's layout: no import circle among ``measure`` modules, and no module
so long that it wants splitting by what it holds."""

from measure.lab.provenance import imports_of
from tests.conftest import REPO


def _modules() -> list[str]:
    """Every module and package of measure/, by its dotted name."""
    names = []
    for path in sorted((REPO / "measure").rglob("*.py")):
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


def test_no_import_circle_among_measure_modules():
    """Function-level imports count: a circle hidden inside a function is still one."""
    graph = {m: imports_of(m) for m in _modules()}
    assert len(graph) > 40 and "measure.lab.generation" in graph["measure.experiments.speculative_decoding.sampling"]
    assert _cycle(graph) == [], " -> ".join(_cycle(graph))


LONGEST = 300  # lines; published facts typed as data (measure/reference/, the bibliography) are exempt
DATA_MODULES = ("measure/reference/", "sitekit/sources/works.py")


def test_no_module_over_300_lines():
    long = {
        name: n
        for folder in ("measure", "sitedata", "sitekit", "hooks")
        for path in (REPO / folder).rglob("*.py")
        if not (name := path.relative_to(REPO).as_posix()).startswith(DATA_MODULES)
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST
    }
    assert not long, long
