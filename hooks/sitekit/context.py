"""What a marker needs to know about the page it sits on: one type, imported by every
module that renders markers (markers, references, provenance, branches), none of
which the others need to import for it."""

from __future__ import annotations

from dataclasses import dataclass, field

from sitekit.claim_files import Claim, ClaimBook
from sitekit.pagedata import SiteData


@dataclass
class PageContext:
    data: SiteData
    page: str  # source path, for error messages
    url_prefix: str  # relative path from the page to the site root, e.g. "../"
    figures: dict[str, str] = field(default_factory=dict)  # site path -> SVG text to write
    claims: ClaimBook = field(default_factory=ClaimBook)  # every claim the build defines
    used: set[str] = field(default_factory=set)  # ids of the claims this page names
    titles: dict[str, str] = field(default_factory=dict)  # source path -> nav title, for links between pages

    def claim(self, ref: object) -> Claim:
        """The claim a page names, recorded as used (a claim no page uses fails the build)."""
        claim = self.claims.get(ref)
        self.used.add(claim.id)
        return claim
