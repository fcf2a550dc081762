"""The theme's own words that it leaves in English in every edition, in the edition's: the
headings' anchors' title, the palette toggles' names (mkdocs.yml) and the footer's line.
A page's (hooks/render.py) and the "page not found" page's (hooks/not_found.py)."""

from __future__ import annotations

from sitekit.language import i18n
from sitekit.rendering import escape


def translate(output: str) -> str:
    """``output``, a page the theme wrote, with those words in the current edition's."""
    if i18n.language() == i18n.DEFAULT:
        return output
    output = output.replace('title="Permanent link"', f'title="{i18n._("Permanent link", "theme")}"')
    toggles = {  # each a literal: `make messages` keeps what the code asks for (i18n.written_in_code)
        "Switch to dark mode": i18n._("Switch to dark mode", "theme"),
        "Switch to light mode": i18n._("Switch to light mode", "theme"),
    }
    for english, name in toggles.items():
        output = output.replace(f'"{english}"', f'"{escape.attribute(name, None)}"')
    return output.replace("\n    Made with\n", f"\n    {escape.text(i18n._('Made with', 'theme'), None)}\n")
