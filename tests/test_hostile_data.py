"""The site built from hostile data: every text field of every experiment's meta.json
and every text column of every table set to markup, Markdown, a comment, a marker, an
address, a formula or a 100,000-character string, the checksums rewritten as a run
would write them. The pages show every one of those fields through every marker, in
every place a page puts a marker (prose, a paragraph of its own, bold, a Markdown
table, a blockquote, a list, an admonition, a <pre>); figures draw the labels. The
build must pass, and its HTML must hold no script, image, link, event handler or
comment from the data, show each text literally, and stay within a size bound.

One English build (the other editions would only fail on the untranslated hostile
words); its pages are written here from the data, since the site's own pages select
rows by the measured names that this data replaces."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from sitedata.bounds import MAX_TEXT
from sitedata.keys import run_key
from tests.builds import english_build
from tests.conftest import REPO, edit_table

pytestmark = pytest.mark.build  # every test reads a site built from the hostile data

# The longest name the data layer reads (sitedata.bounds.MAX_TEXT: a longer one is refused
# on reading, tests/test_sitedata_read.py); the pages cut it further.
LONG = "".join(f"{i:05d}." for i in range(MAX_TEXT // 6 + 1))[:MAX_TEXT]
HOSTILE = [
    "[click me](javascript:alert(document.domain))",
    "![x](https://tracker.example/t.png)",
    "<img src=x onerror=alert(1)>",
    "<!--<script>",
    "</script><script>alert(1)</script>",
    "*a* _b_ `c`",
    "$x^2$",
    "{{ value('x.y') }}",
    "https://evil.example",
    "&amp;",
    LONG,
    "a | b",
    "line\n# heading\n- item",
    "*a*{: onclick=alert(1) }",
    '" onmouseover="alert(1)',
    "!!! danger",
]
PAGE_BOUND = 2_000_000  # bytes of any page: the real site's largest is under 800 KB
# Columns a figure selects its rows by (a status, a policy): kept as measured, so that
# the figures draw; every other text column is hostile.
KEEP = {
    "batching.sweep.status",
    "batching.timeline.policy",
    "batching.arrival_requests.policy",
    "speculative_decoding.speedup.alpha_source",
    "weight_quantization.decode_kernels.status",
    "memory_budget.budget.model",
    "memory_budget.budget.precision",
}
# meta.json keys that are structure, not text a page shows (the reader checks them)
STRUCTURE = {
    "schema_version",
    "experiment",
    "key",
    "file",
    "sha256",
    "rows",
    "length",
    "name",
    "compare",
    "scope",
    "noise",
}


def _is_text_column(cells: list[str]) -> bool:
    def number(c: str) -> bool:
        try:
            float(c)
            return True
        except ValueError:
            return c.lower() in ("true", "false")

    return any(c and not number(c) for c in cells)


def _hostile_meta(node, path: tuple, shown: list, turn: list):
    """Every text of meta.json (not its structure) replaced, in turn, by the hostile set."""
    if isinstance(node, dict):
        return {
            k: v if k in STRUCTURE and path != ("model",) else _hostile_meta(v, (*path, k), shown, turn)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hostile_meta(v, (*path, str(i)), shown, turn) for i, v in enumerate(node)]
    if isinstance(node, str):
        turn[0] += 1
        text = HOSTILE[turn[0] % len(HOSTILE)]
        shown.append((path, text))
        return text
    return node


def hostile_site_data(dest: Path) -> dict:
    """A copy of site_data with every text hostile; returns, per experiment, the meta
    paths it rewrote, its text columns and the texts it wrote."""
    data = dest / "site_data"
    shutil.copytree(REPO / "site_data", data)
    plan = {}
    for n, folder in enumerate(sorted(p for p in data.iterdir() if (p / "meta.json").exists())):
        texts: list[str] = []
        columns = {}
        turn = [n]
        for table in json.loads((folder / "meta.json").read_text())["tables"]:
            rows = list(csv.reader(io.StringIO((folder / f"{table}.csv").read_text(encoding="utf-8"))))
            wanted = [
                i
                for i, name in enumerate(rows[0])
                if _is_text_column([r[i] for r in rows[1:]]) and f"{folder.name}.{table}.{name}" not in KEEP
            ]
            columns[table] = [rows[0][i] for i in wanted]

            def rewrite(rows, wanted=wanted):
                for r in rows[1:]:
                    for i in wanted:
                        turn[0] += 1
                        r[i] = HOSTILE[turn[0] % len(HOSTILE)] if r[i] else ""
                        texts.append(r[i])

            edit_table(folder, table, rewrite)
        meta = json.loads((folder / "meta.json").read_text())
        shown: list = []
        meta = {k: _hostile_meta(v, (k,), shown, turn) if k not in STRUCTURE else v for k, v in meta.items()}
        meta["key"] = run_key(meta)  # the run's key as the hostile fields make it (a slug: no text of theirs)
        (folder / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
        plan[folder.name] = {"meta": shown, "columns": columns, "cells": texts}
    return plan


def _page(exp: str, meta: dict, plan: dict, figures: list[str], claims: dict[str, str]) -> tuple[str, list[str]]:
    """Every field of one experiment, through every marker, in every kind of place; and
    the hostile texts the page shows. The claims it names are added to ``claims``."""
    out = [f"# Experiment {exp}\n", f"{{{{ provenance('{exp}') }}}}\n"]
    expected = []
    for name, v in meta["values"].items():
        if isinstance(v["value"], (list, dict)):
            continue
        ref = f"{exp}.{name}"
        expected += [x for x in (v["value"], v["unit"]) if isinstance(x, str)]
        out += [
            f"Prose {{{{ value('{ref}') }}}} goes on.\n",
            f"{{{{ value('{ref}') }}}} starts this line.\n",
            f"{{{{ value('{ref}') }}}}\n",
            f"The **{{{{ value('{ref}') }}}}** in bold.\n",
            f"> {{{{ value('{ref}') }}}}\n",
            f"| field | value |\n|---|---|\n| {ref} | {{{{ value('{ref}') }}}} |\n",
            f"- item\n- {{{{ value('{ref}') }}}}\n",
            f"!!! note\n    In a note: {{{{ value('{ref}') }}}}.\n",
            f"<pre class=\"quoted-text\">{{{{ value('{ref}') }}}}</pre>\n",
        ]
    for path, text in plan["meta"]:
        if path[0] in ("tables", "values") or not all(isinstance(k, str) and not k.isdigit() for k in path):
            continue  # tables' texts are shown by the tables below
        keys = ", ".join(repr(k) for k in path)
        out.append(f"Meta: **{{{{ meta('{exp}', {keys}) }}}}**.\n")
        expected.append(text)
    for table, t in meta["tables"].items():
        ref = f"{exp}.{table}"
        out += [f"{{{{ table('{ref}') }}}}\n", f"{{{{ json_table('{ref}') }}}}\n"]
        expected += [t["title"]] + [c[k] for c in t["columns"] for k in ("label", "description") if c[k]]
        for col in plan["columns"][table]:
            claims[f"has_cells_{len(claims)}"] = f"len(column('{ref}', '{col}')) > 0"
            out.append(f"""Checked: {{{{ claim("{exp}.has_cells_{len(claims) - 1}", "the column has cells") }}}}.\n""")
    for fig in figures:
        out.append(f"{{{{ figure('{fig}', alt='A figure drawn from hostile data, its labels literal') }}}}\n")
    return "\n".join(out), expected + plan["cells"]


def build_hostile(dest: Path) -> tuple[Path, dict, subprocess.CompletedProcess]:
    from sitekit import figures

    plan = hostile_site_data(dest)
    docs = dest / "docs"
    docs.mkdir()
    if not figures.REGISTRY:
        figures._load_all()
    (docs / "index.md").write_text("# Hostile data\n\n{{ experiments() }}\n", encoding="utf-8")
    for exp, p in plan.items():
        meta = json.loads((dest / "site_data" / exp / "meta.json").read_text())
        mine = sorted(f for f in figures.REGISTRY if f.startswith(exp + "."))
        claims: dict[str, str] = {}
        page, p["expected"] = _page(exp, meta, p, mine, claims)
        (docs / f"exp-{exp}.md").write_text(page, encoding="utf-8")
        (dest / "claims" / exp).mkdir(parents=True)
        toml = "".join(f"[{name}]\ncheck = {json.dumps(check)}\n" for name, check in claims.items())
        (dest / "claims" / exp / "claims.toml").write_text(toml, encoding="utf-8")
    for folder in ("javascripts", "stylesheets"):
        shutil.copytree(REPO / "docs" / folder, docs / folder)
    extra = {**yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["extra"], "claims": "claims"}
    return dest / "site", plan, english_build(dest, nav=None, extra=extra)  # no nav: the pages written here


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    site, plan, proc = build_hostile(tmp_path_factory.mktemp("hostile"))
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return site, plan


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.comments: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        self.text += list(a.values())
        if tag == "script":
            self._script = a

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self.scripts.append((self._script, data))
        else:
            self.text.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def _pages(site: Path) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html") if "search" not in p.parts}


THEME_SITES = ("squidfunk.github.io",)  # the theme's footer credit


def test_no_script_image_link_or_handler_comes_from_the_data(hostile):
    site, _ = hostile
    for path, html in _pages(site).items():
        page = _Page()
        page.feed(html)
        where = path.relative_to(site)
        assert not page.comments, (where, page.comments[:1])
        assert "<!--" not in html, where
        for tag, attrs in page.tags:
            assert tag not in ("iframe", "object", "embed", "base"), (where, tag)
            for name, value in attrs.items():
                assert not name.startswith("on"), (where, tag, name, value[:80])
                assert not re.sub(r"\s", "", value).lower().startswith(("javascript:", "data:text")), (where, tag)
            url = attrs.get("href") or attrs.get("src") or ""
            if re.match(r"([a-z]+:)?//", url):
                assert url.split("/")[2] in THEME_SITES, (where, tag, url)
            if tag == "img":
                assert re.fullmatch(r"(\.\./)*(figures|assets)/[\w/.-]+", attrs["src"]), (where, attrs["src"])
        for attrs, body in page.scripts:
            if attrs.get("type") == "application/json":  # data for the page's scripts, whole
                assert "<" not in body and json.loads(body), (where, attrs)
            else:  # the theme's and the site's own
                assert "alert(" not in body and "tracker" not in body, (where, attrs)
        kinds = [(a.get("type"), a.get("src", "")) for t, a in page.tags if t == "script"]
        assert all(src.endswith(".js") or kind in ("application/json", None) for kind, src in kinds), kinds


def test_every_text_is_shown_literally(hostile):
    site, plan = hostile
    for exp, p in plan.items():
        page = _Page()
        page.feed((site / f"exp-{exp}" / "index.html").read_text(encoding="utf-8"))
        text = "\n".join(page.text)
        for payload in {t for t in p["expected"] if t}:
            shown = payload if payload != LONG else LONG[:200] + "…"
            assert shown in text, (exp, payload[:60])
    home = _Page()
    home.feed((site / "index.html").read_text(encoding="utf-8"))
    assert LONG[:200] + f"… ({MAX_TEXT:,} characters in all)" in "\n".join(home.text)


def test_no_page_grows_with_the_data(hostile):
    site, _ = hostile
    sizes = {p.relative_to(site): p.stat().st_size for p in site.rglob("*.html")}
    assert max(sizes.values()) < PAGE_BOUND, max(sizes.items(), key=lambda kv: kv[1])


def test_figures_draw_the_data_as_text(hostile):
    site, _ = hostile
    drawn = list(site.glob("figures/*/*.svg"))
    assert drawn
    labels = []
    for svg in drawn:
        root = ElementTree.fromstring(svg.read_bytes())
        for el in root.iter():
            assert not el.tag.endswith(("script", "foreignObject")), svg
            for name, value in el.attrib.items():
                assert not name.startswith("on"), (svg, name)
                assert not name.endswith("href") or value.startswith("#"), (svg, name, value)
            if el.tag.endswith("text"):
                labels.append("".join(el.itertext()))
    assert "$x^2$" in labels  # a dollar sign, not mathtext
