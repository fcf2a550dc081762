"""The figure cache (sitekit/figures): a figure is drawn again when what it read changed
(an experiment it asked for, a catalog entry it asked for, its code), and only then."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from sitekit import figures
from sitekit.figures import cache as cache_module
from sitekit.language import i18n
from sitekit.rendering.pagedata import SiteData, SiteDataError
from tests.conftest import write_data
from tests.helpers import edition

DRAWN: list[str] = []  # the name of each figure drawn, in order


def _titled(text: str):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_title(text)
    return fig


def _one(data):
    DRAWN.append("one")
    return _titled(f"n = {data.cell('one.t', 'n', {'k': 'a'})[0]}")


def _listing(data):
    DRAWN.append("listing")
    return _titled(" ".join(data.experiments))


def _optional(data):
    DRAWN.append("optional")
    try:
        shown = data.value("three.ratio")["value"]
    except SiteDataError:
        shown = "none"
    return _titled(f"three: {shown}")


def _labelled(data):
    DRAWN.append("labelled")
    data.table("one.t")
    return _titled(i18n._("bars", "a test figure"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty figure cache, three figures registered, site_data with experiments one and two."""
    if not figures.REGISTRY:
        figures._load_all()
    monkeypatch.setattr(cache_module, "CACHE", tmp_path / "cache")
    for name, fn in (("one.bars", _one), ("one.listing", _listing), ("one.optional", _optional)):
        monkeypatch.setitem(figures.REGISTRY, name, fn)
    monkeypatch.setitem(figures.REGISTRY, "one.labelled", _labelled)
    DRAWN.clear()
    _write(tmp_path / "data", "one", 1)
    _write(tmp_path / "data", "two", 2)
    return tmp_path / "data"


def _write(root: Path, name: str, n: int) -> None:
    write_data(root, name, {"t": [{"k": "a", "n": n}]}, {"ratio": n / 2})


def _svg(root: Path, name: str) -> str:
    return figures.render_figure(name, SiteData(root))  # a new reading, as each build makes


def test_an_unchanged_figure_is_read_from_the_cache_byte_for_byte(cache):
    first = _svg(cache, "one.bars")
    assert _svg(cache, "one.bars") == first and "n = 1" in first
    assert DRAWN == ["one"]


def test_a_change_to_another_experiment_or_a_new_one_draws_the_figure_not_again(cache):
    _svg(cache, "one.bars")
    _write(cache, "two", 20)
    _write(cache, "three", 3)
    _svg(cache, "one.bars")
    assert DRAWN == ["one"]


def test_a_change_to_the_experiment_it_read_draws_it_again_from_the_new_data(cache):
    assert "n = 1" in _svg(cache, "one.bars")
    _write(cache, "one", 7)
    assert "n = 7" in _svg(cache, "one.bars")
    assert DRAWN == ["one", "one"]
    _write(cache, "one", 1)  # the first data again: its figure is still kept
    assert "n = 1" in _svg(cache, "one.bars") and DRAWN == ["one", "one"]


def test_a_figure_that_lists_the_experiments_is_drawn_again_when_one_is_added(cache):
    assert "one two" in _svg(cache, "one.listing")
    _write(cache, "three", 3)
    assert "one three two" in _svg(cache, "one.listing")
    assert DRAWN == ["listing", "listing"]


def test_a_figure_that_asked_for_a_missing_experiment_is_drawn_again_when_it_appears(cache):
    assert "three: none" in _svg(cache, "one.optional")
    _write(cache, "three", 3)
    assert "three: 1.5" in _svg(cache, "one.optional")
    assert DRAWN == ["optional", "optional"]


def test_its_own_code_changed_draws_it_again(cache, monkeypatch):
    _svg(cache, "one.bars")
    monkeypatch.setattr(cache_module, "code_key", lambda draw: "another")
    _svg(cache, "one.bars")
    assert DRAWN == ["one", "one"]


def test_a_record_of_its_reads_cut_short_draws_it_again(cache):
    _svg(cache, "one.bars")
    (record,) = (cache_module.CACHE / "en").glob("one.bars.*.reads.json")
    record.write_text('{"experiments": ["one"', encoding="utf-8")
    assert "n = 1" in _svg(cache, "one.bars")
    assert DRAWN == ["one", "one"]


def _catalog(folder: Path, entries: dict[str, str]) -> None:
    catalog = Catalog(locale="gl")
    for message, translation in entries.items():
        catalog.add(message, translation)
    folder.mkdir(exist_ok=True)
    with (folder / "gl.po").open("wb") as f:
        write_po(f, catalog)


@pytest.fixture
def galician(cache, tmp_path):
    """The Galician edition, its catalog in a folder of the test's own."""
    before = i18n.LOCALES
    i18n.use_catalogs(tmp_path / "locales")
    try:
        with edition("gl"):
            yield tmp_path / "locales"
    finally:
        i18n.use_catalogs(before)


def test_a_message_added_to_the_catalog_draws_no_figure_again_but_its_own_changed_does(cache, galician):
    _catalog(galician, {"bars": "barras"})
    assert "barras" in _svg(cache, "one.labelled")
    _catalog(galician, {"bars": "barras", "another message": "outra mensaxe"})
    i18n.use_catalogs(galician.parent)  # the catalogs read again, as a new build reads them
    i18n.use_catalogs(galician)
    assert "barras" in _svg(cache, "one.labelled") and DRAWN == ["labelled"]
    _catalog(galician, {"bars": "columnas", "another message": "outra mensaxe"})
    i18n.use_catalogs(galician.parent)
    i18n.use_catalogs(galician)
    assert "columnas" in _svg(cache, "one.labelled")
    assert DRAWN == ["labelled", "labelled"]
