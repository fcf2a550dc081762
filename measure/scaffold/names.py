"""A new section's name and title, checked before anything is written: each problem is
one line naming what to change."""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from measure.errors import UserError

NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
# What a title may hold besides letters and digits: none of it is markup in Markdown or
# YAML once the nav's key is quoted, or syntax in a Python string written with repr().
TITLE_MARKS = " ',.:;?!()-’"
LONGEST_NAME, LONGEST_TITLE = 40, 80


@dataclass(frozen=True)
class Section:
    name: str  # the experiment: its package, its data folder, its markers' prefix
    title: str  # the page's heading and the experiment's TITLE
    nav: str  # the menu's title: the title up to its first colon

    @property
    def page(self) -> str:
        return self.name.replace("_", "-") + ".md"


def experiments(root: Path) -> tuple[str, ...]:
    """The registry's EXPERIMENTS as measure/registry.py under ``root`` writes them (read,
    not imported: ``root`` may be another copy of the project than the one running)."""
    tree = ast.parse((root / "measure" / "registry.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "EXPERIMENTS":
            return tuple(ast.literal_eval(node.value))
    raise UserError("measure/registry.py defines no EXPERIMENTS")


def check_name(name: str, root: Path) -> None:
    if not NAME.fullmatch(name) or len(name) > LONGEST_NAME:
        raise UserError(
            f"NAME must be snake_case (lower-case letters, digits and single underscores, starting with a "
            f"letter, at most {LONGEST_NAME} characters), not {name!r}"
        )
    if keyword.iskeyword(name):
        raise UserError(f"NAME {name!r} is a Python keyword: a package cannot be named so")
    page = name.replace("_", "-") + ".md"
    taken = [
        what
        for what, exists in (
            ("the registry", name in experiments(root)),
            (f"measure/experiments/{name}", (root / "measure" / "experiments" / name).exists()),
            (f"docs/{page}", (root / "docs" / page).exists()),
        )
        if exists
    ]
    if taken:
        raise UserError(f"NAME {name!r} exists already: {', '.join(taken)}")


def check_title(title: str) -> None:
    odd = sorted({c for c in title if not (c.isalnum() or c in TITLE_MARKS)})
    if odd:
        shown = " ".join(repr(c) if not c.isprintable() or c == " " else c for c in odd)
        raise UserError(f"TITLE may hold only letters, digits, spaces and {TITLE_MARKS.strip()} (it holds {shown})")
    if not title[:1].isalpha() or title != " ".join(title.split()) or len(title) > LONGEST_TITLE:
        raise UserError(
            f"TITLE must start with a letter, have single spaces and no space at either end, and be at most "
            f"{LONGEST_TITLE} characters: {title!r}"
        )


def section(name: str, title: str, root: Path) -> Section:
    check_name(name, root)
    check_title(title)
    nav = title.split(":", 1)[0].strip()
    return Section(name, title, nav)
