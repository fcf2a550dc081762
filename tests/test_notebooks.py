"""The notebook pages: executed once, their outputs carried into every edition, tied by
hashes to the data and code they ran, and refused by the build when stale."""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest
from mkdocs.exceptions import PluginError

from measure import notebooks
from measure.errors import UserError
from sitedata.hashes import NOTEBOOK_KEY, data_hash, literal_pairs, notebook_code_hash
from tests.conftest import REPO, write_data
from tests.helpers import finish_build


def _notebook(path, code: str, words: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {words}"), nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture
def tiny(tmp_path):
    docs, data = tmp_path / "docs", tmp_path / "data"
    docs.mkdir()
    write_data(data, "exp", {"t": [{"x": 1}]})
    _notebook(docs / "n.ipynb", "print(6 * 7)", "Numbers")
    _notebook(docs / "n.gl.ipynb", "print(6 * 7)", "Números")
    return docs, data


def test_one_run_fills_every_edition_and_records_what_it_ran(tiny):
    docs, data = tiny
    assert notebooks.run(data, docs=docs, log=lambda m: None) == 1
    for name in ("n.ipynb", "n.gl.ipynb"):
        nb = nbformat.read(docs / name, as_version=4)
        assert nb.cells[1].outputs[0]["text"] == "42\n"
        assert nb.metadata[NOTEBOOK_KEY] == {"data": data_hash(data), "code": notebook_code_hash(nb)}
        assert "execution" not in nb.cells[1].metadata  # no timestamps in a committed file
    assert nbformat.read(docs / "n.gl.ipynb", as_version=4).cells[0].source == "# Números"
    assert notebooks.run(data, docs=docs, log=lambda m: None) == 0  # nothing changed: nothing runs


def test_changed_data_or_code_runs_again(tiny):
    docs, data = tiny
    notebooks.run(data, docs=docs, log=lambda m: None)
    write_data(data, "other", {"t": [{"y": 2}]})
    assert notebooks.run(data, docs=docs, log=lambda m: None) == 1
    for name in ("n.ipynb", "n.gl.ipynb"):
        _notebook(docs / name, "print(6 * 8)", "Numbers")
    assert notebooks.run(data, docs=docs, log=lambda m: None) == 1
    assert nbformat.read(docs / "n.gl.ipynb", as_version=4).cells[1].outputs[0]["text"] == "48\n"


@pytest.mark.parametrize("code", ["print(6 * 8)", "print(6 * 7)\nprint(1)", "print(f'{6 * 7}')"])
def test_an_edition_with_code_of_its_own_is_refused(tiny, code):
    docs, data = tiny
    _notebook(docs / "n.gl.ipynb", code, "Números")
    with pytest.raises(UserError, match="n.gl.ipynb: its code cells differ"):
        notebooks.run(data, docs=docs, log=lambda m: None)


def test_an_edition_writes_its_comments_and_labels_in_its_words_and_receives_the_english_run(tiny):
    docs, data = tiny
    english = 'def f():\n    """Six sevens."""\n    return 6 * 7\n\n\n# the answer\nprint("answer:", f())'
    edition = 'def f():\n    """Seis setes."""\n    return 6 * 7\n\n\n# a resposta\nprint("resposta:", f())'
    _notebook(docs / "n.ipynb", english, "Numbers")
    _notebook(docs / "n.gl.ipynb", edition, "Números")
    assert notebooks.run(data, docs=docs, log=lambda m: None) == 1
    nb = nbformat.read(docs / "n.gl.ipynb", as_version=4)
    assert nb.cells[1].outputs[0]["text"] == "answer: 42\n"  # the English run's: the page translates it
    assert nb.cells[1].source == edition
    assert notebooks.run(data, docs=docs, log=lambda m: None) == 0  # an edition in its own words is current


@pytest.mark.parametrize(
    "english, edition, pairs",
    [
        ('print("a:", x)  # why\nx = 1', 'print("b:", x)  # por que\nx = 1', [("a:", "b:")]),
        ('def f():\n    """Doc."""\n    return "k"', 'def f():\n    """Doc gl."""\n    return "k"', [("k", "k")]),
        ("%config A.b = ['svg']  # why", "%config A.b = ['svg']  # por que", [("svg", "svg")]),
        ("x = 1", "x = 2", None),  # a number
        ("y = f'{a} b'", "y = f'{a} c'", None),  # an f-string is code
        ("x = 1", "x = 1\ny = 2", None),  # a statement added
        ("x = a", "x = b", None),  # a name
    ],
)
def test_an_edition_may_differ_in_comments_docstrings_and_string_literals_only(english, edition, pairs):
    assert literal_pairs(english, edition) == pairs


def test_a_failing_cell_is_one_line(tiny):
    docs, data = tiny
    for name in ("n.ipynb", "n.gl.ipynb"):
        _notebook(docs / name, "1 / 0", "Numbers")
    with pytest.raises(UserError, match="a cell failed: .*ZeroDivisionError"):
        notebooks.run(data, docs=docs, log=lambda m: None)


def test_a_notebook_older_than_the_data_fails_the_build(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs)
    stale = docs / "measure-it-yourself.cs.ipynb"
    nb = json.loads(stale.read_text(encoding="utf-8"))
    nb["metadata"][NOTEBOOK_KEY]["data"] = "0" * 16
    stale.write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(PluginError) as failed:
        finish_build(docs, tmp_path / "site")
    assert "measure-it-yourself.cs.ipynb was executed against other data than site_data/ holds now" in str(failed.value)


def test_a_notebook_runs_against_the_data_it_is_given_and_records_that_data(tiny, tmp_path):
    docs, data = tiny
    code = (
        "import os, pathlib\n"
        "print(sorted(p.name for p in pathlib.Path(os.environ['SITE_DATA']).iterdir() if not p.name.startswith('.')))"
    )
    for name in ("n.ipynb", "n.gl.ipynb"):
        _notebook(docs / name, code, "Data")
    notebooks.run(data, docs=docs, log=lambda m: None)
    nb = nbformat.read(docs / "n.ipynb", as_version=4)
    assert nb.cells[1].outputs[0]["text"] == "['exp']\n"
    assert nb.metadata[NOTEBOOK_KEY]["data"] == data_hash(data)


@pytest.mark.slow
def test_the_notebook_pages_read_the_data_folder_they_are_run_against(tmp_path):
    data, docs = tmp_path / "data", tmp_path / "docs"
    shutil.copytree(REPO / "site_data", data, ignore=shutil.ignore_patterns("chapter", ".*"))
    docs.mkdir()
    for page in (REPO / "docs").glob("explore-the-data*.ipynb"):
        shutil.copy(page, docs / page.name)
    assert notebooks.run(data, docs=docs, force=True, log=lambda m: None) == 1
    folders = sum(1 for p in data.iterdir() if (p / "meta.json").is_file())  # without chapter, nor the runs beside
    for page in docs.iterdir():
        nb = nbformat.read(page, as_version=4)
        assert nb.cells[1].outputs[0]["text"].startswith(f"experiments: {folders}\n")
        assert "chapter" not in nb.cells[1].outputs[0]["text"]
        assert nb.metadata[NOTEBOOK_KEY]["data"] == data_hash(data) != data_hash(REPO / "site_data")


@pytest.mark.parametrize("data", ["{tmp}/nonexistent", "{tmp}"])
def test_data_with_no_experiment_is_one_line_and_nothing_is_run_or_written(data, tmp_path, monkeypatch, capsys):
    from measure.__main__ import main

    before = {p: p.read_bytes() for p in (REPO / "docs").glob("*.ipynb")}
    monkeypatch.setattr(notebooks, "execute", lambda *a, **k: pytest.fail("a notebook ran against no data"))
    assert main(["notebooks", "--data", data.format(tmp=tmp_path), "--force"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no experiment's data there" in err
    assert {p: p.read_bytes() for p in before} == before


def test_the_build_holds_an_editions_literals_to_the_catalogs_translation():
    """The edition's code prints what its page shows: a label is the English one, or the
    catalog's translation as the page writes the English run's line (notebook_outputs)."""
    from sitekit.rendering import notebook_outputs

    def nb(code: str) -> dict:
        return {"cells": [{"cell_type": "code", "source": code}]}

    english = nb('print("bytes held by the cache:", n)\nd = {"model": 1}\nd["model"]')
    assert notebook_outputs.untranslated(english, english, "gl") is None
    ours = nb('print("bytes que garda a caché:", n)\nd = {"modelo": 1}\nd["modelo"]')
    assert notebook_outputs.untranslated(english, ours, "gl") is None
    wrong = nb('print("bytes na caché:", n)\nd = {"model": 1}\nd["model"]')
    assert "is 'bytes na caché:', not its translation 'bytes que garda a caché:'" in notebook_outputs.untranslated(
        english, wrong, "gl"
    )
    half = nb('print("bytes que garda a caché:", n)\nd = {"modelo": 1}\nd["model"]')
    assert "'model' is translated in one place and kept in another" in notebook_outputs.untranslated(
        english, half, "gl"
    )
