"""Runs side by side (sitedata.runs): a page's headline numbers in every run site_data
holds, and the methods page's list of the runs.

``{{ runs('kv_cache', ['speedup', 'speedup_predicted'], headers=['Speed-up', 'Roofline']) }}``
gives one row per run that measured the experiment, the primary first (the run the
page's prose is about), and one column per value, its header written by the page in
its own language; a value declared with its interval (``<name>_low``, ``<name>_high``)
shows it under the number. ``{{ run_list() }}`` gives every run: its machine, model,
dtype, profile, date, commit, and its calibration (copy bandwidth and reference step at
its start, and how many of its measuring runs drifted).
"""

from __future__ import annotations

import html
import math

from sitedata.keys import run_key
from sitedata.machine_speed import FOLDER as CALIBRATION
from sitekit.language import formatting, recorded
from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.rendering.context import PageContext
from sitekit.rendering.pagedata import SiteDataError
from sitekit.sources import quoted


def machine(meta: dict) -> str:
    """The machine a run measured on, as a reader names it: the CPU model or the card."""
    device = meta["device"]
    if device.get("type") == "cpu" and device.get("cpu"):
        threads = device.get("torch_threads")
        name = str(device["cpu"])
        return _("{cpu}, {threads} threads").format(cpu=name, threads=threads) if threads else name
    return str(device.get("name") or device["id"])


def model(meta: dict) -> str:
    """The model as a reader names it: a hub id without its owner, and whether its weights
    were trained."""
    name = str(meta["model"]["name"]).rstrip("/").rsplit("/", 1)[-1]
    if meta["model"].get("trained") is False:
        return _("{model} (random weights: time and memory only)").format(model=name)
    return name


def run_cell(meta: dict, badge: str = "") -> str:
    """One run in one cell that wraps: its machine, then its model and dtype, then a badge."""
    lines = [escape.text(machine(meta), escape.TEXT), escape.text(f"{model(meta)}, {meta['dtype']}", escape.TEXT)]
    if badge:
        lines.append(f'<span class="run-primary">{escape.text(badge, escape.TEXT)}</span>')
    return f'<td class="text">{"<br>".join(lines)}</td>'


def _number(v: dict) -> str:
    raw = v["value"]
    if not isinstance(raw, (int, float)) or isinstance(raw, bool) or not math.isfinite(raw):
        return escape.text(formatting.format_value(raw, v["unit"]), escape.TEXT)
    text = formatting.format_value(raw, v["unit"])
    return escape.text(text + formatting.unit_suffix(escape.cut(v["unit"]), text), escape.TEXT)


def bounds(name: str, values: dict) -> tuple[str, str]:
    """The names of a value's interval bounds as interval_values declares them:
    ``speedup_low`` for ``speedup``, ``decode_low_ms`` for ``decode_ms`` (the unit last)."""
    stem, _sep, unit = name.rpartition("_")
    if stem and f"{stem}_low_{unit}" in values:
        return f"{stem}_low_{unit}", f"{stem}_high_{unit}"
    return f"{name}_low", f"{name}_high"


def _with_interval(values: dict, name: str) -> str:
    shown = _number(values[name])
    low, high = (values.get(b) for b in bounds(name, values))
    finite = [b for b in (low, high) if b and isinstance(b["value"], (int, float)) and math.isfinite(b["value"])]
    if len(finite) == 2:
        ends = [escape.text(formatting.format_value(b["value"], b["unit"]), escape.TEXT) for b in finite]
        shown += f'<br><span class="run-interval">[{ends[0]}, {ends[1]}]</span>'
    return shown


def runs(
    ctx: PageContext,
    experiment: str,
    columns: list[str],
    headers: list[str],
    caption: str | None = None,
    chapter: dict[str, str] | None = None,
) -> str:
    """The table of ``experiment``'s values ``columns`` in every run, under ``headers``
    (the page's words, one per column); ``chapter`` (column -> a value of the chapter's,
    'chapter.kv_speedup') adds the chapter's own figures as a last row."""
    if not isinstance(columns, list) or not columns or not isinstance(headers, list) or len(headers) != len(columns):
        raise SiteDataError("runs needs the values to show and as many headers: ['speedup'], headers=['Speed-up']")
    if chapter and (not isinstance(chapter, dict) or set(chapter) - set(columns)):
        raise SiteDataError(f"runs: chapter names a column the table does not show ({', '.join(chapter)})")
    rows = []
    for run, data in ctx.data.runs:
        if experiment not in run.experiments:
            continue
        meta = data.meta(experiment)
        for name in columns:
            if name not in meta["values"]:
                raise SiteDataError(f"experiment {experiment!r} of run {run.key} has no value {name!r}")
        if run.primary:
            ctx.data.note(experiment)
        cells = "".join(f'<td class="num">{_with_interval(meta["values"], n)}</td>' for n in columns)
        rows.append(f"<tr>{run_cell(meta, _('this page’s run') if run.primary else '')}{cells}</tr>")
    if not rows:
        raise SiteDataError(f"no run in site_data holds {experiment!r}")
    if chapter:
        rows.append(_chapter_row(ctx, columns, chapter, ctx.data.meta(experiment)["values"]))
    cap = html.escape(caption) if caption else escape.text(_("The headline numbers of every run"), escape.TEXT)
    link = f'<p class="runs-source"><a href="../methods/#runs">{escape.text(_(RUNS_LINK), escape.TEXT)}</a></p>\n'
    return _table(ctx, experiment, cap, [_("Run"), *headers], rows, link)


def _table(ctx: PageContext, which: str, caption: str, head: list[str], rows: list[str], after: str = "") -> str:
    """A runs table: its caption (HTML) above it, as the table marker writes one."""
    ctx.tables += 1
    label = f"table-{ctx.tables}"
    return (
        f'<div class="measured-table runs-table" data-runs="{html.escape(which)}">\n'
        f'<p class="table-caption" id="{label}">{caption}</p>\n<table aria-labelledby="{label}">\n<thead><tr>'
        + "".join(f"<th>{escape.text(h, escape.TEXT)}</th>" for h in head)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + f"\n</tbody>\n</table>\n{after}</div>"
    )


RUNS_LINK = "Each run's machine, model, date, commit and calibration"


def _chapter_row(ctx: PageContext, columns: list[str], chapter: dict[str, str], values: dict) -> str:
    """The chapter's figures in the primary run's units, what it measured them on first."""

    def said(ref: str) -> str:
        v = ctx.data.value(ref)
        return escape.text(str(recorded.data_text(v["value"], v)), escape.TEXT)

    cells = []
    for name in columns:
        if name not in chapter:
            cells.append('<td class="num">–</td>')
            continue
        v = ctx.data.value(chapter[name])
        if v["unit"] == values[name]["unit"]:  # as the chapter gave it, every digit it wrote and no more
            shown = escape.text(quoted.as_given(v["value"], v["unit"]), escape.TEXT)
        else:  # in the column's unit, the chapter's own wording on hover
            shown = quoted.beside(v["value"], v["unit"], values[name]["unit"], "auto", None, "chapter")
        if "(about)" in v["description"]:  # the chapter gave it as approximate: so does the table
            shown = _("about {figure}").format(figure=shown)
        cells.append(f'<td class="num">{shown}</td>')
    whose = escape.text(_("the chapter’s figure"), escape.TEXT)
    label = f"{said('chapter.device')}<br>{said('chapter.model')}, {said('chapter.dtype')}"
    label += f'<br><span class="run-primary">{whose}</span>'
    return f'<tr><td class="text">{label}</td>{"".join(cells)}</tr>'


def _row_key(row: dict) -> str:
    """The key of the run a calibration row records (its device, model, dtype, profile)."""
    return run_key({**row, "device": {"id": row["device"]}, "model": {"name": row["model"]}})


def run_list(ctx: PageContext) -> str:
    """Every run in site_data: what it ran on and with, when, and its calibration: how
    many measuring runs it took, their median copy bandwidth and reference step at their
    start, and how many drifted past the limit while they ran."""
    rows = []
    for run, data in ctx.data.runs:
        meta = max((data.meta(e) for e in run.experiments), key=lambda m: m["date"])
        cal = data.table(f"{CALIBRATION}.runs").frame if CALIBRATION in data.experiments else None
        if cal is not None:  # the rows of this run's key: a primary may gather several
            cal = cal[[_row_key(r) == run.key for r in cal.to_dict("records")]]
        if cal is not None and len(cal):
            count = formatting.integer(len(cal))
            measured = [
                count,
                formatting.format_value(float(cal["start_bandwidth_gb_s"].median())),
                formatting.format_value(float(cal["start_step_ms"].median())),
                _("{drifted} of {runs}").format(
                    drifted=formatting.integer(int((cal["drifted"].astype(str).str.lower() == "true").sum())),
                    runs=count,
                ),
            ]
        else:
            measured = [_("not recorded")] * 4
        kind = _("primary") if run.primary else _("beside it")
        cells = [meta["profile"], meta["date"][:10], str(meta["git_commit"])[:7], *measured]
        rows.append(
            "<tr>" + run_cell(meta, kind) + "".join(f"<td>{escape.text(c, escape.TEXT)}</td>" for c in cells) + "</tr>"
        )
    head = [_("Run"), _("Profile"), _("Latest"), _("Commit")]
    head += [_("Measuring runs"), _("Copy, GB/s"), _("Reference step, ms"), _("Drifted")]
    return _table(ctx, "all", escape.text(_("The runs in site_data"), escape.TEXT), head, rows)
