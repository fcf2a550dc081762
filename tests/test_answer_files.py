"""Answers defined once, by name, in each experiment's answers.toml: the files' rules, the
numbers the pages show for the ids they name, and the answers no page uses."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from sitekit.claims import claims
from sitekit.claims.answer_files import AnswerBook, load
from sitekit.claims.claim_syntax import ClaimError
from sitekit.language import formatting
from sitekit.rendering.context import PageContext
from sitekit.rendering.markers import MarkerError, render_markers
from sitekit.rendering.pagedata import SiteData
from tests.conftest import DOCS, REPO, english_pages, hook, write_data
from tests.helpers import write_named

EXPERIMENTS = REPO / "measure" / "experiments"


def write(root, experiment: str, text: str):
    return write_named(root, experiment, "answers", text)


def read(root) -> AnswerBook:
    return load(root, root, claims.CALLS)


@pytest.fixture
def data(tmp_path):
    rows = [{"n": 1, "ms": 2.0}, {"n": 2, "ms": 4.0}, {"n": 4, "ms": 8.5}]
    write_data(tmp_path / "data", "exp", {"t": rows}, {"ratio": 2.5}, units={"ratio": "x"})
    return SiteData(tmp_path / "data")


def page(data, root, **answers: str) -> PageContext:
    """A page over ``data`` whose build defines ``answers`` (name -> TOML body) for ``exp``."""
    write(root, "exp", "".join(f"[{name}]\n{body}\n" for name, body in answers.items()))
    return PageContext(data=data, page="p.md", url_prefix="", answers=read(root))


def test_an_answers_file_defines_answers_by_experiment_and_name(tmp_path):
    write(
        tmp_path,
        "exp",
        'tripled = { value = "exp.ratio * 3", unit = "x" }\n\n'
        "[total]\nvalue = '''\n(\n    cell('exp.t', 'ms', where={'n': 1})\n"
        "    + cell('exp.t', 'ms', where={'n': 2})\n)\n'''\n"
        'unit = "ms"\nstyle = "fixed"\ndigits = 1\n',
    )
    book = read(tmp_path)
    assert sorted(book.entries) == ["exp.total", "exp.tripled"]
    tripled, total = book.entries["exp.tripled"], book.entries["exp.total"]
    assert (tripled.unit, tripled.style, tripled.digits, tripled.source) == ("x", "auto", None, "exp/answers.toml")
    assert (total.unit, total.style, total.digits) == ("ms", "fixed", 1)
    # written over lines, evaluated on one
    assert total.expression == "cell('exp.t', 'ms', where={'n': 1}) + cell('exp.t', 'ms', where={'n': 2})"


def test_a_page_shows_the_number_its_answer_works_out(data, tmp_path):
    ctx = page(
        data,
        tmp_path / "answers",
        tripled='value = "exp.ratio * 3"\nunit = "x"',
        total='value = "sum(column(\'exp.t\', \'ms\'))"\nunit = "ms"\nstyle = "fixed"\ndigits = 1',
        share="value = \"cell('exp.t', 'ms', where={'n': 1}) / cell('exp.t', 'ms', where={'n': 4})\"\n"
        'unit = "fraction"',
    )
    # by hand: 2.5 x 3 = 7.5; 2.0 + 4.0 + 8.5 = 14.5; 2.0 / 8.5 = 23.5 %
    assert render_markers("{{ answer('exp.tripled') }}", ctx) == "7.50×"
    assert render_markers("{{ answer('exp.total') }}", ctx) == "14.5\u00a0ms"  # a number and its unit never part
    assert render_markers("{{ answer('exp.share') }}", ctx) == "23.5%"
    assert ctx.answered == {"exp.tripled", "exp.total", "exp.share"}


def test_a_committed_answer_shows_the_number_its_exercise_asks_for():
    """kv-cache.md's first exercise, worked out here from the data layer by hand: the
    weight MACs per token times the longest context of the table of MACs per step."""
    from tests.helpers import render_page

    data = SiteData(REPO / "site_data")
    longest = data.table("kv_cache.macs_per_step").frame["context"].max()
    expected = data.value("kv_cache.weight_macs_per_token")["value"] * longest
    shown = render_page("kv-cache.md", "{{ answer('kv_cache.weight_macs_at_longest_context') }}")
    assert shown == formatting.format_value(float(expected), "MAC") + "\u00a0MACs"
    assert render_page("kv-cache.md", "{{ answer('kv_cache.longest_context') }}") == (
        formatting.format_value(int(longest)) + "\u00a0tokens"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[a]\nvalue = "1"\n\n[a]\nvalue = "2"\n',
            "exp/answers.toml: not an answers file: Cannot declare ('a',) twice",
        ),
        (
            '[a]\nvalue = "1"\nunits = "x"\n',
            "exp/answers.toml: [a]: unknown key 'units'; an answer has value, unit, style, digits",
        ),
        ('[a]\nvalue = "1 +"\n', "exp/answers.toml: [a]: cannot parse answer '1 +': invalid syntax"),
        ("[a]\nvalue = \"__import__('os')\"\n", "exp/answers.toml: [a]: unsupported expression: __import__"),
        ('[a]\nvalue = "1"\ndigits = "2"\n', "exp/answers.toml: [a]: unit and style are text, digits a whole number"),
        ('[a]\nvalue = "1"\ndigits = true\n', "exp/answers.toml: [a]: unit and style are text, digits a whole number"),
        ('[a]\nvalue = "1"\nunit = 3\n', "exp/answers.toml: [a]: unit and style are text, digits a whole number"),
        ('[a]\nvalue = "1"\ndigits = 99\n', "exp/answers.toml: [a]: digits 99 refused"),
        (
            '[a]\nvalue = "1"\ndigits = 18\n',
            "exp/answers.toml: [a]: digits 18 refused: a number is written with 0 to 17",
        ),
        ('[a]\nvalue = "1"\ndigits = -1\n', "exp/answers.toml: [a]: digits -1 refused"),
        ('[a]\nvalue = "1"\nstyle = "gibb"\n', "exp/answers.toml: [a]: unknown number style 'gibb'"),
        ('[a]\nunit = "x"\n', "exp/answers.toml: [a]: value must be the answer's expression, as text"),
        ('[Big-One]\nvalue = "1"\n', "exp/answers.toml: [Big-One]: an answer's name is snake_case"),
        ('a = "1"\n', 'exp/answers.toml: [a]: an answer is a table with value = "...", not str'),
        ("[a]\nvalue = \xff\n", "exp/answers.toml: not an answers file"),
    ],
)
def test_a_bad_answers_file_fails_in_one_line_naming_the_file_and_the_answer(tmp_path, text, message):
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "answers.toml").write_bytes(text.encode("latin-1"))
    with pytest.raises(ClaimError) as e:
        read(tmp_path)
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_a_bad_answers_file_fails_the_build(tmp_path):
    render = hook("render")
    write(tmp_path / "folder", "exp", '[a]\nvalue = "1"\nstyle = "gibb"\n')
    extra = {"site_data": str(REPO / "site_data"), "claims": str(tmp_path / "folder")}
    config = SimpleNamespace(config_file_path=str(REPO / "mkdocs.yml"), extra=extra, site_url=None)
    with pytest.raises(PluginError) as e:
        render.on_config(config)
    assert re.fullmatch(r"\S*/folder/exp/answers.toml: \[a\]: unknown number style 'gibb'", str(e.value)), str(e.value)


@pytest.mark.parametrize(
    "marker, message",
    [
        (
            "{{ answer('exp.tripeld') }}",
            "p.md: unknown answer 'exp.tripeld': answers/exp/answers.toml defines no 'tripeld'; "
            "did you mean exp.tripled?",
        ),
        ("{{ answer('other.tripled') }}", "p.md: unknown answer 'other.tripled': answers/other/answers.toml defines"),
        # the form answers had before they were named: the page's expression is no id
        (
            "{{ answer(exp.ratio * 3, unit='x') }}",
            "p.md: 7.5 is no answer id: a page names an answer as <experiment>.<name>, "
            "defined in answers/<experiment>/answers.toml",
        ),
        (
            "{{ answer('exp.tripled', unit='ms') }}",
            "p.md: answer() takes an answer's id alone; exp/answers.toml gives its unit and style",
        ),
        ("{{ answer('exp.column') }}", "p.md: answer exp.column (exp/answers.toml) is no number: [2.0, 4.0, 8.5]"),
        ("{{ answer('exp.missing') }}", "p.md: {{ answer('exp.missing') }}: "),
    ],
)
def test_a_page_that_names_no_answer_fails_in_one_line(data, tmp_path, marker, message):
    ctx = page(
        data,
        tmp_path / "answers",
        tripled='value = "exp.ratio * 3"',
        column="value = \"column('exp.t', 'ms')\"",
        missing='value = "exp.nothing + 1"',
    )
    ctx.answers.folder = "answers"
    with pytest.raises(MarkerError) as e:
        render_markers(marker, ctx)
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_an_answer_no_page_uses_fails_the_build_naming_it(tmp_path):
    from tests.helpers import _hook

    render, config = _hook(None, docs_dir=str(DOCS), site_dir=str(tmp_path / "site"))
    render._state["used"] = set(render._state["claims"].entries)
    every = set(render._state["answers"].entries)
    render._state["answered"] = every - {"kv_cache.longest_generation"}
    with pytest.raises(PluginError) as e:
        render.on_post_build(config)
    assert str(e.value) == (
        "1 answers are defined but used on no page: kv_cache.longest_generation "
        "(measure/experiments/kv_cache/answers.toml); name each in the exercise it answers, or remove it"
    )


ANSWER = re.compile(r"\{\{\s*answer\((?P<args>.*?)\)\s*\}\}")


def test_every_page_names_its_answers_by_id_and_uses_every_answer():
    """No answer's expression is written in a page (they live in the answers files), and
    every answer a file defines is named on some English page."""
    book, used = read_committed(), set()
    for path in sorted(DOCS.glob("*.md")):
        refs = [m.group("args") for m in ANSWER.finditer(path.read_text(encoding="utf-8"))]
        bad = [
            r for r in refs if not re.fullmatch(r"'[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*'", r) or r[1:-1] not in book.entries
        ]
        assert not bad, f"docs/{path.name} writes answers no answers file defines: {bad}"
        if path in english_pages():
            used |= {r[1:-1] for r in refs}
    assert used and set(book.entries) == used, f"answers no page uses: {sorted(set(book.entries) - used)}"


def read_committed() -> AnswerBook:
    return load(EXPERIMENTS, REPO, claims.CALLS)
