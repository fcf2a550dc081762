"""The claim marks (✓ ≈) a reader sees: the mark after a checked sentence, which says in
words what it means and leads to the check itself; how to read the marks, said once on
every page that has them, naming only the marks the page uses; and the page's list of its
checks, each with the expression and the numbers it read (claims.py decides them; a claim
that does not hold fails the build)."""

from __future__ import annotations

import re
from typing import NamedTuple

from sitekit.language import i18n
from sitekit.language.i18n import _
from sitekit.rendering import escape

SIGNS = {"ok": "✓", "noise": "≈"}
# The first mark of a page, and where the legend goes after it.
FIRST_MARK = '<a class="claim claim-'


class Check(NamedTuple):
    state: str  # ok or noise
    expression: str  # as evaluated, on one line
    numbers: str  # what it read (claims.numbers)
    text: str  # the page's own sentence, as the marker gives it


def _hover(state: str) -> str:
    """What a mark means, in words: the expression is one click further, in the list."""
    if state == "ok":
        return _(
            "Checked when this page was built: this run's measurements bear the sentence out. "
            "Select the mark for the check and its numbers."
        )
    return _(
        "Checked when this page was built: this run's intervals overlap, so on this machine the "
        "measurements cannot tell. Select the mark for the check and its numbers."
    )


def anchor(claim_id: str) -> str:
    return f"check-{claim_id}"


def mark(state: str, claim_id: str, text: str) -> str:
    """The sentence with its mark, a link to its check in the page's list."""
    title = escape.attribute(_hover(state), None)
    link = f'<a class="claim claim-{state}" href="#{anchor(claim_id)}" title="{title}">{SIGNS[state]}</a>'
    if state == "noise":
        note = _("within this machine's noise")
        return f'{text}{link} <span class="claim-noise-note">({escape.text(note, None)})</span>'
    return text + link


def _plain(text: str) -> str:
    """A sentence as the list shows it: the emphasis and formula marks of its Markdown left out."""
    return re.sub(r"[*$`\\]", "", text)


def checks_html(checks: dict[str, Check]) -> str:
    """Every mark of the page, once each, with what was checked: folded, opened by a mark."""
    if not checks:
        return ""
    items = []
    for claim_id, c in checks.items():
        how = _("checked as {expression}, which read {numbers}")
        before, _at, rest = how.partition("{expression}")
        middle, _at, after = (escape.text(part, None) for part in rest.partition("{numbers}"))
        before = escape.text(before, None)
        sign = f'<span class="claim claim-{c.state}">{SIGNS[c.state]}</span>'
        expression = escape.text(f"{claim_id}: {c.expression}", None)
        items.append(
            f'<li id="{escape.attribute(anchor(claim_id), None)}">{sign} {escape.text(_plain(c.text), None)}: '
            f"{before}<code>{expression}</code>{middle}<code>{escape.text(c.numbers, None)}</code>{after}</li>"
        )
    summary = _("How each marked sentence was checked ({count})").format(count=len(checks))
    return (
        f'<details class="checks" id="checks"><summary>{escape.text(summary, None)}</summary>'
        f'<ol class="checks">{"".join(items)}</ol></details>'
    )


def after_first_mark(html: str, *, page_id: str, url: str) -> str:
    """How to read the marks, once, after the paragraph that holds a page's first one: the
    marks the page uses, what each means, and a link to the methods page's account."""
    first = html.find(FIRST_MARK)
    if first < 0 or page_id == "methods.md":
        return html
    parts = [_("✓ checked against this run's data when the page was built (select a mark for its check)")]
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
