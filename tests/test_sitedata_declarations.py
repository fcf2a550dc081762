"""The experiments' declarations say what each column is in one place: a named policy of
sitedata.policies (never a dict of compare and scope handed around), a label only where
it is not the name."""

from __future__ import annotations

import ast

from sitedata import policies
from tests.conftest import REPO


def _calls(tree: ast.AST, name: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            yield node


def test_no_policy_is_a_dict_and_none_is_splatted_into_a_declaration():
    found = []
    for path in sorted((REPO / "measure").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(REPO)
        for call in _calls(tree, "dict"):
            if {k.arg for k in call.keywords} & {"compare", "scope", "policy"}:
                found.append(f"{where}:{call.lineno}: dict({', '.join(k.arg or '**' for k in call.keywords)})")
        for name in ("Column", "Value"):
            for call in _calls(tree, name):
                if any(k.arg is None for k in call.keywords) or any(
                    k.arg in ("compare", "scope") for k in call.keywords
                ):
                    found.append(f"{where}:{call.lineno}: {name}(...) takes policy=, not compare/scope or **")
    assert not found, "\n".join(found)


def test_every_policy_is_named_once_and_says_when_to_use_it():
    source = (REPO / "sitedata" / "policies.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    documented = {
        node.targets[0].id
        for node, after in zip(tree.body, tree.body[1:], strict=False)
        if isinstance(node, ast.Assign)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }
    names = [p.name for p in policies.POLICIES]
    assert len(set(names)) == len(names) and all(getattr(policies, p.name) is p for p in policies.POLICIES)
    assert set(names) <= documented
    assert len({(p.compare, p.scope) for p in policies.POLICIES}) == len(names)
