"""Provenance on the page: the box under every table, and the home page's list of
experiments. Every string that comes from data is escaped."""

from __future__ import annotations

import html

from sitekit import formatting
from sitekit.i18n import _
from sitekit.pagedata import SiteDataError


def _csv_link(ctx, exp: str, name: str) -> str:
    return f"{ctx.url_prefix}data/{exp}/{name}.csv"


def provenance_html(ctx, exp: str, csv: str | None = None) -> str:
    m = ctx.data.meta(exp)
    model, dev, libs = m["model"], m["device"], m["libraries"]
    device = _device(dev)
    links = []
    if csv:
        links.append(f'<a href="{_csv_link(ctx, exp, csv)}">{csv}.csv</a>')
    links.append(f'<a href="{ctx.url_prefix}data/{exp}/meta.json">meta.json</a>')
    items = [
        (
            "model",
            _("{name} ({count} parameters)").format(name=model["name"], count=formatting.integer(model["parameters"])),
        ),
        ("weights", model["weights"]),
        ("device", f"{device}, {m['dtype']}"),
        ("profile", m["profile"]),
        (
            "measured",
            _("{date}, in {seconds} s").format(date=m["date"], seconds=formatting.number(m["duration_s"], digits=4)),
        ),
        (
            "code",
            (_("commit {commit} + local changes") if m.get("measure_code_modified") else _("commit {commit}")).format(
                commit=m["git_commit"][:10]
            )
            + ", "
            + _("code hash {hash}").format(hash=m["code_hash"]),
        ),
        ("libraries", ", ".join(f"{k} {v}" for k, v in libs.items() if v)),
        ("memory method", m.get("memory_method", "")),
        ("data", " · ".join(links)),
    ]
    rows = "".join(
        f"<tr><th>{html.escape(_(k, 'provenance'))}</th><td>{html.escape(v) if k != 'data' else v}</td></tr>"
        for k, v in items
    )
    summary = html.escape(
        _("Provenance: {model} · {device} · {dtype} · {date}").format(
            model=model["name"], device=device, dtype=m["dtype"], date=m["date"][:10]
        )
    )
    return (
        f'<details class="provenance"><summary>{summary}</summary>'
        f'<table class="provenance-table">{rows}</table></details>'
    )


def _device(dev: dict) -> str:
    """The GPU's name, or the CPU's with the threads torch used."""
    if dev.get("gpu"):
        return dev["gpu"]
    return _("{cpu} ({threads} threads)").format(cpu=dev.get("cpu"), threads=dev.get("torch_threads"))


def provenance(ctx, exp: str) -> str:
    return provenance_html(ctx, exp)


def experiments(ctx) -> str:
    """One row per measured experiment: what, on which model and device, when, how long."""
    rows = []
    for exp in ctx.data.experiments:
        m = ctx.data.meta(exp)
        device = _device(m["device"])
        cells = (
            exp,
            _(m["title"], "experiment title"),
            m["model"]["name"],
            f"{device}, {m['dtype']}",
            m["profile"],
            m["date"][:10],
            f"{formatting.number(m['duration_s'], digits=3)}{formatting.NBSP}s",
        )
        rows.append(
            f"<tr><td><code>{html.escape(exp)}</code></td>"
            + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells[1:])
            + "</tr>"
        )
    if not rows:
        raise SiteDataError("site_data holds no experiment")
    head = "".join(
        f"<th>{html.escape(_(h, 'experiments table'))}</th>"
        for h in ("experiment", "what", "model", "device", "profile", "date", "run time")
    )
    return (
        f'<div class="measured-table experiments"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
