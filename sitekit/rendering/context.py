"""What a marker needs to know about the page it sits on: one type, imported by every
module that renders markers (markers, references, provenance, branches), none of
which the others need to import for it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sitekit.claims.answer_files import Answer, AnswerBook
from sitekit.claims.claim_files import Claim, ClaimBook
from sitekit.claims.named_files import Book
from sitekit.rendering.pagedata import SiteData

T = TypeVar("T")


class ReadData:
    """The site's data as one page reads it, noting each experiment the page reads (a
    table, a value, a cell, a meta field), in the order read: the runs its provenance
    names once, at its end (provenance.page_section)."""

    def __init__(self, data: Any, read: list[str]) -> None:
        self.inner, self.read = data, read

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def note(self, ref: str) -> None:
        """Note the experiment of ``ref`` ("kv_cache.memory", or "kv_cache" alone), once
        it has been read: a name that failed to read is no run the page used."""
        experiment = ref.split(".")[0]
        if experiment not in self.read:
            self.read.append(experiment)

    def _read(self, how: str, ref: str, *args: Any) -> Any:
        found = getattr(self.inner, how)(ref, *args)
        self.note(ref)
        return found

    def table(self, ref: str) -> Any:
        return self._read("table", ref)

    def value(self, ref: str) -> Any:
        return self._read("value", ref)

    def cell(self, ref: str, column: str, where: Any = None) -> Any:
        return self._read("cell", ref, column, where)

    def meta(self, experiment: str) -> Any:
        found = self.inner.meta(experiment)
        self.note(experiment)
        return found


@dataclass
class PageContext:
    data: SiteData
    page: str  # source path, for error messages
    url_prefix: str  # relative path from the page to the site root, e.g. "../"
    figures: dict[str, str] = field(default_factory=dict)  # site path -> SVG text to write
    claims: ClaimBook = field(default_factory=ClaimBook)  # every claim the build defines
    used: set[str] = field(default_factory=set)  # ids of the claims this page names
    titles: dict[str, str] = field(default_factory=dict)  # source path -> nav title, for links between pages
    answers: AnswerBook = field(default_factory=AnswerBook)  # every answer the build defines
    answered: set[str] = field(default_factory=set)  # ids of the answers this page names
    read: list[str] = field(default_factory=list)  # the experiments the page reads, in order (ReadData)
    checks: dict[str, Any] = field(default_factory=dict)  # claim id -> how it was checked (claim_legend.Check)
    tables: int = 0  # the tables rendered so far: each caption's id
    # HTML a marker set aside for after Markdown (set_aside), by its placeholder; None: inline
    aside: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.data, ReadData):
            self.data = ReadData(self.data, self.read)

    def set_aside(self, html: str) -> str:
        """``html`` (a whole element) as a placeholder that Markdown passes on as it
        stands, and that ``put_back`` replaces with it in the page's HTML: a measured
        table is HTML already, and Markdown would parse its thousands of cells only to
        leave them as they are. Where the page keeps no set-aside HTML, ``html`` itself."""
        if self.aside is None:
            return html
        key = f'<table data-set-aside="{len(self.aside)}"></table>'
        self.aside[key] = html
        return key

    def claim(self, ref: object) -> Claim:
        """The claim a page names, recorded as used (a claim no page uses fails the build)."""
        return _named(self.claims, self.used, ref)

    def answer(self, ref: object) -> Answer:
        """The answer a page names, recorded as used (an answer no page uses fails the build)."""
        return _named(self.answers, self.answered, ref)


_PLACEHOLDER = re.compile(r'<table data-set-aside="\d+"></table>')


def put_back(html: str, aside: dict[str, str]) -> str:
    """The page's HTML with each placeholder of ``set_aside`` replaced by what it holds;
    a ValueError where one is missing or found twice (Markdown did not pass it on as it
    stood), or where the page holds one it did not set aside."""
    found = _PLACEHOLDER.findall(html)
    wrong = [key for key in aside if found.count(key) != 1] + [key for key in found if key not in aside]
    if wrong:
        raise ValueError(f"a table set aside for after Markdown did not come out of it as it went in: {wrong[0]}")
    return _PLACEHOLDER.sub(lambda m: aside[m.group(0)], html)


def _named(book: Book[T], used: set[str], ref: object) -> T:
    found = book.get(ref)
    used.add(str(ref))  # get() returned: ref is an id
    return found
