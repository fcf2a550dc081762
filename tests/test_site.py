"""The site, built with --strict from the committed site_data, checked as HTML."""

import json
import re
import shutil
from html import unescape
from html.parser import HTMLParser

import pytest
from mkdocs.exceptions import PluginError

from tests.conftest import REPO, edit_table
from tests.helpers import render_page, table_rows


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.figures, self.imgs, self.links = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-table" in a:
            self.tables.append(a["data-table"])
        if "data-json-table" in a:  # read by the page's script (the calculator's presets)
            self.tables.append(a["data-json-table"])
        if "data-figure" in a:
            self.figures.append(a["data-figure"])
        if tag == "img":
            self.imgs.append(a)
        if tag == "a" and a.get("href", "").endswith((".csv", ".json")):
            self.links.append(a["href"])


def _pages(site):
    return {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html") if "search" not in p.parts}


@pytest.mark.build
def test_every_committed_table_is_on_a_page(built_site):
    shown = set()
    for html in _pages(built_site).values():
        c = _Collect()
        c.feed(html)
        shown.update(c.tables)
    # the runner's calibration folder is a record of the runs, not a result: a page may show
    # its tables, none has to (as the drift gate holds, measure/check.py)
    committed = {
        f"{m.parent.name}.{t}"
        for m in (REPO / "site_data").glob("*/meta.json")
        if m.parent.name != "calibration"
        for t in json.loads(m.read_text())["tables"]
    }
    assert committed and committed <= shown, committed - shown


@pytest.mark.build
def test_no_marker_survives(built_site):
    for path, html in _pages(built_site).items():
        article = html.split("<article", 1)[-1].split("</article>", 1)[0]  # the page, not theme scripts
        # a notebook page's stylesheet, JSON for the page's scripts, and a formula's LaTeX source
        article = re.sub(r"<(style|script|annotation)\b.*?</\1>", "", article, flags=re.S)
        assert "{{" not in article and "}}" not in article, path
        assert not re.search(r"\{\{\s*\w+\(", html), path


@pytest.mark.build
def test_figures_are_svg_with_alt_text(built_site):
    count = 0
    for path, html in _pages(built_site).items():
        c = _Collect()
        c.feed(html)
        for img in c.imgs:
            if img["src"].endswith(".svg") and "figures/" in img["src"]:
                count += 1
                assert len(img.get("alt", "")) > 20, (path, img)
                target = (path.parent / img["src"]).resolve()
                assert target.is_file() and target.read_text().lstrip().startswith("<?xml"), target
    assert count >= 3


@pytest.mark.build
def test_csv_links_resolve(built_site):
    links = 0
    for path, html in _pages(built_site).items():
        c = _Collect()
        c.feed(html)
        for href in c.links:
            links += 1
            assert (path.parent / href).resolve().is_file(), (path, href)
    assert links > 0


@pytest.mark.build
def test_provenance_shown_once_with_a_line_under_every_table(built_site):
    html = (built_site / "kv-cache" / "index.html").read_text()
    assert html.count('class="measured-table"') == html.count('<p class="table-data">')
    assert html.count('<tr id="provenance-kv_cache">') == 1  # the page's one provenance, a row per experiment
    assert "SmolLM2" in html or "arch:" in html


@pytest.mark.parametrize(
    "marker, message",
    [
        ("{{ table('kv_cache.no_such_table') }}", "no table 'no_such_table'"),
        ("{{ cell('kv_cache.memory', 'no_such_column', where={'method': 'cached'}) }}", "no column 'no_such_column'"),
        ("{{ guess('kv_cache.memory') }}", "unknown marker function 'guess'"),
    ],
    ids=["missing-table", "missing-column", "unknown-marker"],
)
def test_a_bad_marker_fails_the_build(marker, message):
    with pytest.raises(PluginError) as failed:
        render_page("kv-cache.md", marker)
    assert message in str(failed.value)


def test_missing_data_file_fails_the_build(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(REPO / "site_data", data)
    (data / "kv_cache" / "memory.csv").unlink()
    with pytest.raises(PluginError) as failed:
        render_page("kv-cache.md", data=data)
    assert re.search(r"memory\.csv is missing", str(failed.value))


@pytest.mark.build
def test_source_addresses_render_as_links_named_by_their_site(built_site):
    page = (built_site / "calculator" / "index.html").read_text(encoding="utf-8")
    table = page.split('data-table="memory_budget.card_presets"', 1)[1].split("</table>", 1)[0]
    assert '<a href="https://www.nvidia.com/en-us/data-center/h200/">nvidia.com</a>' in table
    assert '<a href="https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html">amd.com</a>' in table


def test_a_link_style_on_text_that_is_no_address_fails_the_build():
    marker = "{{ table('memory_budget.card_presets', styles={'card': 'link'}) }}"
    with pytest.raises(PluginError) as failed:
        render_page("kv-cache.md", marker)
    assert "style 'link' needs an http(s) address" in str(failed.value)


def _table_rows(site, page, ref):
    """The body rows of one rendered table as lists of cell text, tags removed."""
    html = (site / page / "index.html").read_text(encoding="utf-8")
    table = html.split(f'data-table="{ref}"', 1)[1].split("</tbody>", 1)[0]
    body = table.split("<tbody>", 1)[1]
    return [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)
    ]


@pytest.mark.build
def test_every_unit_as_a_reader_sees_it(built_site):
    """Values known by hand, found as the built pages write them: a column of bytes in one
    unit that its header names, three significant digits, percent, ratio and powers of
    ten; a unit follows its number across a no-break space."""
    rows = {r[0]: r for r in _table_rows(built_site, "cache-size", "cache_size.context_7b")}
    # 4,096 tokens x 131,072 bytes = 2^29 = 0.5 GiB exactly; 14e9 bytes = 13.04 GiB; 2^29 / 14e9 = 0.0383
    assert rows["4,096"][1:] == ["0.5", "13.0", "0.04×"]
    # 128,000 x 131,072 = 16,777,216,000 bytes = 15.625 GiB; / 14e9 = 1.198
    assert rows["128,000"][1:] == ["15.6", "13.0", "1.20×"]
    gqa = [
        r for r in _table_rows(built_site, "cache-size", "cache_size.attention_variants") if r[0].startswith("Hugging")
    ]
    assert [r[-1] for r in gqa] == ["100.0%", "33.3%", "11.1%"]  # 9, 3 and 1 of 9 heads
    models = {r[0]: r for r in _table_rows(built_site, "memory-budget", "memory_budget.models")}
    assert (models["7B"][1], models["13B"][1], models["70B"][1]) == ("7 × 10⁹", "1.3 × 10¹⁰", "7 × 10¹⁰")
    assert models["SmolLM2-135M-Instruct"][1] == "1.35 × 10⁸"  # 134,515,008
    assert models["13B"][7] == "819,200"  # under 1\u00a0MiB, a table writes the bytes
    windowed = {(r[0], r[1]): r for r in _table_rows(built_site, "memory-budget", "memory_budget.windowed")}
    # one unit per column, named in its header: 4 GiB is 4,096 MiB beside 512 MiB
    assert windowed[("mistralai/Mistral-7B-v0.1", "32,768")][2:4] == ["4,096", "512"]
    assert windowed[("google/gemma-3-270m", "4,096")][3] == "19.5"  # 20,447,232 bytes
    page = (built_site / "memory-budget" / "index.html").read_text(encoding="utf-8")
    assert '<span title="20,447,232 bytes">19.5</span>' in page  # the exact count on hover
    assert re.search(r"<th [^>]*>cache, no window \(MiB\)</th>", page)
    text = re.sub(r"<[^>]+>", "", page)
    assert "800\u00a0KiB" in text and "320\u00a0KiB" in text  # 819,200 and 327,680 bytes in the prose
    assert "(18.0%)" in text  # 0.1796875


class _Text(HTMLParser):
    """The article's running text as a reader reads it: tags dropped, code, tables and forms left out."""

    SKIP = {"code", "pre", "table", "script", "style", "svg", "form"}

    def __init__(self):
        super().__init__()
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        self.depth += tag in self.SKIP

    def handle_endtag(self, tag):
        self.depth -= tag in self.SKIP

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)


def doubled_words(html: str) -> list[str]:
    """A word written twice in a row across a marker's edge ("96 tokens tokens", "18 users
    users"): the marker renders its unit and the prose typed it again."""
    t = _Text()
    t.feed(html.split("<article", 1)[-1].split("</article>", 1)[0])
    text = " ".join("".join(t.parts).split())
    return [
        m.group(0) for m in re.finditer(r"\b([A-Za-z]{3,})\s+\1\b", text) if m.group(1).lower() not in ("that", "had")
    ]


@pytest.mark.build
def test_no_word_is_written_twice_in_a_row(built_site):
    found = {p.parent.name: d for p, html in _pages(built_site).items() if (d := doubled_words(html))}
    assert not found, found


def test_a_doubled_unit_is_found():
    html = "<article><p>It held <span>18 users</span> users, <code>x x</code> and had had</p></article>"
    assert doubled_words(html) == ["users users"]


def test_a_header_names_its_unit_once():
    from sitekit.rendering.markers import _header

    assert _header({"name": "t", "unit": "tokens", "label": "tokens each"}, "f.csv") == (
        '<th title="column t of f.csv">tokens each</th>'
    )
    assert _header({"name": "s", "unit": "ms", "label": "spread (IQR)"}, "f.csv") == (
        '<th title="column s of f.csv">spread (IQR) (ms)</th>'
    )
    assert _header({"name": "u", "unit": "users", "label": "user count"}, "f.csv") == (
        '<th title="column u of f.csv">user count (users)</th>'
    )
    # a column of bytes names the one unit its cells are counted in; a share's cells carry %
    cache = {"name": "c", "unit": "bytes", "label": "cache"}
    assert _header(cache, "f.csv", "mib") == '<th title="column c of f.csv">cache (MiB)</th>'
    assert _header(cache, "f.csv", "int") == '<th title="column c of f.csv">cache (bytes)</th>'
    named = {**cache, "label": "cache bytes"}
    assert _header(named, "f.csv", "int") == '<th title="column c of f.csv">cache bytes</th>'
    assert _header(cache, "f.csv", "iec") == '<th title="column c of f.csv">cache</th>'  # each cell its unit
    assert _header({"name": "f", "unit": "fraction", "label": "floor / step"}, "f.csv") == (
        '<th title="column f of f.csv">floor / step</th>'
    )


def test_a_header_tooltip_names_the_csv_column_as_written_in_every_edition():
    from sitekit.language import i18n
    from sitekit.rendering.markers import _header

    col = {"name": "step_ms", "unit": "ms", "label": "decode step", "description": "a description"}
    i18n.set_language("gl")
    try:
        th = unescape(_header(col, "decode.csv"))
    finally:
        i18n.set_language("en")
    # the label translated; the column's name as the CSV has it, never translated
    assert th == '<th title="a description (columna step_ms de decode.csv)">paso de decode (ms)</th>'


@pytest.mark.build
def test_text_cells_may_wrap_and_numbers_may_not(built_site):
    html = (built_site / "weight-quantization" / "index.html").read_text(encoding="utf-8")
    assert '<td class="text">not built: ' in html  # a reason, long: it wraps
    assert re.search(r"<td>\d[\d,.]*</td>", html)  # a number: one line


def _meta_with_nulls() -> dict:
    from tests.conftest import PROVENANCE

    return {
        **PROVENANCE,
        "git_commit": None,
        "memory_method": None,
        "dtype": None,
        "profile": None,
        "model": {"name": None, "spec": "x", "parameters": None, "weights": None},
        "device": {"id": "cpu", "type": "cpu", "cpu": None, "torch_threads": None},
        "libraries": {"torch": None, "numpy": "2.0"},
        "tables": {},
        "values": {},
    }


class _Stub:
    """SiteData for one experiment whose meta.json holds JSON nulls (the reader refuses
    some of them; the renderer must not rely on it)."""

    experiments = ["e"]

    def __init__(self, meta: dict) -> None:
        self._meta = meta

    def meta(self, exp: str) -> dict:
        return self._meta


def test_null_provenance_reads_not_recorded_never_none():
    from types import SimpleNamespace

    from sitekit.rendering.markers import meta
    from sitekit.sources.provenance import experiments, provenance_html

    ctx = SimpleNamespace(data=_Stub(_meta_with_nulls()), url_prefix="../", page="p.md")
    for html in (provenance_html(ctx, "e", csv="t"), experiments(ctx), meta(ctx, "e", "git_commit")):
        assert "None" not in html, html
        assert "not recorded" in html
    box = provenance_html(ctx, "e", csv="t")
    assert "numpy 2.0" in box and "torch" not in box  # a library without a version is left out


def test_a_run_that_measures_no_memory_says_so_where_its_method_would_be():
    from types import SimpleNamespace

    from sitekit.sources.provenance import items

    meta = {**_meta_with_nulls(), "memory_method": "peak RSS"}
    ctx = SimpleNamespace(data=_Stub(meta), url_prefix="", page="p.md")
    assert dict(items(ctx, "e"))["memory method"] == "peak RSS"
    del meta["memory_method"]  # the calibration's run: it times, it weighs nothing
    assert dict(items(ctx, "e"))["memory method"] == "none: this run measures no memory"


def test_provenance_cuts_a_long_name_and_says_so():
    from types import SimpleNamespace

    from sitekit.sources.provenance import provenance_html

    meta = _meta_with_nulls()
    meta["model"] = {**meta["model"], "name": "m" * 50_000_000, "parameters": float("inf")}
    html = provenance_html(SimpleNamespace(data=_Stub(meta), url_prefix=""), "e")
    assert len(html) < 5_000 and "50,000,000 characters in all" in html and "(∞\u00a0parameters)" in html


def test_a_source_address_elsewhere_fails_the_build(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(REPO / "site_data", data)

    def elsewhere(rows):
        rows[1][rows[0].index("source")] = "https://www.nvidia.com@evil.example/"

    edit_table(data / "memory_budget", "card_presets", elsewhere)
    with pytest.raises(PluginError) as failed:
        render_page("calculator.md", data=data)
    assert "'https://www.nvidia.com@evil.example/' is not on a site the pages link to" in str(failed.value)


def test_a_table_of_chosen_columns_shows_rows_it_cannot_tell_apart_once():
    # bytes_per_token has a row per model and dtype; its shapes do not depend on the dtype
    html = render_page(
        "cache-size.md",
        "{{ table('cache_size.bytes_per_token', columns=['model', 'layers', 'kv_heads', 'head_dim']) }}",
    )
    models = table_rows(REPO / "site_data" / "cache_size", "bytes_per_token")
    assert len(models) > len({r["model"] for r in models})  # the data does repeat each shape
    shown = html[html.index("<table") : html.index("</table>")]  # the table, not its provenance
    assert shown.count("<tr>") - 1 == len({r["model"] for r in models})


def test_a_marker_closed_with_a_brace_too_many_fails_the_build():
    with pytest.raises(PluginError, match="a marker closed with three braces"):
        render_page("kv-cache.md", "{{ value('kv_cache.speedup') }}}")
