"""Provenance on the page: once per page, at its end, every run the page read, in full
(page_section); under each table a short line with its CSV and a link there
(table_line); and the methods page's list of experiments. Every string that comes from
data goes through escape.py, cut to a bound, and a field the run could not record (JSON
null) reads "not recorded", never "None"."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sitekit.language import formatting, glossary, i18n, recorded
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


def items(ctx, exp: str, csv: str | None = None) -> list[tuple[str, str]]:
    """A run's provenance, field by field: (the field's English name, its value as HTML,
    escaped, each glossary term in it explained on hover)."""
    m = ctx.data.meta(exp)
    model, dev, libs = m["model"], m["device"], m["libraries"]
    links = []
    if csv:
        links.append(f'<a href="{_csv_link(ctx, exp, csv)}">{csv}.csv</a>')
    links.append(f'<a href="{ctx.url_prefix}data/{exp}/meta.json">meta.json</a>')
    commit = m.get("git_commit")
    fields = [
        (
            "model",
            _("{name} ({parameters})").format(
                name=_field(model["name"]), parameters=_counted(model["parameters"], "parameters")
            ),
        ),
        ("weights", _recorded(model["weights"])),
        ("device", f"{_device(dev)}, {_field(m['dtype'])}"),
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
        (
            "memory method",
            _recorded(m["memory_method"])
            if "memory_method" in m
            else _("none: this run measures no memory", "provenance"),
        ),
    ]
    language = i18n.language()
    out = [(k, glossary.explain(escape.text(v, None), language)) for k, v in fields]
    return out + [("data", " · ".join(links)), ("source", _source_line(ctx))]


def provenance_html(ctx, exp: str, csv: str | None = None) -> str:
    """A run's provenance, folded under a summary line (the marker ``provenance()``)."""
    m = ctx.data.meta(exp)
    rows = "".join(f"<tr><th>{escape.text(_(k, 'provenance'))}</th><td>{v}</td></tr>" for k, v in items(ctx, exp, csv))
    summary = escape.text(
        _("Provenance: {model} · {device} · {dtype} · {date}").format(
            model=_field(m["model"]["name"]),
            device=_device(m["device"]),
            dtype=_field(m["dtype"]),
            date=_field(m["date"])[:10],
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
    then, apart, the figures the site quotes without measuring them, with their source.
    What every run shares (the model, the device, the profile, the day) is said once, in a
    sentence above the table, which keeps the columns that differ."""
    rows, quotes = [], []
    ctx = SimpleNamespace(data=getattr(ctx.data, "inner", ctx.data), url_prefix=ctx.url_prefix)  # a list, no page's run
    for exp in ctx.data.experiments:
        if exp in RUNNER_FOLDERS:
            continue
        if exp in quoted.QUOTED:
            quotes.append(_quoted_item(ctx, exp))
            continue
        m = ctx.data.meta(exp)
        title = m["title"]
        what = escape.cut(_(title, "experiment title")) if isinstance(title, str) else _field(title)
        rows.append(
            {
                "experiment": f"<code>{_breakable(exp)}</code>",
                "what": escape.text(what, None),
                "model": escape.text(_field(m["model"]["name"]), None),
                "device": escape.text(f"{_device(m['device'])}, {_field(m['dtype'])}", None),
                "profile": escape.text(_field(m["profile"]), None),
                "date": escape.text(_field(m["date"])[:10], None),
                "run time": escape.text(f"{formatting.number(m['duration_s'], digits=3)}{formatting.NBSP}s", None),
            }
        )
    if not rows:
        raise SiteDataError("site_data holds no experiment")
    shared = [k for k in ("model", "device", "profile", "date") if len({r[k] for r in rows}) == 1 and len(rows) > 1]
    columns = [k for k in rows[0] if k not in shared]
    head = "".join(f"<th>{escape.text(_(h, 'experiments table'))}</th>" for h in columns)
    body = "".join("<tr>" + "".join(f"<td>{r[k]}</td>" for k in columns) + "</tr>" for r in rows)
    common = ""
    if shared:
        said = "; ".join(f"{escape.text(_(k, 'experiments table'))}: {rows[0][k]}" for k in shared)
        shares = escape.text(_("Every experiment in the table below shares"), None)
        common = f'<p class="experiments-shared">{shares} {said}.</p>'
    quoted_list = (
        f'<p class="quoted-figures">{escape.text(_("Quoted, not measured here:"))}</p>'
        f'<ul class="quoted-figures">{"".join(quotes)}</ul>'
        if quotes
        else ""
    )
    return (
        common + f'<div class="measured-table experiments"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>" + quoted_list
    )


def _breakable(name: str) -> str:
    """A code name that may break at its underscores on a narrow screen, never inside a word."""
    return escape.text(name).replace("&#95;", "&#95;<wbr>")


def _quoted_item(ctx, exp: str) -> str:
    title = ctx.data.meta(exp)["title"]
    shown = escape.cut(_(title, "experiment title")) if isinstance(title, str) else _field(title)
    source = quoted.source_html(ctx, exp).removeprefix('<p class="source">').removesuffix("</p>")
    return f"<li><code>{escape.text(exp)}</code>: {escape.text(shown, None)}. {source}</li>"
