r"""The editions' style sheets, style/<lang>.md, read as the tests hold the editions to them.

A style sheet is prose for the edition's writers with four tables the tests read (the
rest of the page is theirs): under ``## Terms`` the chapter's terms
(``| English | <language> | writes | never |``), under ``## Register`` the forms its
register never uses (``| never | write |``), under ``## English kept`` the English words
and phrases it keeps (``| English | why |``), and under ``## Anglicisms replaced`` the
English words it writes in its own words (``| English | <language> |``); a ``|`` inside a
cell is written ``\|``. A ``writes`` or
``never`` cell holds regular expressions in backticks, matched without regard to case
and as whole words (a form is not found inside a longer word)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from tests.conftest import REPO

STYLE = REPO / "style"
TICKED = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Rule:
    """A form the edition never writes (``pattern``), and what it writes instead."""

    section: str
    english: str
    pattern: re.Pattern
    instead: str


@dataclass
class StyleSheet:
    lang: str
    terms: list[tuple[str, re.Pattern]] = field(default_factory=list)  # (English, what the edition writes)
    never: list[Rule] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def whole_word(expression: str) -> re.Pattern:
    return re.compile(rf"(?<![\w-])(?:{expression})(?![\w-])", re.IGNORECASE)


def _tables(text: str) -> dict[str, list[list[str]]]:
    """Each ``## heading``'s table rows (cells stripped), its header and rule left out."""
    tables: dict[str, list[list[str]]] = {}
    heading = None
    for line in text.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            tables[heading] = []
        elif heading and line.startswith("|"):
            row = line.strip().removeprefix("|").removesuffix("|")
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]
            tables[heading].append(cells)
    return {h: rows[2:] for h, rows in tables.items()}  # the header, then |---|


@cache
def style_sheet(lang: str) -> StyleSheet:
    text = (STYLE / f"{lang}.md").read_text(encoding="utf-8")
    tables = _tables(text)
    sheet = StyleSheet(lang)
    for row in tables.get("Terms", []):
        english, writes, never = row[0], row[2], row[3]
        sheet.terms += [(english, whole_word(p)) for p in TICKED.findall(writes)]
        sheet.never += [Rule("Terms", english, whole_word(p), row[1]) for p in TICKED.findall(never)]
    for row in tables.get("Register", []):
        sheet.never += [Rule("Register", p, whole_word(p), row[1]) for p in TICKED.findall(row[0])]
    for row in tables.get("English kept", []):
        sheet.kept += TICKED.findall(row[0]) or [row[0]]
    for row in tables.get("Anglicisms replaced", []):
        sheet.never += [Rule("Anglicisms replaced", p, whole_word(p), row[1]) for p in TICKED.findall(row[0])]
    return sheet
