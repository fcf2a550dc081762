"""The calculator's mirrors of Python, held to their twins' names without a browser:
docs/javascripts/calculator/budget.js mirrors measure/lab/budget.py and model_config.js
mirrors measure/lab/model_config.py. Every function a mirror exports has its Python
twin, the same name in camelCase, in the same order (and, for the budget's arithmetic,
the same parameters in the same order: JavaScript passes them by position, Python by
keyword). tests/test_calculator_browser.py holds their results equal."""

from __future__ import annotations

import ast
import re

import pytest

from tests.conftest import DOCS, REPO

SCRIPTS = DOCS / "javascripts" / "calculator"

# JavaScript only, with why: what Python's integers do without a function.
JS_ONLY = {
    "budget": {
        "exact": "refuses a result past 2^53, where a double no longer holds every integer; Python's int has no limit",
        "floorDiv": "Python's // on integers; JavaScript has no integer division",
    },
    "model_config": {},
}
# Python only, with why: what the calculator does not need.
PYTHON_ONLY = {
    "budget": {
        "max_resident_tokens": "the budget table's tokens summed over users; the calculator counts users at a context",
        "concurrent_users": "the same, split by context: users_at_context and longest_context instead",
    },
    "model_config": {
        "ModelShape": "a shape's type: the calculator's shape is a plain object with the same fields",
    },
}
# Parameters that differ, with why (the names only are held for these).
SIGNATURE_DIFFERS = {
    "model_config": {
        "parameterCount": "takes the shapes as one object rather than eight keywords",
        "shapeFromConfig": "takes the architecture rules too, read from the page's table",
    },
}


def snake(name: str) -> str:
    """gibToBytes -> gib_to_bytes; GIB and ConfigError stay as they are."""
    if name.isupper() or name[0].isupper():
        return name
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def js_exports(module: str) -> list[str]:
    """The names the mirror exports (its ``window.LLMCalculator.<name> = {...}``), in the
    order the script defines them."""
    text = (SCRIPTS / f"{module}.js").read_text(encoding="utf-8")
    namespace = {"budget": "budget", "model_config": "modelConfig"}[module]
    body = re.search(rf"window\.LLMCalculator\.{namespace} = \{{(.*?)\}};", text, flags=re.S).group(1)
    exported = re.findall(r"^\s*(\w+): \1,$", body, flags=re.M)
    assert len(exported) == body.count(":"), f"{module}.js exports something the test cannot read: {body}"
    defined = [m for m in re.findall(r"^  (?:function (\w+)\(|var (\w+) = )", text, flags=re.M)]
    order = [a or b for a, b in defined]
    return sorted(exported, key=order.index)


def js_parameters(module: str, name: str) -> list[str]:
    text = (SCRIPTS / f"{module}.js").read_text(encoding="utf-8")
    return re.search(rf"^  function {name}\(([^)]*)\)", text, flags=re.M).group(1).replace(" ", "").split(",")


def python_public(module: str) -> dict[str, ast.AST]:
    """The module's own public functions, classes and constants, in order of definition."""
    tree = ast.parse((REPO / "measure" / "lab" / f"{module}.py").read_text(encoding="utf-8"))
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update({t.id: node for t in targets if isinstance(t, ast.Name) and t.id.isupper()})
    return {k: v for k, v in found.items() if not k.startswith("_")}


@pytest.mark.parametrize("module", ["budget", "model_config"])
def test_every_function_of_the_mirror_has_its_python_twin(module):
    exported, python = js_exports(module), python_public(module)
    twins = [name for name in exported if name not in JS_ONLY[module]]
    missing = [f"{name} (Python: {snake(name)})" for name in twins if snake(name) not in python]
    assert not missing, f"{module}.js exports functions Python does not have: {missing}"
    stale = set(JS_ONLY[module]) - set(exported)
    assert not stale, f"listed as JavaScript only but not exported: {stale}"
    # the same order, so that the two files read side by side
    in_python = [n for n in python if n in {snake(t) for t in twins}]
    assert [snake(t) for t in twins] == in_python
    # and every Python name the calculator leaves out is left out on purpose
    left_out = set(python) - {snake(t) for t in twins}
    assert left_out == set(PYTHON_ONLY[module]), left_out ^ set(PYTHON_ONLY[module])


@pytest.mark.parametrize("module", ["budget", "model_config"])
def test_every_function_of_the_mirror_takes_its_twins_parameters_in_order(module):
    python = python_public(module)
    checked = 0
    for name in js_exports(module):
        twin = python.get(snake(name))
        if not isinstance(twin, ast.FunctionDef) or name in SIGNATURE_DIFFERS.get(module, {}):
            continue
        args = twin.args
        want = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        assert [snake(p) for p in js_parameters(module, name)] == want, name
        checked += 1
    assert checked >= {"budget": 17, "model_config": 3}[module]


def test_snake_case():
    assert snake("budgetKvBytesPerToken") == "budget_kv_bytes_per_token"
    assert snake("kvBytesPerLayerToken") == "kv_bytes_per_layer_token"
    assert snake("bandwidthGbS") == "bandwidth_gb_s"
    assert snake("GIB") == "GIB" and snake("ConfigError") == "ConfigError"
