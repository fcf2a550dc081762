"""A measured table skips Markdown (PageContext.set_aside, put_back): what the marker wrote is
what the page holds, a placeholder Markdown changed fails the build, and the search index
reads the table's cells as words apart."""

from __future__ import annotations

import json
import re
from html import unescape
from types import SimpleNamespace

import markdown
import pytest
from mkdocs.exceptions import PluginError

from sitekit.rendering import cells
from sitekit.rendering.context import PageContext, put_back
from tests.conftest import REPO
from tests.helpers import _hook

TABLE = '<table aria-labelledby="t"><tr><td>1</td></tr></table>'


def test_without_a_place_to_keep_it_the_html_stays_where_it_is():
    ctx = PageContext(data=None, page="p.md", url_prefix="")
    assert ctx.set_aside(TABLE) == TABLE


def test_a_placeholder_is_put_back_as_the_html_it_stands_for():
    ctx = PageContext(data=None, page="p.md", url_prefix="", aside={})
    first, second = ctx.set_aside(TABLE), ctx.set_aside(TABLE.replace("1", "2"))
    assert first != second and TABLE not in first
    page = f"<div>\n{first}\n</div><p>text</p><details>{second}</details>"
    assert put_back(page, ctx.aside) == f"<div>\n{TABLE}\n</div><p>text</p><details>{TABLE.replace('1', '2')}</details>"


@pytest.mark.parametrize(
    "changed",
    [
        lambda page, key: page.replace(key, ""),  # Markdown dropped it
        lambda page, key: page.replace(key, key + key),  # or wrote it twice
        lambda page, key: page.replace(key, key.replace("></table>", "> </table>")),  # or rewrote it
        lambda page, key: page + '<table data-set-aside="7"></table>',  # an author typed one
    ],
)
def test_a_placeholder_that_did_not_come_through_as_it_went_in_is_refused(changed):
    ctx = PageContext(data=None, page="p.md", url_prefix="", aside={})
    key = ctx.set_aside(TABLE)
    with pytest.raises(ValueError, match="set aside"):
        put_back(changed(f"<div>{key}</div>", key), ctx.aside)


# The Markdown extensions a table meets on a page (mkdocs.yml): raw HTML blocks, and blocks
# whose content is Markdown (<details markdown>), which Markdown parses and writes again.
EXTENSIONS = ["abbr", "attr_list", "md_in_html", "tables", "footnotes", "pymdownx.details"]


def _page(name: str):
    return SimpleNamespace(file=SimpleNamespace(src_path=name, src_uri=name), url=name.removesuffix(".md") + "/")


def test_each_table_of_a_page_comes_out_of_the_build_as_its_marker_wrote_it():
    """activation-outliers.md holds tables in raw blocks and inside <details markdown>."""
    render, config = _hook(None)
    page = _page("activation-outliers.md")
    text = (REPO / "docs" / page.file.src_path).read_text(encoding="utf-8")
    render._state["aside"] = {}
    shown = render.on_page_markdown(text, page=page, config=config, files=None)
    tables = dict(render._state["aside"][page.file.src_uri])
    measured = re.findall(r'<div class="measured-table" data-table=.*?\n</div>', shown, re.S)
    assert len(tables) >= len(measured) >= 4 and not any("<td" in div for div in measured)  # their cells, set aside
    assert "markdown>\n<summary>" in re.sub(r'<details class="[^"]*" ', "<details ", shown)  # one in a Markdown block
    html = render.on_page_content(markdown.markdown(shown, extensions=EXTENSIONS), page=page, config=config, files=None)
    # as written, a line after each cell (cells.apart, which every table of a page gets)
    assert all(html.count(cells.apart(table)) == 1 for table in tables.values())
    assert "data-set-aside" not in html and not render._state["aside"]


def test_a_placeholder_the_markdown_lost_fails_the_build_naming_the_page():
    render, config = _hook(None)
    page = _page("kv-cache.md")
    render._state["aside"] = {}
    shown = render.on_page_markdown((REPO / "docs/kv-cache.md").read_text(encoding="utf-8"), page, config, None)
    lost = re.sub(r'<table data-set-aside="0"></table>', "", shown)
    with pytest.raises(PluginError, match=r"^kv-cache\.md: a table set aside"):
        render.on_page_content(markdown.markdown(lost, extensions=EXTENSIONS), page=page, config=config, files=None)


def test_a_tables_cells_and_rows_come_a_line_apart_and_nothing_else_moves():
    page = "<p>a<b>b</b></p><table><tr><th>x</th><td>1</td></tr><tr><td>2</td><td><b>3</b></td></tr>\n</table>"
    assert cells.apart(page) == (
        "<p>a<b>b</b></p><table><tr><th>x</th>\n<td>1</td>\n</tr>\n<tr><td>2</td>\n<td><b>3</b></td>\n</tr>\n</table>"
    )
    assert cells.apart(cells.apart(page)) == cells.apart(page)


def test_a_line_break_in_a_cell_comes_with_a_line_and_one_already_followed_stays():
    page = "<td><code>kv_cache</code><br>KV cache</td><td>2×<br><span>[1, 3]</span></td><p>a<br />\nb<br>\nc</p>"
    assert cells.apart(page) == (
        "<td><code>kv_cache</code><br>\nKV cache</td>\n<td>2×<br>\n<span>[1, 3]</span></td>\n<p>a<br />\nb<br>\nc</p>"
    )
    assert cells.apart(cells.apart(page)) == cells.apart(page)


def _headers(html: str, ref: str) -> list[str]:
    table = html.split(f'data-table="{ref}"', 1)[1].split("</thead>", 1)[0]
    cells = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", table, re.S)
    return [unescape(re.sub(r"<[^>]+>", "", c)).replace("\u00ad", "") for c in cells]  # soft hyphens: searched whole


@pytest.mark.build
@pytest.mark.parametrize("edition", ["", "cs/"])
def test_the_search_index_reads_a_tables_headers_as_words_apart(built_site, edition):
    html = (built_site / edition / "kv-cache" / "index.html").read_text(encoding="utf-8")
    ref = re.search(r'data-table="([^"]+)"', html).group(1)
    headers = _headers(html, ref)
    assert len(headers) >= 3
    index = json.loads((built_site / edition / "search" / "search_index.json").read_text(encoding="utf-8"))
    # an edition's own index, its locations under its folder
    texts = [re.sub(r"\s+", " ", d["text"]) for d in index["docs"] if d["location"].startswith("kv-cache/")]
    assert any(" ".join(headers) in text for text in texts), headers
    # and a table no marker wrote: the provenance's, a field's name and then its text
    shared = html.split('<table class="provenance-table provenance-shared">', 1)[1].split("</tr>", 1)[0]
    field, shown = (unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", shared))
    row = re.sub(r"\s+", " ", f"{field} {shown}")  # white space as the texts above are read
    assert any(row in text for text in texts), row
    # and a cell of two lines: an experiment's folder, then its title
    code, title = re.search(r'<tr id="provenance-[^"]+"><td><code>(.*?)</code><br>\s*(.*?)</td>', html).groups()
    row = re.sub(r"\s+", " ", f"{unescape(code)} {unescape(title)}")
    words = [re.sub(r"<[^>]+>", "", text) for text in texts]  # the index keeps <code>: its words are read
    assert any(row in text for text in words), row
