"""What a contributor commits besides code is data too: a notebook's outputs and Markdown
cells, and a catalog's translations, never become markup that runs on a page. Notebooks
are shown from a safe copy (sitekit/rendering/notebook_safety.py); a catalog entry that
adds markup its English message lacks is refused and fails the build; the calculator's
locale JSON cannot close its script element."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from sitekit.language import calculator_locale, i18n
from sitekit.rendering.notebook_safety import safe_copy, svg, table
from tests.builds import english_build
from tests.conftest import DOCS, REPO, build_site

SCRIPTED_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">'
    '<script>alert("svg")</script><rect width="5" height="5" onclick="alert(1)" onload="alert(2)"/>'
    '<a xlink:href="javascript:alert(3)"><text x="1" y="9">label</text></a>'
    '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">html</div></foreignObject>'
    '<use xlink:href="#glyph"/></svg>'
)
DATAFRAME = (
    '<div><style scoped>.dataframe th {text-align: right;}</style><table border="1" class="dataframe">'
    "<thead><tr><th></th><th>model</th></tr></thead>"
    "<tbody><tr><th>0</th><td>a &lt;b&gt; cell</td></tr></tbody></table></div>"
)


def hostile_notebook() -> dict:
    outputs = [
        {"output_type": "display_data", "data": {"text/html": "<script>alert('html')</script>", "text/plain": "x"}},
        {"output_type": "display_data", "data": {"application/javascript": "alert('js')"}},
        {"output_type": "display_data", "data": {"text/html": '<img src=x onerror="alert(4)">', "text/plain": "y"}},
        {"output_type": "display_data", "data": {"image/svg+xml": SCRIPTED_SVG}},
        {"output_type": "execute_result", "execution_count": 1, "data": {"text/html": DATAFRAME}},
        {"output_type": "display_data", "data": {"text/markdown": "<script>alert('md')</script>"}},
        {"output_type": "stream", "name": "stdout", "text": "<script>printed</script>\n"},
    ]
    return {
        "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}}},
        "nbformat": 4,
        "nbformat_minor": 5,
        "cells": [
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": "# T\n<script>alert('cell')</script> [go](javascript:alert(5))",
            },
            {"cell_type": "raw", "metadata": {"format": "text/html"}, "source": "<iframe src=x></iframe>"},
            {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "x", "outputs": outputs},
        ],
    }


def test_a_notebook_keeps_text_images_and_tables_and_nothing_that_runs():
    safe = safe_copy(hostile_notebook())
    text = json.dumps(safe)
    for gone in ("alert('html')", "alert('js')", "onerror", "onclick", "onload", "javascript:", "foreignObject",
                 "alert('md')", "<iframe", "widget-state"):  # fmt: skip
        assert gone not in text, gone
    markdown, raw, code = safe["cells"]
    assert "&lt;script>" in markdown["source"] and "](#" in markdown["source"]
    assert raw["cell_type"] == "markdown" and raw["source"] == "&lt;iframe src=x>&lt;/iframe>"
    kinds = [sorted(o.get("data", {})) or [o["output_type"]] for o in code["outputs"]]
    assert kinds == [["text/plain"], ["text/plain"], ["image/svg+xml"], ["text/html"], ["stream"]]
    # a stream stays text: the page escapes it as the renderer does every stream
    assert code["outputs"][-1]["text"] == "<script>printed</script>\n"


def test_a_pandas_table_is_written_again_from_its_cells():
    assert table(DATAFRAME) == (
        '<table class="dataframe">\n<thead>\n<tr><th></th><th>model</th></tr>\n</thead>\n'
        "<tbody>\n<tr><th>0</th><td>a &lt;b&gt; cell</td></tr>\n</tbody>\n</table>"
    )
    assert table("<table><tr><td>no pandas class</td></tr></table>") is None
    assert table('<table class="dataframe"><tr><td><a href="x">link</a></td></tr></table>') is None
    assert table('<p>text</p><table class="dataframe"><tr><td>1</td></tr></table>') is None


def test_an_svg_figure_keeps_its_drawing_and_loses_what_runs():
    cleaned = svg(SCRIPTED_SVG)
    assert "<rect" in cleaned and ">label<" in cleaned and 'href="#glyph"' in cleaned
    assert not re.search(r"script|onclick|onload|javascript|foreignObject", cleaned)
    assert svg("<html><script/></html>") is None and svg("not xml <") is None


def test_the_committed_notebooks_lose_nothing_they_show():
    for path in sorted(DOCS.glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        before = [sorted(o.get("data", {})) for c in notebook["cells"] for o in c.get("outputs", [])]
        after = [sorted(o.get("data", {})) for c in safe_copy(notebook)["cells"] for o in c.get("outputs", [])]
        assert after == before, path.name


def test_a_translation_that_adds_markup_is_refused(tmp_path, monkeypatch):
    (tmp_path / "gl.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "Download this notebook"\nmsgstr "Descarga <img src=x onerror=alert(1)>"\n\n'
        'msgid "Methods"\nmsgstr "Métodos<!--"\n\n'
        'msgid "Every work cited on this site: [{title}](references.md)."\n'
        'msgstr "Cada obra citada: [{title}](references.md)."\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    monkeypatch.setattr(i18n, "_catalogs", {})
    monkeypatch.setattr(i18n, "unsafe", type(i18n.unsafe)(set))
    found = i18n.translations("gl")
    assert (None, "Download this notebook") not in found and (None, "Methods") not in found
    assert found[(None, "Every work cited on this site: [{title}](references.md).")].startswith("Cada")
    assert len(i18n.unsafe["gl"]) == 2


def test_the_calculators_locale_cannot_close_its_script(monkeypatch):
    monkeypatch.setattr(i18n, "_", lambda message, *a, **k: message + "</script><!--<script>")
    element = calculator_locale.locale_script(REPO / "docs" / "javascripts" / "calculator")
    body = element.split(">", 1)[1].rsplit("</script>", 1)[0]
    assert "<" not in body and ">" not in body
    assert json.loads(body)["messages"]  # the same JSON, its "<" written as \u003c


@pytest.mark.build
def test_a_build_with_a_hostile_catalog_fails_naming_it_and_a_hostile_notebook_shows_nothing_that_runs(tmp_path):
    # the English edition alone: the hostile cells are the English notebook's, and the page read is its
    docs = tmp_path / "build" / "docs"
    shutil.copytree(DOCS, docs)
    shutil.copytree(REPO / "site_data", tmp_path / "build" / "site_data")
    hostile = hostile_notebook()
    english = json.loads((docs / "explore-the-data.ipynb").read_text(encoding="utf-8"))
    english["cells"].append(hostile["cells"][0])
    english["cells"][-1]["source"] += "\n"
    for cell in english["cells"]:
        if cell["cell_type"] == "code" and cell.get("outputs"):
            cell["outputs"] += hostile["cells"][2]["outputs"]
            break
    (docs / "explore-the-data.ipynb").write_text(json.dumps(english), encoding="utf-8")
    done = english_build(tmp_path / "build")
    assert done.returncode == 0, done.stderr[-2000:]
    page = (tmp_path / "build" / "site" / "explore-the-data" / "index.html").read_text(encoding="utf-8")
    for gone in ("alert('html')", "alert('js')", "onerror", "onclick", "javascript:alert", "<script>alert('cell')"):
        assert gone not in page, gone
    assert "&lt;script&gt;alert('cell')" in page  # the cell's text shown as text
    download = (tmp_path / "build" / "site" / "explore-the-data" / "explore-the-data.ipynb").read_text()
    assert "alert('js')" not in download

    catalogs = tmp_path / "catalogs"
    shutil.copytree(REPO / "hooks" / "locales", catalogs)
    text = (catalogs / "gl.po").read_text(encoding="utf-8")
    text = text.replace(
        'msgid "Download this notebook"\nmsgstr "',
        'msgid "Download this notebook"\nmsgstr "<img src=x onerror=alert(1)>',
        1,
    )
    (catalogs / "gl.po").write_text(text, encoding="utf-8")
    done = build_site(tmp_path / "hostile-catalog", locales=catalogs)
    assert done.returncode != 0
    assert "gl.po: a translation carries no markup" in done.stderr and "'Download this notebook'" in done.stderr
