"""Numbers can't diverge between editions: every translated page carries exactly the
markers of its English page (names and arguments, in order: the same claims and the
same answers, named by their ids, and the same branch conditions, ids too) and types no
number its English page does not type.

Only the words a reader reads may differ: a claim's sentence, a figure's alt text and
caption, a table's caption. Everything that selects or formats data is compared as
written."""

from __future__ import annotations

import ast
import re

import pytest

from sitekit.language.typed_numbers import prose
from sitekit.language.typed_numbers import typed as typed_numbers
from tests.conftest import LANGUAGES, english_pages

ENGLISH_PAGES = english_pages()

# (marker name) -> positions and keywords that hold prose, translated with the page
TEXT_ARGUMENTS = {
    "claim": ({1}, {"text"}),
    "figure": (set(), {"alt", "caption"}),
    "table": (set(), {"caption"}),
    "runs": (set(), {"headers", "caption"}),
}
SEQUENCE = re.compile(r"\{\{\s*(?P<marker>.+?)\s*\}\}|<!--\s*(?P<branch>(?:el)?if\s+.+?|else|end)\s*-->", re.S)


def translated(page, lang: str):
    return page.with_name(f"{page.stem}.{lang}.md")


def marker_signature(expr: str) -> tuple:
    """A marker as data: its name and its non-prose arguments; prose arguments only
    have to be present and non-empty."""
    node = ast.parse(expr, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), f"not a marker call: {expr}"
    name = node.func.id
    positions, keywords = TEXT_ARGUMENTS.get(name, (set(), set()))
    args, texts = [], []
    for i, a in enumerate(node.args):
        (texts if i in positions else args).append(a)
    kwargs = []
    for k in node.keywords:
        (texts if k.arg in keywords else kwargs).append(k)
    counts = []
    for t in texts:
        value = t.value if isinstance(t, ast.keyword) else t
        items = value.elts if isinstance(value, ast.List) else [value]  # a list of texts: one per column
        for v in items:
            assert isinstance(v, ast.Constant) and str(v.value).strip(), f"empty text argument in {expr}"
        if isinstance(value, ast.List):
            counts.append((t.arg if isinstance(t, ast.keyword) else "", len(items)))
    kept = sorted((k.arg, ast.dump(k.value)) for k in kwargs)
    return (name, tuple(ast.dump(a) for a in args), tuple(kept + sorted(counts)))


def structure(markdown: str) -> list:
    out = []
    for m in SEQUENCE.finditer(markdown):
        if m.group("marker"):
            out.append(marker_signature(m.group("marker")))
        else:
            out.append(("branch", " ".join(m.group("branch").split())))
    return out


def numbers(markdown: str) -> set[str]:
    """Typed numbers with their separators dropped: 1.41, 1,41 and 1 410 are one number
    written in three locales' ways."""
    grouped = re.sub(r"(\d)[ \u00a0\u202f](?=\d{3}\b)", r"\1", prose(markdown))  # 65 536, one number
    return {re.sub(r"[.,\s\u00a0\u202f]", "", n) for n, _ in typed_numbers(grouped)}


CASES = [(page, lang) for page in ENGLISH_PAGES for lang in LANGUAGES]


@pytest.mark.parametrize(("page", "lang"), CASES, ids=[f"{p.stem}.{lang}" for p, lang in CASES])
def test_translated_page_carries_the_english_markers_and_numbers(page, lang):
    other = translated(page, lang)
    assert other.exists(), f"docs/{other.name} is missing: every page exists in every edition"
    english, text = page.read_text(encoding="utf-8"), other.read_text(encoding="utf-8")
    ours, theirs = structure(english), structure(text)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        assert a == b, f"{other.name}: marker {i + 1} differs from {page.name}:\n  en: {a}\n  {lang}: {b}"
    assert len(ours) == len(theirs), f"{other.name} has {len(theirs)} markers, {page.name} has {len(ours)}"
    extra = numbers(text) - numbers(english)
    assert not extra, f"{other.name} types numbers its English page does not: {sorted(extra)}"


def test_a_changed_argument_id_condition_or_a_typed_number_is_caught():
    english = (
        "Speed {{ value('kv_cache.speedup') }}. {{ claim('kv_cache.cached_faster', 'Faster') }}"
        "<!-- if kv_cache.cached_faster -->A<!-- elif kv_cache.tokens_identical -->B<!-- end -->"
        " At *T* = {{ answer('kv_cache.longest_generation') }}, {{ answer('kv_cache.predicted_one_head_ratio') }}."
    )
    good = (
        "Velocidade {{ value('kv_cache.speedup') }}. {{ claim('kv_cache.cached_faster', 'Máis rápido') }}"
        "<!-- if kv_cache.cached_faster -->A<!-- elif kv_cache.tokens_identical -->B<!-- end -->"
        " Con *T* = {{ answer('kv_cache.longest_generation') }}, {{ answer('kv_cache.predicted_one_head_ratio') }}."
    )
    assert structure(english) == structure(good)
    assert structure(english) != structure(good.replace("speedup')", "speedup', digits=1)"))
    assert structure(english) != structure(good.replace("claim('kv_cache.cached_faster'", "claim('kv_cache.faster'"))
    assert structure(english) != structure(good.replace("if kv_cache.cached_faster", "if kv_cache.faster"))
    assert structure(english) != structure(good.replace("elif kv_cache.tokens_identical", "elif kv_cache.x"))
    assert structure(english) != structure(good.replace("<!-- elif", "<!-- if"))
    # an edition that names another answer, or the same answers in another order
    assert structure(english) != structure(good.replace("kv_cache.longest_generation", "kv_cache.longest_context"))
    swapped = good.replace("longest_generation", "@").replace("predicted_one_head_ratio", "longest_generation")
    assert structure(english) != structure(swapped.replace("@", "predicted_one_head_ratio"))
    assert numbers(good + " uns 3,07 ") - numbers(english) == {"307"}
    assert numbers("65\u00a0536 tokens") == numbers("65.536 tokens") == numbers("65,536 tokens") == {"65536"}
    with pytest.raises(AssertionError, match="empty text"):
        structure("{{ claim('kv_cache.cached_faster', ' ') }}")
