"""The project as a reader reuses it: where its files are, under which licences, and how to
cite it. The markers ``{{ repository() }}`` and ``{{ citation() }}``, and the notebook
pages' line on where to run them.

What is known is held once: CITATION.cff at the project's root (title, authors, licences,
keywords), the repository's address from the pages workflow (SITE_REPOSITORY, also the
theme's ``repo_url``), the site's own address (SITE_URL) and the commit it was built from
(source_archive.py). Nothing here is invented: a field not known is left out.
"""

from __future__ import annotations

import html
from pathlib import Path

import yaml

from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.sources import source_archive

CITATION = "CITATION.cff"
LICENCES = {  # the files that hold each licence's text, at the project's root
    "MIT": "LICENSE",
    "CC-BY-4.0": "LICENSE-CC-BY-4.0.txt",
}
# The published address of the site, when the build knows it (render.on_config).
site_url: str = ""


def read(root: Path) -> dict:
    """CITATION.cff as data; the build fails, naming it, when it is no citation file."""
    try:
        found = yaml.safe_load((root / CITATION).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"{CITATION}: cannot be read: {e}") from None
    if not isinstance(found, dict) or not found.get("title") or not found.get("authors"):
        raise ValueError(f"{CITATION}: a citation file needs a title and its authors")
    return found


cff: dict = {}  # read once per build (render.on_config)


def _authors() -> str:
    names = []
    for a in cff["authors"]:
        names.append(a.get("name") or " ".join(p for p in (a.get("given-names"), a.get("family-names")) if p))
    return "; ".join(names)


def repository(ctx) -> str:
    """A link to the repository when the build knows its address; else to the archive of
    the files the site was built from, which holds the same project."""
    if source_archive.repository:
        href = escape.attribute(source_archive.repository, None)
        return f'<a href="{href}">{escape.text(source_archive.repository, None)}</a>'
    if source_archive.built_from.commit is None:
        return escape.text(_("this site's own files (it was not built from a git checkout)"), None)
    commit = source_archive.built_from.commit[:10]
    label = _("the files this site was built from, commit {commit}").format(commit=commit)
    return f'<a href="{ctx.url_prefix}{source_archive.NAME}" download>{escape.text(label, None)}</a>'


def citation(ctx) -> str:
    """How to cite the site: a sentence and a BibTeX entry, from CITATION.cff and what the
    build knows (its address, its commit, the repository)."""
    title, authors = cff["title"], _authors()
    commit = source_archive.built_from.commit
    where = site_url or source_archive.repository
    parts = [f"{authors}. <em>{html.escape(title)}</em>."]
    if where:
        parts.append(f'<a href="{escape.attribute(where, None)}">{escape.text(where, None)}</a>.')
    if commit:
        parts.append(escape.text(_("Built from commit {commit}.").format(commit=commit[:10]), None))
    bib = [f"  title = {{{title}}}", f"  author = {{{{{authors}}}}}"]
    if where:
        bib.append(f"  howpublished = {{\\url{{{where}}}}}")
    if commit:
        bib.append(f"  note = {{commit {commit[:10]}}}")
    entry = "@misc{making-llm-inference-cheap,\n" + ",\n".join(bib) + "\n}"
    licences = ", ".join(str(x) for x in (cff.get("license") or []))
    note = _("From {file}, which also gives the licences ({licences}).").format(file=CITATION, licences=licences)
    return (
        f'<p class="citation">{" ".join(parts)}</p>\n'
        # braces as entities: a page's text holds no "{{" (the markers' own syntax)
        f'<pre class="citation"><code>{html.escape(entry).replace("{", "&#123;").replace("}", "&#125;")}</code></pre>\n'
        f'<p class="citation-source">{escape.text(note, None)}</p>'
    )


def notebook_note(url_prefix: str) -> str:
    """Where to run a downloaded notebook: in a copy of the project, from the repository or
    from the archive of the files this site was built from."""
    ctx = type("Page", (), {"url_prefix": url_prefix})()
    return escape.text(_("and run it in a copy of the project:"), None) + " " + repository(ctx)
