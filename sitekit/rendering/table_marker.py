"""The table marker: ``{{ table('kv_cache.memory', columns=[...], caption='...') }}``.

A measured table on the page: its caption above it, outside the box that scrolls a wide
table sideways (a phone shows it whole), its rows, and under it one short line, the CSV
and a link to the run's provenance at the page's end (provenance.table_line). A long table
shows its summary rows and folds the rest, one click away (``summary``, ``limit``): a
reader sees the pattern, and every row stays on the page and in the CSV.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

import numpy as np

from sitekit.language import formatting, recorded, statuses
from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.rendering.cells import _byte_column_styles, _header, _td, quoted_td
from sitekit.rendering.context import PageContext
from sitekit.rendering.pagedata import SiteDataError
from sitekit.sources import page_provenance, quoted

# A table longer than this shows FOLD_SHOW rows, or the rows its ``summary`` names, and
# folds the others: past a screen of rows a reader loses the columns' headers.
FOLD_ROWS = 20
FOLD_SHOW = 8
# The most rows a page holds of one table, folded: a per-request table of thousands of
# rows is the CSV's to hold.
MOST_ROWS = 300


def table(
    ctx: PageContext,
    ref: str,
    columns: list[str] | None = None,
    styles: dict | None = None,
    where: dict | None = None,
    caption: str | None = None,
    limit: int | None = None,
    units: str | None = None,
    merge: dict | None = None,
    summary: dict | None = None,
    ends: bool = False,
    hide_below: dict | None = None,
) -> str:
    """``units`` names a column that gives each row's unit (a quoted table of figures of
    every kind): numbers are then written as their source gave them, with that unit, and
    ``merge={'value': 'text'}`` shows a row's text where it has no number. ``limit`` rows
    are shown and the others folded; ``summary={'layer': [0, 11, 29]}`` shows the rows
    whose column holds one of those values (with ``ends``, the first and the last row too) and
    folds the others. ``hide_below={'self_ms':
    x}`` leaves out the rows under x in that column (the page says why; the CSV has them).
    A style ``fixed:3`` writes a column with three decimals."""
    t = ctx.data.table(ref)
    cols = [t.column(c) for c in columns] if columns else t.columns
    for c in (*(styles or {}), *(summary or {}), *(hide_below or {})):
        t.column(c)
    frame = t.rows(where)
    for name, floor in (hide_below or {}).items():
        frame = frame[~(frame[name] < floor)]
    if frame.empty:
        raise SiteDataError(f"table {ref} where {where} has no rows")
    if columns:  # rows the chosen columns cannot tell apart are one row to a reader
        frame = frame.drop_duplicates(subset=columns)
    frame = frame.head(MOST_ROWS)
    shown = _summary_mask(frame, summary, limit)
    if ends:
        shown[[0, -1]] = True
    styles = {**_byte_column_styles(frame, cols), **(styles or {})}
    merge = {k: t.column(v) for k, v in (merge or {}).items()}
    if units:
        t.column(units)
    file = t.meta["tables"][t.name]["file"]
    head = "<thead><tr>" + "".join(_header(c, file, styles.get(c["name"])) for c in cols) + "</tr></thead>"

    def td(row, c):
        if units and c["name"] in merge:
            other = merge[c["name"]]
            return quoted_td(
                row[c["name"]],
                other,
                row[units] if isinstance(row[units], str) else "",
                recorded.data_text(row[other["name"]], other),
            )
        return _td(statuses.in_words(recorded.data_text(row[c["name"]], c)), c, styles.get(c["name"]))

    cap = html.escape(caption) if caption else escape.text(_(t.title, "table title"))
    ctx.tables += 1
    label = f"table-{ctx.tables}"

    def table_html(rows) -> str:
        """The rows as a table set aside from Markdown; the shown and the folded rows share
        the header and the caption that labels them."""
        body = "\n".join("<tr>" + "".join(td(row, c) for c in cols) + "</tr>" for row in _records(rows))
        return ctx.set_aside(f'<table aria-labelledby="{label}">\n{head}\n<tbody>\n{body}\n</tbody>\n</table>')

    out = (
        f'<div class="measured-table" data-table="{ref}">\n<p class="table-caption" id="{label}">{cap}</p>\n'
        + table_html(frame[shown])
        + "\n"
    )
    folded = frame[~shown]
    if not folded.empty:
        more = _("The other rows ({count})").format(count=formatting.integer(len(folded)))
        out += (
            f'<details class="table-fold"><summary>{escape.text(more, None)}</summary>\n'
            + table_html(folded)
            + "\n</details>\n"
        )
    if quoted.is_quoted(t.experiment, t.name):
        out += quoted.source_html(ctx, t.experiment, t.name)
    else:
        out += page_provenance.table_line(ctx, t.experiment, t.name)
    return out + "\n</div>"


def _records(frame) -> Iterator[dict]:
    """Each row as a dict of the values the frame holds (a NaN the data wrote stays one)."""
    names = list(frame.columns)
    return (dict(zip(names, values, strict=True)) for values in frame.itertuples(index=False, name=None))


def _summary_mask(frame, summary: dict | None, limit: int | None) -> Any:
    """Which rows show unfolded: the ``summary`` rows, the first ``limit``, or, in a table
    longer than FOLD_ROWS, the first FOLD_SHOW; every row where none applies."""
    if summary:
        keep = np.ones(len(frame), dtype=bool)
        for name, values in summary.items():
            wanted = values if isinstance(values, (list, tuple, set)) else [values]
            keep &= frame[name].isin(list(wanted)).to_numpy()
        if not keep.any():
            raise SiteDataError(f"summary {summary} names no row of the table")
        return keep
    count = limit if limit is not None else FOLD_SHOW if len(frame) > FOLD_ROWS else len(frame)
    return np.arange(len(frame)) < count
