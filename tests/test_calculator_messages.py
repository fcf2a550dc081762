"""The calculator's messages, read from its scripts without a browser: the build finds
every text the calculator writes (the ``t("...")`` literals of calculator.js, see
hooks/sitekit/calculator_locale.py), so no message may be built any other way, and
every message budget.js reports about a config.json has its literal in calculator.js."""

from __future__ import annotations

import re
import string

from sitekit.calculator_locale import messages

from tests.conftest import DOCS

CALCULATOR = (DOCS / "javascripts" / "calculator.js").read_text(encoding="utf-8")
BUDGET = (DOCS / "javascripts" / "budget.js").read_text(encoding="utf-8")


def _code(script: str) -> str:
    """The script less its comments."""
    script = re.sub(r"/\*.*?\*/", "", script, flags=re.S)
    return re.sub(r"^\s*//.*$", "", script, flags=re.M)


def _templates(script: str) -> list[str]:
    """The templates budget.js reports a config's problems with."""
    return re.findall(r'report\(\s*problems,\s*"((?:[^"\\]|\\.)*)"', script) + re.findall(
        r'new ConfigError\("((?:[^"\\]|\\.)*)"', script
    )


def test_every_t_call_has_its_message_written_out():
    calls = re.findall(r"\bt\((.{0,20})", _code(CALCULATOR))
    assert calls, "no t() call found"
    not_literal = [c for c in calls if not c.lstrip().startswith('"') and not c.startswith("message, values)")]
    assert not not_literal, f"t() without its message written in it, which the build cannot find: {not_literal}"


def test_every_config_problem_of_budget_js_is_a_message_of_calculator_js():
    templates = _templates(BUDGET)
    assert len(templates) >= 12, templates
    found = set(messages(CALCULATOR))
    cases = set(re.findall(r'case "((?:[^"\\]|\\.)*)":', CALCULATOR))
    assert set(templates) <= found, set(templates) - found
    assert set(templates) <= cases, set(templates) - cases


def test_placeholders_are_names_in_braces():
    """calculator.js fills {name} and nothing else: a message's braces are names or the
    literal ({...}) of a JSON object."""
    for message in messages(CALCULATOR):
        fields = [name for _, name, _, _ in string.Formatter().parse(message) if name is not None]
        assert all(re.fullmatch(r"\w+|\.\.\.", f) for f in fields), message
