"""A table's cells and headers: numbers as the page's locale writes them, text in the
page's language where it is words for a reader, else marked as the data's English."""

from __future__ import annotations

import math
import re
from typing import Any

from sitekit.language import formatting, hyphenation, i18n
from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.sources import quoted

# The end of a cell or a row with the next tag straight after it (</td><td>, </tr><tr>),
# and a line break in a cell with its next line straight after it (<br>Speculative): the
# search index drops the tags and would glue the words on either side. Only the site's
# own cells write a bare <br> (Markdown writes <br /> and a line after it; no <pre> holds one).
_GLUED = re.compile(r"(</t[dhr]>(?=<)|<br>(?=\S))")


def apart(html: str) -> str:
    """A page's HTML with a line after the end of each table cell and row that another tag
    follows straight away, and after each line break in a cell: the browser draws the table
    the same, and the search index, which keeps a page's text and parts words only where a
    space or a line does, reads "model HuggingFaceTB" and "layer max |h|", not
    "modelHuggingFaceTB" and "layermax |h|", and "kv_cache KV cache", not "kv_cacheKV cache"."""
    return _GLUED.sub("\\1\n", html)


def _cell_html(value: Any, col: dict, style: str | None) -> str:
    if style == "link":
        return escape.link(value)
    digits = None
    if style and style.startswith("fixed:"):  # "fixed:3": three decimals, as a reader recomputes from them
        style, digits = "fixed", int(style.removeprefix("fixed:"))
    if hasattr(value, "item"):  # a NumPy scalar from the frame's row: the Python number it holds
        value = value.item()
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if col["unit"] == "bytes" and number and style in formatting.IEC_STYLES:
        text = formatting.bytes_in(value, style)  # the column's one unit is in its header
    else:
        text = formatting.format_value(value, col["unit"], style=style or _default_style(col, value), digits=digits)
    if (
        col["unit"] == "bytes"
        and number
        and abs(value) >= 2**10
        and (style or "auto") in ("auto", "iec", *formatting.IEC_STYLES)
    ):
        exact = escape.attribute(_("{count} bytes").format(count=formatting.integer(value)), escape.TEXT)
        return f'<span title="{exact}">{escape.text(text, escape.TEXT)}</span>'
    return escape.text(text, escape.TEXT)


def _byte_column_styles(frame, cols: list[dict]) -> dict[str, str]:
    """One unit per column of bytes, named in its header: exact counts (bytes) when every
    cell is under 1 MiB, else the one IEC unit that writes the largest cell with at most
    four digits before the decimal mark (1,444 MiB beside 13 MiB, never 1.41 GiB beside it)."""
    out = {}
    for c in cols:
        if c["unit"] != "bytes":
            continue
        numbers = [v for v in frame[c["name"]].tolist() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        numbers = [abs(v) for v in numbers if v == v and abs(v) != float("inf")]
        out[c["name"]] = formatting.iec_style(max(numbers)) if any(v >= 2**20 for v in numbers) else "int"
    return out


def _default_style(col: dict, value: Any) -> str:
    if col["unit"] == "bytes" and isinstance(value, (int, float)) and abs(value) < 2**20:
        return "int"
    return "auto"


def recorded_english(value: Any, declared: dict) -> bool:
    """Text an edition shows as the run recorded it (a model's answer, a name, a token), in
    the data's English: marked ``lang="en"`` for readers and for the editions' test."""
    return isinstance(value, str) and not declared.get("words") and i18n.language() != i18n.DEFAULT


def _td(value: Any, col: dict, style: str | None) -> str:
    """A cell; text (a name, a status, a reason) may wrap, numbers stay on one line."""
    opening = '<td class="text">' if isinstance(value, str) else "<td>"
    if recorded_english(value, col):
        opening = '<td class="text" lang="en">'
    return f"{opening}{_cell_html(value, col, style)}</td>"


def _header(col: dict, file: str, style: str | None = None) -> str:
    """A column's header: its label in the page's language, its unit, and in its tooltip
    the description and the column's name in the CSV file, which is never translated.
    A column of bytes names the one unit its cells are counted in (``style``): bytes, or
    the IEC unit; cells that each carry their own unit (``iec``) leave it out."""
    unit = col["unit"]
    shown = {"bytes": "", "x": "", "fraction": "", "": ""}.get(unit, unit)
    if unit == "bytes" and style in formatting.IEC_STYLES:
        shown = formatting.IEC_STYLES[style]
    elif unit == "bytes" and style in ("int", "bytes"):
        shown = "bytes"
    english = col.get("label") or col["name"]
    if shown and re.search(rf"(?<!\w){re.escape(shown)}(?!\w)", english):
        shown = ""  # "tokens each", not "tokens each (tokens)"
    label = escape.text(hyphenation.hyphenated(_(english, "column label"), i18n.language()))
    where = _("column {name} of {file}").format(name=col["name"], file=file)
    described = col.get("description")
    title = escape.attribute(f"{_(described, 'column description')} ({where})" if described else where)
    shown = _(shown, "unit") if shown and shown not in formatting.IEC_STYLES.values() else shown
    return f'<th title="{title}">{label}' + (f" ({escape.text(shown)})" if shown else "") + "</th>"


def quoted_td(value: Any, col: dict, unit: str, text: Any) -> str:
    """A cell of a quoted table whose rows each give their unit: the number with every
    digit its source gave and the row's unit (a time in ms, quoted.SITE_UNIT), or, where
    the row has no number, its text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return f"<td>{quoted.in_site_unit(value, unit)}</td>"
    # the source's own words ("8 GB laptop GPU") in the edition's, where the catalog has them;
    # a name it does not translate ("Qwen2.5-0.5B-Instruct") stays as the source wrote it
    known = i18n.known(text) if isinstance(text, str) else None
    if known:
        return f'<td class="text">{escape.text(known)}</td>'
    return _td(text, col, None)
