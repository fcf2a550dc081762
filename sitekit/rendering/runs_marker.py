"""Runs side by side (sitedata.runs): a page's headline numbers in every run site_data
holds, and the methods page's list of the runs.

``{{ runs('kv_cache', {'speedup': 'Speed-up', 'speedup_predicted': 'Roofline'}) }}``
gives one row per run that measured the experiment, the primary first (the run the
page's prose is about), and one column per value, its header written by the page in
its own language; a value declared with its interval (``<name>_low``, ``<name>_high``)
shows it beside the number. ``{{ run_list() }}`` gives every run: its machine, model,
dtype, profile, date, commit, and its calibration (copy bandwidth and reference step at
its start, and how many of its measuring runs drifted).
"""

from __future__ import annotations

import html
import math
from typing import Any

from sitekit.language import formatting
from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.rendering.context import PageContext
from sitekit.rendering.pagedata import SiteData, SiteDataError


def machine(meta: dict) -> str:
    """The machine a run measured on, as a reader names it: the CPU model or the card."""
    device = meta["device"]
    if device.get("type") == "cpu" and device.get("cpu"):
        threads = device.get("torch_threads")
        name = str(device["cpu"])
        return _("{cpu}, {threads} threads").format(cpu=name, threads=threads) if threads else name
    return str(device.get("name") or device["id"])


def model(meta: dict) -> str:
    name = str(meta["model"]["name"])
    if meta["model"].get("trained") is False:
        return _("{model} (random weights: time and memory only)").format(model=name)
    return name


def _number(v: dict) -> str:
    raw = v["value"]
    if not isinstance(raw, (int, float)) or isinstance(raw, bool) or not math.isfinite(raw):
        return escape.text(formatting.format_value(raw, v["unit"]), escape.TEXT)
    text = formatting.format_value(raw, v["unit"])
    return escape.text(text + formatting.unit_suffix(escape.cut(v["unit"]), text), escape.TEXT)


def _with_interval(values: dict, name: str) -> str:
    shown = _number(values[name])
    low, high = values.get(f"{name}_low"), values.get(f"{name}_high")
    finite = [b for b in (low, high) if b and isinstance(b["value"], (int, float)) and math.isfinite(b["value"])]
    if len(finite) == 2:
        ends = [escape.text(formatting.format_value(b["value"], b["unit"]), escape.TEXT) for b in finite]
        shown += f' <span class="run-interval">[{ends[0]}, {ends[1]}]</span>'
    return shown


def _runs(ctx: PageContext) -> list[tuple[Any, SiteData]]:
    return ctx.data.runs


def runs(ctx: PageContext, experiment: str, columns: dict[str, str], caption: str | None = None) -> str:
    """The table of ``experiment``'s values ``columns`` (name -> header) in every run."""
    if not isinstance(columns, dict) or not columns:
        raise SiteDataError("runs needs the values to show, as {'name': 'header'}")
    rows = []
    for run, data in _runs(ctx):
        if experiment not in data.experiments:
            continue
        meta = data.meta(experiment)
        for name in columns:
            if name not in meta["values"]:
                raise SiteDataError(f"experiment {experiment!r} of run {run.key} has no value {name!r}")
        if run.primary:
            ctx.data.note(experiment)
        label = escape.text(machine(meta), escape.TEXT)
        if run.primary:
            label += f' <span class="run-primary">{escape.text(_("this page’s run"), escape.TEXT)}</span>'
        cells = "".join(f'<td class="num">{_with_interval(meta["values"], n)}</td>' for n in columns)
        rows.append(
            f"<tr><td>{label}</td><td>{escape.text(model(meta), escape.TEXT)}</td>"
            f"<td>{escape.text(meta['dtype'], escape.TEXT)}</td>{cells}</tr>"
        )
    if not rows:
        raise SiteDataError(f"no run in site_data holds {experiment!r}")
    head = [_("Machine"), _("Model"), _("Data type"), *columns.values()]
    ctx.tables += 1
    label = f"table-{ctx.tables}"
    cap = html.escape(caption) if caption else escape.text(_("The headline numbers of every run"), escape.TEXT)
    return (
        f'<div class="measured-table runs-table" data-runs="{html.escape(experiment)}">\n'
        f'<p class="table-caption" id="{label}">{cap}</p>\n<table aria-labelledby="{label}">\n<thead><tr>'
        + "".join(f"<th>{escape.text(h, escape.TEXT)}</th>" for h in head)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</div>"
    )


def run_list(ctx: PageContext) -> str:
    """Every run in site_data: what it ran on and with, when, and its calibration."""
    rows = []
    for run, data in _runs(ctx):
        metas = [data.meta(e) for e in data.experiments]
        meta = max(metas, key=lambda m: m["date"])
        cal = data.table("calibration.runs").frame if "calibration" in data.experiments else None
        if cal is not None and len(cal):
            bandwidth = formatting.format_value(float(cal["start_bandwidth_gb_s"].median()), "GB/s")
            step = formatting.format_value(float(cal["start_step_ms"].median()), "ms")
            drifted = int((cal["drifted"].astype(str).str.lower() == "true").sum())
            calibration = _("{runs} measuring runs: copy {bandwidth} GB/s, reference step {step} ms").format(
                runs=formatting.integer(len(cal)), bandwidth=bandwidth, step=step
            )
            drift = _("{drifted} of {runs} drifted").format(
                drifted=formatting.integer(drifted), runs=formatting.integer(len(cal))
            )
        else:
            calibration = drift = _("not recorded")
        commit = str(meta["git_commit"])[:7]
        kind = _("primary") if run.primary else _("beside it")
        cells = [
            f"{machine(meta)} ({kind})",
            model(meta),
            meta["dtype"],
            meta["profile"],
            meta["date"][:10],
            commit,
            calibration,
            drift,
        ]
        rows.append("<tr>" + "".join(f"<td>{escape.text(c, escape.TEXT)}</td>" for c in cells) + "</tr>")
    head = [
        _("Machine"),
        _("Model"),
        _("Data type"),
        _("Profile"),
        _("Latest"),
        _("Commit"),
        _("Calibration"),
        _("Drift"),
    ]
    ctx.tables += 1
    label = f"table-{ctx.tables}"
    return (
        f'<div class="measured-table runs-table" data-runs="all">\n<p class="table-caption" id="{label}">'
        f'{escape.text(_("The runs in site_data"), escape.TEXT)}</p>\n<table aria-labelledby="{label}">\n<thead><tr>'
        + "".join(f"<th>{escape.text(h, escape.TEXT)}</th>" for h in head)
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</div>"
    )
