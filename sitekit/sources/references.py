"""The reference markers: ``{{ cite('kwon2023') }}`` in a page's prose,
``{{ references() }}`` for the page's numbered list at its end, and
``{{ bibliography() }}`` for the references page, every work with the pages that cite it.

The works and each page's list live in works.py. A page may mention only works on its
own list, so that the list at its end and its mentions cannot disagree; a page with no
list, or an unknown key, fails the build.
"""

from __future__ import annotations

import html

from sitekit.language.i18n import _
from sitekit.rendering.context import PageContext
from sitekit.sources.works import PAGES, WORKS, Work

BY_KEY: dict[str, Work] = {w.key: w for w in WORKS}


class CitationError(ValueError):
    """A bad key or a page without its list: the marker machinery reports it as a build error."""


def family(name: str) -> str:
    """The family name of "Given Family" (every first author here has a one-word family name)."""
    return name.split()[-1]


def short(work: Work) -> str:
    """How the text mentions a work: "Shazeer, 2019", "Hinton and Vinyals, ..." for two
    authors, "Kwon et al., 2023" for more."""
    names = work.authors
    if len(names) == 1:
        who = family(names[0])
    elif len(names) == 2:
        who = _("{first} and {second}").format(first=family(names[0]), second=family(names[1]))
    else:
        who = f"{family(names[0])} et al."
    return f"{who}, {work.year}"


def author_list(work: Work) -> str:
    names = work.authors
    if len(names) == 1:
        return names[0]
    return _("{first} and {second}").format(first=", ".join(names[:-1]), second=names[-1])


def anchor(key: str) -> str:
    return f"ref-{key}"


def _work(key: str) -> Work:
    if key not in BY_KEY:
        raise CitationError(f"unknown work {key!r}; known: {', '.join(sorted(BY_KEY))}")
    return BY_KEY[key]


def page_works(page: str) -> tuple[Work, ...]:
    if page not in PAGES:
        raise CitationError(f"page {page} has no list of works in sitekit/sources/works.py (PAGES)")
    return tuple(_work(k) for k in PAGES[page])


def entry(work: Work) -> str:
    """One work as Markdown: authors, year, title in italics, venue, and its address."""
    where = work.url.removeprefix("https://").removeprefix("www.")
    # the title and venue as published (English), marked so for readers and for the editions' test
    text = (
        f"{html.escape(author_list(work))} ({work.year}). "
        f'<span lang="en">*{html.escape(work.title)}*. {html.escape(work.venue)}.</span>'
    )
    return f"{text} [{html.escape(where)}]({work.url})"


def cite(ctx: PageContext, *keys: str) -> str:
    """A parenthetical mention, "(Kwon et al., 2023)", linked to the entry in the page's list."""
    if not keys:
        raise CitationError("cite() needs at least one key")
    listed = {w.key for w in page_works(ctx.page)}
    parts = []
    for key in keys:
        work = _work(key)
        if key not in listed:
            raise CitationError(f"{ctx.page} cites {key!r}, which is not on its list in sitekit/sources/works.py")
        parts.append(f"[{html.escape(short(work))}](#{anchor(key)})")
    return "(" + "; ".join(parts) + ")"


def references(ctx: PageContext) -> str:
    """The page's works as a numbered list, each with an anchor that its mentions link to."""
    works = page_works(ctx.page)
    if not works:
        return html.escape(_("This page follows no published method: it describes this repository's own procedures."))
    lines = [f'{i}. <span id="{anchor(w.key)}"></span>{entry(w)}' for i, w in enumerate(works, 1)]
    # a catalog's words are text: escaped before the link's parts are filled in
    everything = html.escape(_("Every work cited on this site: [{title}](references.md).")).format(
        title=html.escape(ctx.titles.get("references.md", "References"))
    )
    return "\n".join(lines) + "\n\n" + everything


def citing_pages(key: str) -> list[str]:
    return [page for page, keys in PAGES.items() if key in keys]


def bibliography(ctx: PageContext) -> str:
    """Every work, by first author's family name and year, with links to the pages that
    cite it in the order of the site's nav (``ctx.titles``, read from mkdocs.yml)."""
    lines = []
    for w in sorted(WORKS, key=lambda w: (family(w.authors[0]), w.year)):
        pages = citing_pages(w.key)
        if not pages:
            raise CitationError(f"work {w.key!r} is cited by no page; cite it or remove it from works.py")
        for page in pages:
            if page not in ctx.titles:
                raise CitationError(f"page {page} cites {w.key!r} but is not in the site's nav")
        links = [f"[{html.escape(title)}]({page}#references)" for page, title in ctx.titles.items() if page in pages]
        cited = html.escape(_("Cited on: {pages}.")).format(pages=", ".join(links))
        lines.append(f'- <span id="{anchor(w.key)}"></span>{entry(w)}  \n  {cited}')
    return "\n".join(lines)
