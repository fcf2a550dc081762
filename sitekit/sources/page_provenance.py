"""A page's provenance, once, at its end: every run the page read, in full, what the runs
share said once and what differs run by run; under each table a short line with its CSV
and a link to its run there (table_line); the sources of the figures the page quotes; and
the list of the checks behind its marks (claim_legend.checks_html)."""

from __future__ import annotations

import re

from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.sources import quoted
from sitekit.sources.provenance import _csv_link, items

# The section's heading carries this id; a page's own text is what comes before that
# heading (the tests read a page's text alone: tests/helpers.render_page). No HTML comment
# marks it: a built page carries no comment at all (tests/test_hostile_data.py).
SECTION_ID = "provenance"


def own_text(markdown: str) -> str:
    """A rendered page's markdown without its provenance section."""
    return re.split(rf"\n\n## [^\n]*\{{#{SECTION_ID}\}}", markdown, maxsplit=1)[0]


def anchor(exp: str) -> str:
    return f"provenance-{exp}"


def table_line(ctx, exp: str, name: str) -> str:
    """Under a measured table: its CSV, and a link to its run's provenance at the page's
    end; under a table computed from stated assumptions, its CSV alone."""
    csv = f'<a href="{_csv_link(ctx, exp, name)}">{escape.text(name)}.csv</a>'
    if quoted.is_assumed(exp, name):
        words = escape.text(_("Computed from the stated assumptions, not measured"), None)
        return f'<p class="table-data">{words} · {csv}</p>'
    how = escape.text(_("how it was measured"), None)
    return f'<p class="table-data">{escape.text(_("Data"), None)}: {csv} · <a href="#{anchor(exp)}">{how}</a></p>'


def _runs_html(ctx, runs: list[str]) -> str:
    """The runs' provenance in two tables: the fields every run shares, once; then a row
    per run with the fields that differ (when, which code, its data), the row a table's
    line leads to."""
    fields = {exp: dict(items(ctx, exp)) for exp in runs}
    names = list(fields[runs[0]])
    shared = [k for k in names if len({fields[exp][k] for exp in runs}) == 1 and k not in ("data", "measured", "code")]
    own = [k for k in names if k not in shared]
    head = "".join(f"<th>{escape.text(_(k, 'provenance'))}</th>" for k in ("run", *own))
    rows = []
    for exp in runs:
        title = ctx.data.meta(exp)["title"]
        named = escape.text(escape.cut(_(title, "experiment title")) if isinstance(title, str) else "", None)
        cells = "".join(f"<td>{fields[exp][k]}</td>" for k in own)
        rows.append(f'<tr id="{anchor(exp)}"><td><code>{escape.text(exp)}</code><br>{named}</td>{cells}</tr>')
    common = "".join(
        f"<tr><th>{escape.text(_(k, 'provenance'))}</th><td>{fields[runs[0]][k]}</td></tr>" for k in shared
    )
    return (f'<table class="provenance-table provenance-shared">{common}</table>\n' if common else "") + (
        f'<div class="provenance-scroll"><table class="provenance-runs"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def page_section(ctx, checks_html: str = "") -> str:
    """The end of a page: every run it read; the sources of the figures it quotes; and the
    list of its checked sentences. Empty for a page that read no data."""
    runs = [exp for exp in ctx.read if not quoted.is_quoted(exp) and exp in ctx.data.experiments]
    sources = [quoted.source_html(ctx, exp) for exp in ctx.read if quoted.is_quoted(exp)]
    if not (runs or sources or checks_html):
        return ""
    title = escape.text(_("Where the numbers come from"), None)
    intro = escape.text(
        _(
            "Every table, figure and number on this page comes from the runs below, each "
            "recorded once in full; the line under a table links its CSV and its run here."
        ),
        None,
    )
    return (
        f'\n\n## {title} {{#{SECTION_ID}}}\n\n<div class="page-provenance">\n<p>{intro}</p>\n'
        + (_runs_html(ctx, runs) + "\n" if runs else "")
        + "\n".join(sources)
        + f"\n{checks_html}\n</div>\n"
    )
