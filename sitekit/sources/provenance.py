"""Provenance on the page: the box under every table, and the home page's list of
experiments. Every string that comes from data goes through escape.py, cut to a bound,
and a field the run could not record (JSON null) reads "not recorded", never "None"."""

from __future__ import annotations

from typing import Any

from sitekit.language import formatting, recorded
from sitekit.language.i18n import _
from sitekit.rendering import escape
from sitekit.rendering.pagedata import SiteDataError
from sitekit.sources import quoted, source_archive


def _csv_link(ctx, exp: str, name: str) -> str:
    return f"{ctx.url_prefix}data/{exp}/{name}.csv"


def _field(value: Any) -> str:
    """A field of meta.json as text to fill into a sentence, cut to a bound."""
    if value is None:
        return _("not recorded")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return formatting.number(value, digits=4)
    return escape.cut(value)


def _recorded(value: Any) -> str:
    """A sentence the run recorded in English (sitedata/wording.py), in the page's language."""
    return escape.cut(recorded.recorded_text(value, "provenance")) if isinstance(value, str) else _field(value)


def _source_line(ctx) -> str:
    """The archive of the files this site was built from (source_archive.py), with its
    commit and whether the tree had changes, and the repository's address when set."""
    built = source_archive.built_from
    if built.commit is None:
        line = escape.text(_("no source archive: this site was not built from a git checkout"), None)
    else:
        label = (
            _("the files this site was built from, commit {commit}, with changes")
            if built.changed
            else _("the files this site was built from, commit {commit}")
        ).format(commit=built.commit[:10])
        line = f'<a href="{ctx.url_prefix}{source_archive.NAME}" download>{escape.text(label, None)}</a>'
    if source_archive.repository:
        href = escape.attribute(source_archive.repository, None)
        line += f' · <a href="{href}">{escape.text(_("repository"), None)}</a>'
    return line


def _count(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return formatting.integer(value)
    return _field(value)


def _counted(value: Any, unit: str) -> str:
    """A count and its unit, which agrees with it ("1 thread", Czech "2 vlákna", "5 vláken")."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return _field(value)  # not recorded, or text: no count to agree with
    shown = _count(value)
    return shown + formatting.unit_suffix(unit, shown)


def provenance_html(ctx, exp: str, csv: str | None = None) -> str:
    m = ctx.data.meta(exp)
    model, dev, libs = m["model"], m["device"], m["libraries"]
    device = _device(dev)
    links = []
    if csv:
        links.append(f'<a href="{_csv_link(ctx, exp, csv)}">{csv}.csv</a>')
    links.append(f'<a href="{ctx.url_prefix}data/{exp}/meta.json">meta.json</a>')
    commit = m.get("git_commit")
    items = [
        (
            "model",
            _("{name} ({parameters})").format(
                name=_field(model["name"]), parameters=_counted(model["parameters"], "parameters")
            ),
        ),
        ("weights", _recorded(model["weights"])),
        ("device", f"{device}, {_field(m['dtype'])}"),
        ("profile", _field(m["profile"])),
        (
            "measured",
            _("{date}, in {seconds} s").format(date=_field(m["date"]), seconds=_field(m["duration_s"])),
        ),
        (
            "code",
            (_("commit {commit} + local changes") if m.get("measure_code_modified") else _("commit {commit}")).format(
                commit=commit[:10] if isinstance(commit, str) else _field(commit)
            )
            + ", "
            + _("code hash {hash}").format(hash=_field(m["code_hash"])),
        ),
        ("libraries", ", ".join(f"{escape.cut(k)} {_field(v)}" for k, v in libs.items() if v)),
        ("memory method", _recorded(m["memory_method"]) if "memory_method" in m else ""),
    ]
    rows = "".join(
        f"<tr><th>{escape.text(_(k, 'provenance'))}</th><td>{escape.text(v, None)}</td></tr>" for k, v in items
    )
    rows += f"<tr><th>{escape.text(_('data', 'provenance'))}</th><td>{' · '.join(links)}</td></tr>"
    rows += f"<tr><th>{escape.text(_('source', 'provenance'))}</th><td>{_source_line(ctx)}</td></tr>"
    summary = escape.text(
        _("Provenance: {model} · {device} · {dtype} · {date}").format(
            model=_field(model["name"]), device=device, dtype=_field(m["dtype"]), date=_field(m["date"])[:10]
        ),
        None,
    )
    return (
        f'<details class="provenance"><summary>{summary}</summary>'
        f'<table class="provenance-table">{rows}</table></details>'
    )


def _device(dev: dict) -> str:
    """The GPU's name, or the CPU's with the threads torch used."""
    if dev.get("gpu"):
        return _field(dev["gpu"])
    return _("{cpu} ({threads})").format(
        cpu=_field(dev.get("cpu")), threads=_counted(dev.get("torch_threads"), "threads")
    )


def provenance(ctx, exp: str) -> str:
    """A measurement's provenance; figures quoted, never measured, name their source instead."""
    return quoted.source_html(ctx, exp) if quoted.is_quoted(exp) else provenance_html(ctx, exp)


# Folders the runner writes beside the experiments' (measure/calibration_folder.py: the
# calibration of every run), read like theirs but no experiment: not listed as one.
RUNNER_FOLDERS = ("calibration",)


def experiments(ctx) -> str:
    """One row per measured experiment: what, on which model and device, when, how long;
    then, apart, the figures the site quotes without measuring them, with their source."""
    rows, quotes = [], []
    for exp in ctx.data.experiments:
        if exp in RUNNER_FOLDERS:
            continue
        if exp in quoted.QUOTED:
            quotes.append(_quoted_item(ctx, exp))
            continue
        m = ctx.data.meta(exp)
        title = m["title"]
        cells = (
            escape.cut(_(title, "experiment title")) if isinstance(title, str) else _field(title),
            _field(m["model"]["name"]),
            f"{_device(m['device'])}, {_field(m['dtype'])}",
            _field(m["profile"]),
            _field(m["date"])[:10],
            f"{formatting.number(m['duration_s'], digits=3)}{formatting.NBSP}s",
        )
        rows.append(
            f"<tr><td><code>{escape.text(exp)}</code></td>"
            + "".join(f"<td>{escape.text(c, None)}</td>" for c in cells)
            + "</tr>"
        )
    if not rows:
        raise SiteDataError("site_data holds no experiment")
    head = "".join(
        f"<th>{escape.text(_(h, 'experiments table'))}</th>"
        for h in ("experiment", "what", "model", "device", "profile", "date", "run time")
    )
    quoted_list = (
        f'<p class="quoted-figures">{escape.text(_("Quoted, not measured here:"))}</p>'
        f'<ul class="quoted-figures">{"".join(quotes)}</ul>'
        if quotes
        else ""
    )
    return (
        f'<div class="measured-table experiments"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>" + quoted_list
    )


def _quoted_item(ctx, exp: str) -> str:
    title = ctx.data.meta(exp)["title"]
    shown = escape.cut(_(title, "experiment title")) if isinstance(title, str) else _field(title)
    source = quoted.source_html(ctx, exp).removeprefix('<p class="source">').removesuffix("</p>")
    return f"<li><code>{escape.text(exp)}</code>: {escape.text(shown, None)}. {source}</li>"
