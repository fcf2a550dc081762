"""Figures a page quotes, never measured here: the source chapter's own (site_data/chapter/,
typed from measure/reference/chapter.py) and the published facts a few tables copy. A
page gives them one line naming their source instead of a measurement's provenance, and
writes each number with the digits its source gave; a quoted figure set beside this run's
in another unit is converted to that unit, with its source's wording on hover."""

from __future__ import annotations

import math
from typing import Any

from sitekit.language import formatting
from sitekit.language.i18n import _
from sitekit.rendering import escape

# Experiments that measure nothing, and tables of a measuring experiment that copy
# published facts: the sentence naming their source, and the file that holds them.
QUOTED: dict[str, tuple[str, str]] = {
    "chapter": ("typed from the source chapter, {path}", "measure/reference/chapter.py"),
}
QUOTED_TABLES: dict[str, tuple[str, str]] = {
    "memory_budget.configs": (
        "copied from published config.json files and parameter counts, {path}",
        "measure/reference/public_configs.py",
    ),
    "memory_budget.card_presets": (
        "copied from the vendors' product pages, {path}",
        "measure/reference/cards.py",
    ),
    # the chapter's model on GPUs: predictions worked out from datasheets, not the chapter's figures
    "chapter.gpu_predictions": (
        "predicted by the roofline from each card's datasheet and the model's config, {path}",
        "measure/experiments/chapter/predictions.py",
    ),
    "chapter.gpu_speculation": (
        "predicted by the roofline from each card's datasheet and the model's config, {path}",
        "measure/experiments/chapter/predictions.py",
    ),
}


# Tables a measuring experiment computes from stated assumptions alone (the memory
# budget's cards, precisions, reserve): nothing in them was measured, so a table shows its
# CSV and no run's provenance.
ASSUMED: frozenset[str] = frozenset(
    f"memory_budget.{name}"
    for name in ("assumptions", "cards", "precisions", "cache_precisions", "budget", "users_by_context", "windowed")
)


def is_assumed(exp: str, table: str) -> bool:
    return f"{exp}.{table}" in ASSUMED


def is_quoted(exp: str, table: str | None = None) -> bool:
    return exp in QUOTED or f"{exp}.{table}" in QUOTED_TABLES


def source_html(ctx, exp: str, table: str | None = None) -> str:
    """The line under a quoted table: where its figures come from, and its CSV."""
    sentence, path = QUOTED_TABLES.get(f"{exp}.{table}") or QUOTED[exp]
    before, _at, after = _("Source: " + sentence, "source").partition("{path}")
    text = f"{escape.text(before, None)}<code>{escape.text(path)}</code>{escape.text(after, None)}"
    link = f' · <a href="{ctx.url_prefix}data/{exp}/{table}.csv">{table}.csv</a>' if table else ""
    return f'<p class="source">{text}{link}</p>'


# Units one figure can be written in, by kind, with their size in the kind's base unit.
_SCALE: dict[str, tuple[str, float]] = {
    "s": ("time", 1.0),
    "ms": ("time", 1e-3),
    "µs": ("time", 1e-6),
    "bytes": ("memory", 1.0),
    "KiB": ("memory", 2.0**10),
    "MiB": ("memory", 2.0**20),
    "GiB": ("memory", 2.0**30),
}


def convert(value: int | float, unit: str, into: str) -> int | float:
    """``value`` in ``unit`` written in ``into`` (0.1665 s is 166.5 ms): the same quantity,
    rounded to 12 significant digits so that no binary residue (166.50000000000003) shows."""
    if unit == into:
        return value
    a, b = _SCALE.get(unit), _SCALE.get(into)
    if a is None or b is None or a[0] != b[0]:
        raise ValueError(f"cannot write a figure in {unit or 'no unit'!r} as {into!r}")
    return float(f"{value * a[1] / b[1]:.12g}")


def given_decimals(value: int | float) -> int:
    """The decimals a figure was given with (1.0224: 4, 6.0: 0)."""
    if isinstance(value, int) or float(value).is_integer():
        return 0
    return len(repr(float(value)).partition(".")[2])


def as_given(value: Any, unit: str) -> str:
    """A quoted number as its source gave it, every digit kept, in the page's locale, with
    its unit: 494,032,768 parameters, 1.0224 s, 13.55 %, 3,624,960 bytes, 2.67×."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return formatting.format_value(value, unit)
    decimals = given_decimals(value)
    if unit == "fraction":
        return formatting.format_value(value, unit, style="percent", digits=max(0, decimals - 2))
    if unit == "x":
        return formatting.format_value(value, unit, style="ratio", digits=decimals)
    text = formatting.number(value, digits=decimals, fixed=True)
    if unit == "bytes":
        return text + formatting.NBSP + formatting.count_word("bytes", formatting.plural_category(text))
    return text + formatting.unit_suffix(unit, text)


# A time the site writes in ms wherever it is a step or a prefill: a quoted figure in
# seconds is shown in ms too, with every digit its source gave (1.0224 s is 1,022.4 ms).
SITE_UNIT = {"s": "ms"}


def in_site_unit(value: Any, unit: str) -> str:
    """A quoted figure as as_given writes it, in the site's unit for its kind where that
    differs from its source's, the source's own wording on hover."""
    into = SITE_UNIT.get(unit)
    if into is None or not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return escape.text(as_given(value, unit), escape.TEXT)
    digits = max(0, given_decimals(value) - 3)  # 3: the powers of ten between s and ms
    return beside(value, unit, into, "fixed", digits, "chapter")


def beside(value: int | float, unit: str, into: str, style: str, digits: int | None, exp: str) -> str:
    """A figure converted to the unit of the row it stands in, its own wording as the title."""
    shown = formatting.format_value(convert(value, unit, into), into, style=style, digits=digits)
    shown += formatting.unit_suffix(into, shown)
    own = as_given(value, unit)
    title = _("as the chapter gives it: {figure}") if exp == "chapter" else _("as recorded: {figure}")
    return (
        f'<span title="{escape.attribute(title.format(figure=own), escape.TEXT)}">'
        f"{escape.text(shown, escape.TEXT)}</span>"
    )
