"""The chapter's own figures (measure/reference/chapter.py): each names its page, its
unit and where the chapter states it, and each is set beside this run's on its page."""

import re

from measure import registry
from measure.reference.chapter import DIMENSIONLESS, FIGURES, SOURCE
from measure.registry import EXPERIMENTS
from tests.conftest import REPO, english_pages

HEADING = "## Beside the chapter"


def test_every_figure_names_its_page_unit_and_source():
    assert SOURCE and len({f.name for f in FIGURES}) == len(FIGURES)
    for f in FIGURES:
        assert f.section in EXPERIMENTS, f
        assert f.where == "introduction" or re.fullmatch(r"§\d+(\.\d+)?", f.where), f
        assert f.what, f
        if isinstance(f.value, (int, float)) and not isinstance(f.value, bool):
            assert bool(f.unit) != (f.name in DIMENSIONLESS), f"{f.name}: a number has a unit or is listed as pure"


def test_every_figure_of_a_page_is_shown_on_it():
    pages = {p.stem.replace("-", "_"): p.read_text(encoding="utf-8") for p in english_pages()}
    for f in FIGURES:
        if f.section == "chapter":
            continue
        assert f"chapter.{f.name}'" in pages[f.section], f"{f.name} is not on the {f.section} page"


def beside_the_chapter(name: str, page: str, counterpart: bool) -> str | None:
    """What is wrong with a section's page (its text ``page``) as to the source chapter:
    a section the chapter covers sets its run beside the chapter's under its own heading;
    one it does not cover says so once, in its experiment's module, and has no such
    heading. None when the page keeps the rule."""
    has = f"\n{HEADING}\n" in page
    where = f"docs/{registry.page(name)}"
    if counterpart and not has:
        return (
            f"{where} has no '{HEADING}' section: a section's page sets its run beside the source chapter's "
            f"there, or its experiment says the chapter has no counterpart (CHAPTER_COUNTERPART = False in "
            f"measure/experiments/{name})"
        )
    if has and not counterpart:
        return (
            f"{where} has a '{HEADING}' section, but its experiment says the chapter has no counterpart "
            f"(CHAPTER_COUNTERPART = False in measure/experiments/{name}): drop one or the other"
        )
    return None


def test_every_section_is_set_beside_the_chapter_or_says_the_chapter_has_none():
    problems = []
    for name in registry.SECTIONS:
        text = (REPO / "docs" / registry.page(name)).read_text(encoding="utf-8")
        problems.append(beside_the_chapter(name, text, registry.load(name).CHAPTER_COUNTERPART))
    assert not any(problems), "\n".join(p for p in problems if p)


def test_the_rule_names_the_page_and_what_to_do():
    page = "# A section\n\n## Beside the chapter\n\nThe chapter measured ...\n"
    assert beside_the_chapter("kv_cache", page, True) is None
    assert beside_the_chapter("kv_cache", "# A section\n\n## Exercises\n", False) is None
    missing = beside_the_chapter("kv_cache", "# A section\n\n## Exercises\n", True)
    assert missing.startswith("docs/kv-cache.md has no '## Beside the chapter' section")
    assert "CHAPTER_COUNTERPART = False in measure/experiments/kv_cache" in missing
    both = beside_the_chapter("kv_cache", page, False)
    assert both.startswith("docs/kv-cache.md has a '## Beside the chapter' section") and "drop one" in both
