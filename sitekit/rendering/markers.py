"""The page markers: ``{{ table('kv_cache.memory') }}``, ``{{ value('kv_cache.speedup') }}``,
``{{ cell('cache_size.measured', 'measured_bytes', where={'batch': 1}) }}``,
``{{ between('batching.ratio_low', 'batching.ratio_high') }}`` (a range),
``{{ answer('kv_cache.longest_generation') }}`` (a number worked out from the data, answer_files.py),
``{{ figure('kv_cache.head_step', alt='...') }}``, ``{{ provenance('kv_cache') }}``,
``{{ meta('kv_cache', 'model', 'name') }}``, ``{{ claim('kv_cache.tokens_identical', '...') }}``
(see claims.py), and the branches ``<!-- if ID --> ... <!-- end -->`` (branches.py).

A marker is a Python call expression with literal arguments, parsed with ``ast`` (never
evaluated). An unknown function, a bad argument, a missing table, column or value
raises MarkerError, which fails the build naming the page and the marker.
"""

from __future__ import annotations

import ast
import html
import json
import re
from collections.abc import Callable
from typing import Any

from sitekit.claims import claims
from sitekit.claims.branches import BranchError, choose_branches
from sitekit.figures import render_figure
from sitekit.language import formatting, i18n, recorded
from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.rendering.cells import (  # noqa: F401
    _byte_column_styles,
    _cell_html,
    _default_style,
    _header,
    _td,
    quoted_td,
    recorded_english,
)
from sitekit.rendering.context import PageContext
from sitekit.rendering.pagedata import SiteDataError
from sitekit.rendering.runs_marker import run_list, runs
from sitekit.rendering.table_marker import table
from sitekit.sources import project, quoted
from sitekit.sources.provenance import experiments, provenance
from sitekit.sources.references import bibliography, cite, references

MARKER = re.compile(r"\{\{\s*(.+?)\s*\}\}")


class MarkerError(Exception):
    pass


def _parse(expr: str, ctx: PageContext) -> tuple[str, list[Any], dict[str, Any]]:
    """Arguments are literals or, as in claims, ``experiment.value`` names (e.g.
    ``where={'batch': batching.largest_measured_batch}``), evaluated by the claims'
    interpreter, within its bounds."""
    try:
        node = claims.parse(expr, "marker", claims.MAX_MARKER).body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError("not a call")
        ev = claims.Evaluator(ctx.data)
        args = [ev.eval(a) for a in node.args]
        kwargs = {k.arg: ev.eval(k.value) for k in node.keywords}
    except (ValueError, claims.ClaimError, SiteDataError) as e:
        shown = escape.cut(expr, 200, note=False)
        raise MarkerError(f"{ctx.page}: cannot parse marker {{{{ {shown} }}}}: {e}") from None
    return node.func.id, args, kwargs


def _inline(value: Any, unit: str, style: str, digits: int | None, with_unit: bool) -> str:
    """An inline value as page text: formatted, its unit appended where the style leaves
    it bare, and escaped (measured text, such as a model's answer, is data, not markup)."""
    text = formatting.format_value(value, unit, style=style, digits=digits)
    if with_unit and style in ("auto", "num", "fixed", "int"):
        text += formatting.unit_suffix(escape.cut(unit), text)
    return escape.text(text, escape.TEXT)


def _as_recorded(raw: Any, declared: dict, shown: str) -> str:
    """An inline value, marked as the data's English where it is text as recorded (cells.py)."""
    return f'<span lang="en">{shown}</span>' if recorded_english(raw, declared) else shown


def value(
    ctx: PageContext,
    ref: str,
    style: str = "auto",
    digits: int | None = None,
    unit: bool = True,
    into: str | None = None,
) -> str:
    """``into``: the value written in another unit of its kind (a figure of the chapter in
    seconds beside this run's in ms: ``into='ms'``), as given on hover (quoted.beside)."""
    v = ctx.data.value(ref)
    if into is not None:
        return quoted.beside(v["value"], v["unit"], into, style, digits, ctx.data.split(ref)[0])
    return _as_recorded(v["value"], v, _inline(recorded.data_text(v["value"], v), v["unit"], style, digits, unit))


def between(ctx: PageContext, low: str, high: str, style: str = "auto", digits: int | None = None) -> str:
    """Two values as the ends of a range, "between 2.31× and 2.45×"; where the two are
    written alike, "2.38× at both ends": a sentence never prints a range whose ends are equal."""
    ends = [value(ctx, ref, style, digits) for ref in (low, high)]
    if ends[0] == ends[1]:
        return _("{value} at both ends").format(value=ends[0])
    return _("between {low} and {high}").format(low=ends[0], high=ends[1])


def cell(
    ctx: PageContext,
    ref: str,
    column: str,
    where: dict | None = None,
    style: str = "auto",
    digits: int | None = None,
    unit: bool = True,
) -> str:
    raw, col = ctx.data.cell(ref, column, where)
    v = recorded.data_text(raw, col)
    if style == "auto":
        style = _default_style(col, v)
    return _as_recorded(raw, col, _inline(v, col["unit"], style, digits, unit))


def answer(ctx: PageContext, ref: str, *args: Any, **kwargs: Any) -> str:
    """An exercise's answer, a number worked out from the data when the page is built,
    named by its id: ``{{ answer('kv_cache.weight_macs_at_longest_context') }}``. Its
    experiment's answers.toml defines it, with its unit and style (answer_files.py); the
    claims' interpreter evaluates it, so the answer is this run's answer."""
    found = ctx.answer(ref)
    if args or kwargs:  # the unit, style and digits are the answer's, the same in every edition
        raise MarkerError(f"{ctx.page}: answer() takes an answer's id alone; {found.source} gives its unit and style")
    number = claims.Evaluator(ctx.data).eval(claims.parse(found.expression, "answer"))
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        shown = escape.cut(repr(number), 120, note=False)
        raise MarkerError(f"{ctx.page}: answer {found.id} ({found.source}) is no number: {shown}")
    return _inline(number, found.unit, found.style, found.digits, True)


def meta(ctx: PageContext, exp: str, *path: str) -> str:
    node: Any = ctx.data.meta(exp)
    for key in path:
        if not isinstance(node, dict) or key not in node:
            raise SiteDataError(f"meta.json of {exp!r} has no {'.'.join(path)}")
        node = node[key]
    if node is None:  # a field the run could not record (JSON null)
        return escape.text(_("not recorded"))
    if isinstance(node, (int, float)) and not isinstance(node, bool):
        return escape.text(formatting.format_value(node))  # a number reads as the page's locale writes it
    return escape.text(node)


def figure(ctx: PageContext, ref: str, alt: str, caption: str | None = None) -> str:
    """A figure drawn from the data, twice: for a desktop, and stacked and narrowed for a
    phone, which the browser picks below 720 px (figures/layout.py)."""
    if not alt.strip():
        raise MarkerError(f"figure {ref} needs alt text")
    exp, name = ctx.data.split(ref)
    ctx.data.note(exp)  # a figure drawn before, read from the cache, reads no data: its run is the page's still
    path = f"{i18n.edition_prefix()}figures/{exp}/{name}.svg"
    phone = f"{i18n.edition_prefix()}figures/{exp}/{name}.narrow.svg"
    ctx.figures[path] = render_figure(ref, ctx.data)
    ctx.figures[phone] = render_figure(ref, ctx.data, narrow=True)
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (
        f'<figure class="measured-figure" data-figure="{ref}"><picture>'
        f'<source media="{PHONE_MEDIA}" srcset="{ctx.url_prefix}{phone}">'
        f'<img src="{ctx.url_prefix}{path}" alt="{html.escape(alt)}"></picture>{cap}</figure>'
    )


# The theme's breakpoint below which the content column is the screen's width (a phone).
PHONE_MEDIA = "(max-width: 44.984375em)"


def constant(ctx: PageContext, dotted: str, style: str = "auto", digits: int | None = None) -> str:
    """A constant of the data layer (a drift tolerance), read from the code itself so that
    prose and code cannot disagree. Constants of the measurements are values in site_data."""
    import importlib

    module, _, name = dotted.rpartition(".")
    if module not in CONSTANT_MODULES:
        raise SiteDataError(f"constant {dotted!r}: only constants of {', '.join(CONSTANT_MODULES)} can be shown")
    value = getattr(importlib.import_module(module), name, None)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or name.startswith("_"):
        raise SiteDataError(f"constant {dotted!r}: no such number in {module}")
    return escape.text(formatting.format_value(value, style=style, digits=digits))


CONSTANT_MODULES = ("sitedata.cell_compare", "sitedata.timing_compare")  # the drift gate's tolerances


def json_table(ctx: PageContext, ref: str, every_run: bool = False) -> str:
    """A table as JSON in a ``<script type="application/json">`` for the page's scripts
    (the calculator's presets): columns with units, how each compares and reproduces and
    its description, rows with missing and non-finite cells as null, every text cut to a
    bound. ``every_run``: the rows of that table in every run site_data holds (sitedata.runs),
    the primary's first, each run's under the primary's columns."""
    t = ctx.data.table(ref)
    rows = json.loads(t.frame.to_json(orient="records"))
    if every_run:
        exp, _name = ctx.data.split(ref)
        for run, data in ctx.data.runs:
            if not run.primary and exp in data.experiments:
                other = data.table(ref).frame.reindex(columns=t.frame.columns)
                rows += json.loads(other.to_json(orient="records"))
    columns = [{k: c[k] for k in ("name", "unit", "label", "compare", "scope", "description")} for c in t.columns]
    payload = escape.json_script({"table": ref, "columns": columns, "rows": rows})
    return f'<script type="application/json" data-json-table="{html.escape(ref)}">{payload}</script>'


def claim(ctx: PageContext, ref: str, text: str) -> str:
    """A sentence of the page checked by the claim ``ref`` names (claim_files.py)."""
    return claims.render(ctx.data, ctx.page, ctx.claim(ref), text, ctx.checks)


FUNCTIONS: dict[str, Callable[..., str]] = {
    "claim": claim,
    "experiments": experiments,
    "constant": constant,
    "table": table,
    "runs": runs,
    "run_list": run_list,
    "value": value,
    "between": between,
    "cell": cell,
    "answer": answer,
    "figure": figure,
    "provenance": provenance,
    "meta": meta,
    "json_table": json_table,
    "cite": cite,
    "references": references,
    "bibliography": bibliography,
    "repository": project.repository,
    "citation": project.citation,
}


def render_markers(markdown: str, ctx: PageContext) -> str:
    try:
        markdown = choose_branches(markdown, ctx)
    except BranchError as e:
        raise MarkerError(str(e)) from None

    def replace(match: re.Match) -> str:
        fname, args, kwargs = _parse(match.group(1), ctx)
        fn = FUNCTIONS.get(fname)
        if fn is None:
            raise MarkerError(
                f"{ctx.page}: unknown marker function {fname!r} in {match.group(0)}; known: {', '.join(FUNCTIONS)}"
            )
        try:
            return fn(ctx, *args, **kwargs)
        except claims.ClaimError as e:
            message = str(e)  # a claim that does not hold names its page already
            raise MarkerError(message if message.startswith(f"{ctx.page}: ") else f"{ctx.page}: {message}") from None
        except (SiteDataError, KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as e:
            raise MarkerError(f"{ctx.page}: {escape.cut(match.group(0), 200, note=False)}: {e}") from None

    return MARKER.sub(replace, markdown)
