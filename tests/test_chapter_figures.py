"""The chapter's own figures (measure/reference/chapter.py): each names its page, its
unit and where the chapter states it, and each is set beside this run's on its page."""

import re

from measure.reference.chapter import DIMENSIONLESS, FIGURES, SOURCE
from measure.registry import EXPERIMENTS
from tests.conftest import REPO, english_pages


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


def test_every_measured_page_sets_itself_beside_the_chapter():
    for name in EXPERIMENTS:
        if name == "chapter":
            continue
        page = (REPO / "docs" / f"{name.replace('_', '-')}.md").read_text(encoding="utf-8")
        assert "\n## Beside the chapter\n" in page, name
