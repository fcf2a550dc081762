"""Every section page ends with exercises whose answers fold out, in every edition: a
heading in the edition's word for "Exercises", then at least two ``<details>`` blocks
titled with its word for "Answer", each answer worked out with numbers from this run's
data (rendered by the build: no marker and no ``answer(`` left unrendered)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from measure import registry
from tests.conftest import DOCS, LANGUAGES
from tests.test_editions import read

PAGES = [registry.page(name).removesuffix(".md") for name in registry.SECTIONS]  # every section's, from the registry

# (heading, fold-out title) per edition
WORDS = {
    "en": ("Exercises", "Answer"),
    "gl": ("Exercicios", "Resposta"),
    "es": ("Ejercicios", "Respuesta"),
    "it": ("Esercizi", "Risposta"),
    "cs": ("Cvičení", "Řešení"),
}
EDITIONS = ("en", *LANGUAGES)
CASES = [(page, lang) for page in PAGES for lang in EDITIONS]


def _text(html: str) -> str:
    """What a reader reads of an HTML fragment: tags dropped, entities resolved, the
    heading's permalink sign gone."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("¶", " ").split())


def exercises(html: str, heading: str) -> list[tuple[str, str]]:
    """(title, answer) of every fold-out after the ``heading`` h2 of the page's article,
    up to the next h2."""
    article = html.split("<article", 1)[-1].split("</article>", 1)[0]
    parts = re.split(r"(<h2\b[^>]*>.*?</h2>)", article, flags=re.S)
    for i, part in enumerate(parts):
        if part.startswith("<h2") and _text(part) == heading:
            section = parts[i + 1] if i + 1 < len(parts) else ""
            folds = re.findall(r'<details class="success">\s*<summary>(.*?)</summary>(.*?)</details>', section, re.S)
            return [(_text(title), body) for title, body in folds]
    raise AssertionError(f"no heading “{heading}”")


def test_the_reader_finds_fold_outs_under_the_heading_only():
    html = (
        '<article><h2 id="a">Intro</h2><details class="success"><summary>Answer</summary>no</details>'
        '<h2 id="exercises">Exercises<a class="headerlink" href="#exercises">¶</a></h2>'
        "<p><strong>1.</strong> Q?</p>"
        '<details class="success">\n<summary>Answer</summary>\n<p>3.5 ms</p>\n</details>'
        '<h2 id="references">References</h2><details class="success"><summary>Answer</summary>x</details></article>'
    )
    assert exercises(html, "Exercises") == [("Answer", "\n<p>3.5 ms</p>\n")]
    with pytest.raises(AssertionError, match="no heading"):
        exercises(html, "Esercizi")


@pytest.mark.parametrize(("page", "lang"), CASES, ids=[f"{p}.{lang}" for p, lang in CASES])
def test_the_exercises_are_the_last_section_before_the_references(page, lang):
    """In the page's source, as the fast tier can check it: the section, a question for
    every fold-out, at least two of them, and at least one answer worked out by ``answer``."""
    heading, title = WORDS[lang]
    name = f"{page}.md" if lang == "en" else f"{page}.{lang}.md"
    text = (DOCS / name).read_text(encoding="utf-8")
    found = re.search(rf"^## {re.escape(heading)}(?: \{{#exercises\}})?$", text, flags=re.M)
    assert found, f"docs/{name}: no “## {heading}” section"
    section = text[found.end() :]
    following = re.search(r"^## ", section, flags=re.M)
    references = r"## (References|[^\n]*\{#references\})\n"
    assert following and re.match(references, section[following.start() :]), (
        f"docs/{name}: the exercises are not the last section before the references"
    )
    section = section[: following.start()]
    folds = re.findall(rf'^\?\?\? success "{re.escape(title)}"$', section, flags=re.M)
    questions = re.findall(r"^\*\*\d+\.\*\* ", section, flags=re.M)
    assert len(folds) >= 2, f"docs/{name}: {len(folds)} answers folded as ??? success “{title}”"
    assert len(questions) == len(folds), f"docs/{name}: {len(questions)} questions, {len(folds)} answers"
    assert "{{ answer(" in section, f"docs/{name}: no answer worked out from the data"


@pytest.mark.build
@pytest.mark.parametrize(("page", "lang"), CASES, ids=[f"{p}.{lang}" for p, lang in CASES])
def test_a_section_page_ends_with_exercises_whose_answers_are_the_runs(built_site, page, lang):
    heading, title = WORDS[lang]
    folds = exercises(read(built_site, lang, page), heading)
    where = f"{lang}/{page}"
    assert len(folds) >= 2, f"{where}: {len(folds)} answers under “{heading}”, at least two expected"
    for i, (shown, body) in enumerate(folds, 1):
        assert shown == title, f"{where}: answer {i} is titled “{shown}”, not “{title}”"
        text = _text(body)
        assert re.search(r"\d", text), f"{where}: answer {i} holds no number: {text[:200]}"
        rendered = re.sub(r"<annotation\b.*?</annotation>", "", body, flags=re.S)  # a formula's LaTeX source
        for left in ("{{", "}}", "answer("):
            assert left not in rendered, f"{where}: answer {i} holds an unrendered {left!r}: {text[:200]}"
