"""How to read the claim marks (✓ ≈), said once on every page that has them: after the
paragraph holding the page's first mark, naming only the marks the page uses, linking to
the methods page's account (claims.py renders the marks themselves)."""

from __future__ import annotations

from sitekit.language import i18n
from sitekit.language.i18n import _
from sitekit.rendering import escape


def after_first_mark(html: str, *, page_id: str, url: str) -> str:
    """How to read the marks, once, after the paragraph that holds a page's first one: the
    marks the page uses, what each means, and a link to the methods page's account."""
    first = html.find('<sup class="claim ')
    if first < 0 or page_id == "methods.md":
        return html
    parts = [_("✓ checked against this run's data when the page was built (hover a mark for the numbers)")]
    if "claim-noise" in html:
        parts.append(_("≈ within this machine's noise: the run's intervals cannot tell"))
    home = url in ("", f"{i18n.language()}/")  # an edition's home sits at its root
    href = f"{'' if home else '../'}methods/#claims-checked-at-build-time"
    legend = (
        '<p class="claim-legend">'
        + escape.text("; ".join(parts), None)
        + f'. <a href="{href}">{escape.text(_("How claims are checked"), None)}</a></p>'
    )
    end = html.find("</p>", first)
    at = len(html) if end < 0 else end + len("</p>")
    return html[:at] + "\n" + legend + html[at:]
