"""The notebook pages (mkdocs-jupyter): the line above each, to download it and where to
run it, its outputs in the edition's language (notebook_outputs.py), and the check that
every notebook was executed against the data and the code the build renders."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from sitedata import hashes
from sitekit.language import i18n
from sitekit.rendering import escape, notebook_outputs
from sitekit.rendering.pagedata import SiteData
from sitekit.sources import project


def content(html: str, name: str, url_prefix: str) -> str:
    """A notebook page's HTML: the download line first (mkdocs-jupyter copies the notebook
    beside its page), then its outputs in the edition's language."""
    link = escape.text(i18n._("Download this notebook"))
    href, shown = escape.attribute(quote(name)), escape.text(name)
    # the notebook renderer's stand-in for a figure with no description, in English in every edition
    alt = escape.attribute(i18n._("A figure the notebook drew from the data, described in the text above it"), None)
    html = html.replace('alt="No description has been provided for this image"', f'alt="{alt}"')
    html = notebook_outputs.translate(html)
    note = project.notebook_note(url_prefix)
    return f'<p class="notebook-download"><a href="{href}" download>{link}</a> ({shown}) {note}.</p>\n' + html


def check(docs: Path, data: SiteData) -> None:
    """A notebook page shows what it printed when it was executed: it must have been
    executed against the site_data this build renders, with the code it holds now, and
    every edition must hold the English notebook's code in its own words."""

    def read(path: Path) -> dict:
        return json.loads(path.read_text(encoding="utf-8"))

    for path in sorted(docs.glob("*.ipynb")):
        english = docs / (path.name.split(".")[0] + ".ipynb")
        source = None if english == path else read(english)
        why = hashes.staleness(read(path), data.data_hash, source)
        if not why and source is not None:  # its code prints what its page shows
            why = notebook_outputs.untranslated(source, read(path), path.name.split(".")[1])
        if why:
            raise ValueError(f"docs/{path.name}{why}: run `make notebooks`")
