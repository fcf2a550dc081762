"""Claims defined once, by name, in each experiment's claims.toml: the files' rules, the
ids the pages name, branches with elif, and the claims no page uses."""

from __future__ import annotations

import re

import pytest

from sitekit.claims import claims
from sitekit.claims.branches import choose_branches
from sitekit.claims.claim_files import ClaimBook, load
from sitekit.claims.claim_syntax import ClaimError
from sitekit.rendering.context import PageContext
from sitekit.rendering.markers import MarkerError, render_markers
from sitekit.rendering.pagedata import SiteData
from tests.conftest import DOCS, REPO, english_pages, hook, write_data
from tests.helpers import write_named

CLAIMS = REPO / "measure" / "experiments"


def write(root, experiment: str, text: str):
    return write_named(root, experiment, "claims", text)


def read(root) -> ClaimBook:
    return load(root, root, claims.CALLS)


@pytest.fixture
def data(tmp_path):
    write_data(tmp_path / "data", "exp", {"t": [{"n": 1, "ms": 2.0}, {"n": 2, "ms": 4.0}]}, {"ratio": 2.5})
    return SiteData(tmp_path / "data")


def test_a_claims_file_defines_claims_by_experiment_and_name(tmp_path):
    write(
        tmp_path,
        "exp",
        'big = { check = "exp.ratio > 2" }\n\n'
        "[rising]\n"
        "check = '''\n(\n    cell('exp.t', 'ms', where={'n': 2})\n    > cell('exp.t', 'ms', where={'n': 1})\n)\n'''\n"
        'hardware = true\nnote = "a timing"\n',
    )
    book = read(tmp_path)
    assert sorted(book.entries) == ["exp.big", "exp.rising"]
    big, rising = book.entries["exp.big"], book.entries["exp.rising"]
    assert (big.hardware, big.note, big.source) == (False, "", "exp/claims.toml")
    assert (rising.hardware, rising.note) == (True, "a timing")
    # written over lines, evaluated and shown on one
    assert rising.expression == "cell('exp.t', 'ms', where={'n': 2}) > cell('exp.t', 'ms', where={'n': 1})"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[a]\ncheck = "1 < 2"\n\n[a]\ncheck = "2 < 3"\n',
            "exp/claims.toml: not a claims file: Cannot declare ('a',) twice",
        ),
        (
            '[a]\ncheck = "1 < 2"\nhardwre = true\n',
            "exp/claims.toml: [a]: unknown key 'hardwre'; a claim has check, hardware, note",
        ),
        ('[a]\ncheck = "1 <"\n', "exp/claims.toml: [a]: cannot parse claim '1 <': invalid syntax"),
        (
            "[a]\ncheck = \"__import__('os').system('true')\"\n",
            "exp/claims.toml: [a]: unsupported expression: __import__",
        ),
        ('[a]\ncheck = "1 < 2 or exp.x.y > 1"\n', "exp/claims.toml: [a]: unsupported expression: exp.x.y"),
        ('[a]\ncheck = "1 < 2"\nhardware = "yes"\n', "exp/claims.toml: [a]: hardware is true or false, note is text"),
        ("[a]\nhardware = true\n", "exp/claims.toml: [a]: check must be the claim's expression, as text"),
        ('[Big-One]\ncheck = "1 < 2"\n', "exp/claims.toml: [Big-One]: a claim's name is snake_case"),
        ('a = "1 < 2"\n', "exp/claims.toml: [a]: a claim is a table with check ="),
    ],
)
def test_a_bad_claims_file_fails_naming_the_file_and_the_claim(tmp_path, text, message):
    write(tmp_path, "exp", text)
    with pytest.raises(ClaimError) as e:
        read(tmp_path)
    assert str(e.value).startswith(message), str(e.value)


def test_a_missing_claims_folder_is_one_line(tmp_path):
    with pytest.raises(ClaimError, match="claims folder .*nowhere does not exist"):
        read(tmp_path / "nowhere")


def test_a_page_names_a_claim_by_id_and_the_claim_decides_its_mark(data, tmp_path):
    write(
        tmp_path / "claims", "exp", '[big]\ncheck = "exp.ratio > 2"\n[huge]\ncheck = "exp.ratio > 3"\nhardware = true\n'
    )
    ctx = PageContext(data=data, page="p.md", url_prefix="", claims=read(tmp_path / "claims"))
    assert "claim-ok" in render_markers("{{ claim('exp.big', 'Big') }}", ctx)
    huge = "<!-- if exp.huge -->{{ claim('exp.huge', 'Huge') }}<!-- else -->not huge<!-- end -->"
    assert render_markers(huge, ctx) == "not huge"  # hardware, not holding: its branch says what was found
    assert ctx.used == {"exp.big", "exp.huge"}


@pytest.mark.parametrize(
    "marker, message",
    [
        (
            "{{ claim('exp.bigg', 'Big') }}",
            "p.md: unknown claim 'exp.bigg': claims/exp/claims.toml defines no 'bigg'; did you mean exp.big?",
        ),
        (
            "{{ claim('other.big', 'Big') }}",
            "p.md: unknown claim 'other.big': claims/other/claims.toml defines no 'big'",
        ),
        (
            "{{ claim('exp.ratio > 2', 'Big') }}",
            "p.md: 'exp.ratio > 2' is no claim id: a page names a claim as <experiment>.<name>",
        ),
        ("<!-- if exp.nope -->x<!-- end -->", "p.md: <!-- if exp.nope -->: unknown claim 'exp.nope'"),
    ],
)
def test_an_unknown_id_fails_naming_the_page_and_the_id(data, tmp_path, marker, message):
    write(tmp_path / "claims", "exp", '[big]\ncheck = "exp.ratio > 2"\n')
    ctx = PageContext(data=data, page="p.md", url_prefix="", claims=load(tmp_path / "claims", tmp_path, claims.CALLS))
    with pytest.raises(MarkerError) as e:
        render_markers(marker, ctx)
    assert str(e.value).startswith(message), str(e.value)


def test_hardware_is_the_claims_not_the_pages(data, tmp_path):
    write(tmp_path / "claims", "exp", '[big]\ncheck = "exp.ratio > 3"\n')
    ctx = PageContext(data=data, page="p.md", url_prefix="", claims=read(tmp_path / "claims"))
    with pytest.raises(MarkerError, match="hardware"):
        render_markers("{{ claim('exp.big', 'Big', hardware=True) }}", ctx)


def _branch_context(data, tmp_path):
    text = "".join(
        f'[{n}]\ncheck = "{c}"\n'
        for n, c in (("two", "exp.ratio > 2"), ("three", "exp.ratio > 3"), ("no", "exp.ratio < 0"))
    )
    write(tmp_path / "claims", "exp", text)
    return PageContext(data=data, page="p.md", url_prefix="", claims=read(tmp_path / "claims"))


@pytest.mark.parametrize(
    "first, second, kept",
    [("three", "two", "B"), ("two", "three", "A"), ("two", "two", "A"), ("no", "three", "C")],
)
def test_elif_keeps_the_first_clause_that_holds(data, tmp_path, first, second, kept):
    ctx = _branch_context(data, tmp_path)
    page = f"<!-- if exp.{first} -->\nA<!-- elif exp.{second} -->\nB<!-- else -->\nC<!-- end -->."
    assert choose_branches(page, ctx) == kept + "."
    assert choose_branches(page.replace("<!-- else -->\nC", ""), ctx) == ("" if kept == "C" else kept) + "."


def test_a_block_inside_a_paragraph_leaves_the_paragraph_whole(data, tmp_path):
    ctx = _branch_context(data, tmp_path)
    page = "On speed,\n<!-- if exp.two -->\nslower,\n<!-- else -->\nfaster,\n<!-- end -->\nand more.\n\nNext."
    assert choose_branches(page, ctx) == "On speed,\nslower,\nand more.\n\nNext."  # no blank line: one paragraph
    block = "Before.\n\n<!-- if exp.no -->\nA\n<!-- end -->\n\nAfter."
    assert choose_branches(block, ctx) == "Before.\n\n\nAfter."  # a block of its own still stands apart


def test_every_condition_of_a_block_is_checked_even_after_one_holds(data, tmp_path):
    ctx = _branch_context(data, tmp_path)
    with pytest.raises(MarkerError, match="unknown claim 'exp.typo'"):
        render_markers("<!-- if exp.two -->A<!-- elif exp.typo -->B<!-- end -->", ctx)
    with pytest.raises(MarkerError, match=r"<!-- elif --> after <!-- else -->"):
        render_markers("<!-- if exp.two -->A<!-- else -->B<!-- elif exp.three -->C<!-- end -->", ctx)
    render_markers("<!-- if exp.two -->A<!-- elif exp.three -->B<!-- elif exp.no -->C<!-- end -->", ctx)
    assert ctx.used == {"exp.two", "exp.three", "exp.no"}


def test_a_claim_in_a_clause_not_taken_is_used_and_must_be_defined(data, tmp_path):
    """This run's data keeps one clause; a claim named in another is still the page's
    (another run's data keeps it), so it counts as used and its id is checked."""
    ctx = _branch_context(data, tmp_path)
    page = "<!-- if exp.no -->{{ claim('exp.three', 'T') }}<!-- else -->{{ value('exp.ratio') }}<!-- end -->"
    assert render_markers(page, ctx) == "2.5"
    assert ctx.used == {"exp.no", "exp.three"}
    with pytest.raises(MarkerError, match="p.md: <!-- if exp.no -->: unknown claim 'exp.thre'"):
        render_markers(page.replace("exp.three", "exp.thre"), ctx)


def test_a_claim_no_page_uses_fails_the_build_naming_it():
    from mkdocs.exceptions import PluginError

    render = hook("render")
    book = read_repo()
    render._check_used(book, set(book.entries))
    unused = r"1 claims are defined but used on no page: kv_cache.identical_float32 \(measure/experiments/kv_cache/"
    with pytest.raises(PluginError, match=unused):
        render._check_used(book, set(book.entries) - {"kv_cache.identical_float32"})


def read_repo() -> ClaimBook:
    return load(CLAIMS, REPO, claims.CALLS)


ID = r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*"
CLAIM = re.compile(r"\{\{\s*claim\(\s*(['\"])(?P<ref>.*?)\1")
CONDITION = re.compile(r"<!--\s*(?:if|elif)\s+(?:unsure\s+)?(?P<ref>.+?)\s*-->", re.S)
EXPRESSION = re.compile(r"\{\{\s*(?P<marker>.+?)\s*\}\}")


def test_every_page_names_its_claims_and_conditions_by_id_and_uses_every_claim():
    """No claim's expression is written in a page (they live in the claims files), and
    every claim a file defines is named on some English page."""
    book, used = read_repo(), set()
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        refs = [m.group("ref") for m in (*CLAIM.finditer(text), *CONDITION.finditer(text))]
        bad = [r for r in refs if not re.fullmatch(ID, r) or r not in book.entries]
        assert not bad, f"docs/{page.name} names claims no claims file defines: {bad}"
        if page in english_pages():
            used |= set(refs)
    assert set(book.entries) == used, f"claims no page uses: {sorted(set(book.entries) - used)}"


def test_no_page_writes_an_expression_longer_than_a_hundred_characters():
    """What a page evaluates stays short: a claim, a branch condition and an answer are
    ids (above, and test_answer_files.py), and a marker's argument that is an expression
    (not a literal: ``where={'batch': batching.knee_batch}``) is at most a hundred
    characters; a longer one belongs in a claims or answers file, named."""
    import ast

    literal = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.keyword, ast.Load, ast.expr_context)
    for page in sorted(DOCS.glob("*.md")):
        for m in EXPRESSION.finditer(page.read_text(encoding="utf-8")):
            call = ast.parse(m.group("marker"), mode="eval").body
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                if all(isinstance(n, literal) for n in ast.walk(arg)):
                    continue
                assert len(ast.unparse(arg)) <= 100, f"docs/{page.name}: {ast.unparse(arg)[:120]}"


def test_the_drift_gate_counts_a_table_a_named_claim_or_answer_reads_as_used_by_its_page(tmp_path):
    from measure.check import page_table_refs

    write(
        tmp_path / "claims",
        "exp",
        "[a]\ncheck = \"len(column('exp.t', 'n')) > 0\"\n[b]\ncheck = \"cell('exp.u', 'n') > 0\"\n",
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "p.md").write_text("{{ claim('exp.a', 'A') }} {{ table('exp.v') }}\n")
    (tmp_path / "docs" / "q.md").write_text("<!-- if exp.b -->B<!-- elif exp.a -->A<!-- end -->\n")
    (tmp_path / "claims" / "exp" / "answers.toml").write_text("[c]\nvalue = \"max(column('exp.w', 'n'))\"\n")
    (tmp_path / "docs" / "r.md").write_text("{{ answer('exp.c') }}\n")
    refs = page_table_refs(tmp_path / "docs", tmp_path / "claims")
    assert refs == {"exp.t": {"p.md", "q.md"}, "exp.u": {"q.md"}, "exp.v": {"p.md"}, "exp.w": {"r.md"}}


def test_a_file_read_again_gives_its_edit_and_a_broken_one_fails_every_time(tmp_path):
    """The five editions read each file once between them; `mkdocs serve` reads an edit."""
    write(tmp_path, "exp", '[fast]\ncheck = "exp.ratio > 2"\n')
    first, again = read(tmp_path), read(tmp_path)
    assert first.get("exp.fast") is again.get("exp.fast")  # parsed once
    write(tmp_path, "exp", '[fast]\ncheck = "exp.ratio > 3"\n')
    assert read(tmp_path).get("exp.fast").check == "exp.ratio > 3"
    write(tmp_path, "exp", '[fast]\ncheck = "exp.ratio >"\n')
    for _ in range(2):
        with pytest.raises(ClaimError, match=r"\[fast\]"):
            read(tmp_path)
