"""What a marker needs to know about the page it sits on: one type, imported by every
module that renders markers (markers, references, provenance, branches), none of
which the others need to import for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from sitekit.claims.answer_files import Answer, AnswerBook
from sitekit.claims.claim_files import Claim, ClaimBook
from sitekit.claims.named_files import Book
from sitekit.rendering.pagedata import SiteData

T = TypeVar("T")


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

    def claim(self, ref: object) -> Claim:
        """The claim a page names, recorded as used (a claim no page uses fails the build)."""
        return _named(self.claims, self.used, ref)

    def answer(self, ref: object) -> Answer:
        """The answer a page names, recorded as used (an answer no page uses fails the build)."""
        return _named(self.answers, self.answered, ref)


def _named(book: Book[T], used: set[str], ref: object) -> T:
    found = book.get(ref)
    used.add(str(ref))  # get() returned: ref is an id
    return found
