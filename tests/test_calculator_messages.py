"""The calculator's messages, read from its scripts without a browser: the build finds
every text the calculator writes (the ``t("...")`` literals of every script of
docs/javascripts/calculator/, see sitekit/language/calculator_locale.py), so no message may
be built any other way; every problem is a code that messages.js writes, and every code a
script raises has its message there."""

from __future__ import annotations

import re
import string

from sitekit.language.calculator_locale import COUNTED, messages, scripts
from tests.conftest import DOCS

FOLDER = DOCS / "javascripts" / "calculator"
SCRIPTS = scripts(FOLDER)
MESSAGES = SCRIPTS["messages.js"]


def _code(script: str) -> str:
    """The script less its comments."""
    script = re.sub(r"/\*.*?\*/", "", script, flags=re.S)
    return re.sub(r"^\s*//.*$", "", script, flags=re.M)


def _table() -> dict[str, str]:
    """messages.js's table: problem code -> its message."""
    body = MESSAGES[MESSAGES.index("function templates(t)") : MESSAGES.index("function english(")]
    return dict(re.findall(r'^\s*(\w+): t\("((?:[^"\\]|\\.)*)"\),?$', body, flags=re.M))


def _raised() -> dict[str, set[str]]:
    """Every problem code the scripts raise, with the scripts that raise it."""
    patterns = (
        r'\breport\(\s*problems,\s*"(\w+)"',  # model_config.js
        r'\brefuse\(\s*(?:[^"()]*\?\s*)?"(\w+)"',  # form.js, a field's text
        r'\brefuse\(\s*field\.minExclusive \? "(\w+)" : "(\w+)"',
        r'\brefused\(\s*"(\w+)"\)',  # budget.js
        r'\bcode: "(\w+)"',  # a problem written out
    )
    found: dict[str, set[str]] = {}
    for name, text in SCRIPTS.items():
        if name == "messages.js":
            continue
        for pattern in patterns:
            for match in re.findall(pattern, _code(text)):
                for code in match if isinstance(match, tuple) else (match,):
                    found.setdefault(code, set()).add(name)
    return found


def test_the_calculator_is_its_scripts_and_none_is_over_300_lines():
    assert set(SCRIPTS) >= {"locale.js", "budget.js", "model_config.js", "messages.js", "calculator.js"}
    long = {name: text.count("\n") for name, text in SCRIPTS.items() if text.count("\n") > 300}
    assert not long, long
    assert not (DOCS / "javascripts" / "calculator.js").exists() and not (DOCS / "javascripts" / "budget.js").exists()


def test_every_t_call_has_its_message_written_out():
    for name, text in SCRIPTS.items():
        calls = re.findall(r"\bt\((.{0,20})", _code(text))
        not_literal = [c for c in calls if not c.lstrip().startswith('"') and not c.startswith("message, values)")]
        assert not not_literal, f"{name}: t() without its message written out, unseen by the build: {not_literal}"
    assert sum(len(messages(text)) for text in SCRIPTS.values()) > 60


def test_no_comment_reads_as_a_message():
    """The build reads the scripts whole, comments too: a t("...") in a comment would be a
    message to translate that no page shows."""
    for name, text in SCRIPTS.items():
        assert messages(text) == messages(_code(text)), name


def test_every_problem_code_has_one_message_and_every_message_a_problem():
    table, raised = _table(), _raised()
    assert len(table) == MESSAGES.count(': t("') >= 30, "a line of the table the test cannot read"
    assert set(raised) - set(table) == set(), f"codes without a message: {set(raised) - set(table)}"
    assert set(table) - set(raised) == set(), f"messages no script raises: {set(table) - set(raised)}"
    assert {"too_large_to_compute", "partial_byte"} <= set(raised) and "budget.js" in raised["partial_byte"]


def test_no_problem_is_told_by_its_english_text():
    """A problem is known by its code: no script compares a message's text."""
    for name, text in SCRIPTS.items():
        code = _code(text)
        assert not re.search(r'\bcase\s+"', code), name
        assert not re.search(r"\.message\s*[!=]==|[!=]==\s*\w*\.message\b", code), name
        assert not re.search(r'[!=]==\s*"[^"]* [^"]*"', code), f"{name} compares a text with spaces"


def test_units_after_a_number_are_found_in_every_script():
    counted = {m for text in SCRIPTS.values() for m in COUNTED.findall(text)}
    assert counted == {"parameters", "tokens", "bits", "users", "bytes", "tokens/s"}, counted


def test_placeholders_are_names_in_braces():
    """The calculator fills {name} and nothing else: a message's braces are names or the
    literal ({...}) of a JSON object."""
    for text in SCRIPTS.values():
        for message in messages(text):
            fields = [name for _, name, _, _ in string.Formatter().parse(message) if name is not None]
            assert all(re.fullmatch(r"\w+|\.\.\.", f) for f in fields), message
