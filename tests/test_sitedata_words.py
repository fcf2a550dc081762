"""Words for a reader in site_data (a method's name, a verdict, a reason): declared per
column and value in the experiments' code (``words=True``), recorded in meta.json, shown
in every edition's language through the catalogs. Each declared column exists in the
committed data, each of its distinct texts has a translation in every catalog, and the
catalogs' update asks for every one of them, shown on a page or not."""

from __future__ import annotations

import pytest
from babel.messages.pofile import read_po, write_po

from measure import registry
from sitedata import wording
from sitekit.language import i18n, recorded
from sitekit.rendering.pagedata import SiteData
from tests.conftest import LANGUAGES, REPO

DATA = SiteData(REPO / "site_data")


def _declared() -> list[tuple[str, str | None, str]]:
    """(experiment, table or None for a value, name) of everything declared words."""
    out = []
    for name in registry.EXPERIMENTS:
        mod = registry.load(name)
        out += [(name, t.name, c.name) for t in mod.TABLES for c in t.columns if c.words]
        out += [(name, None, v.name) for v in mod.VALUES if v.words]
    return out


def test_every_declared_words_column_and_value_exists_and_says_so():
    declared = _declared()
    assert len(declared) >= 44
    for exp, table, name in declared:
        if table is None:
            assert DATA.value(f"{exp}.{name}")["words"] is True, (exp, name)
        else:
            assert DATA.table(f"{exp}.{table}").column(name)["words"] is True, (exp, table, name)


def test_what_the_data_declares_words_the_code_does():
    declared = set(_declared())
    for exp in DATA.experiments:
        meta = DATA.meta(exp)
        stated = {(exp, t, c["name"]) for t, tm in meta["tables"].items() for c in tm["columns"] if c["words"]}
        stated |= {(exp, None, v) for v, vm in meta["values"].items() if vm["words"]}
        assert stated == {d for d in declared if d[0] == exp}, exp


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_word_in_the_data_is_translated(language):
    with i18n.catalog_path(language).open("rb") as f:
        translated = {m.id for m in read_po(f, locale=language) if m.id and m.string and not m.fuzzy and not m.context}
    missing = sorted(DATA.words() - translated)
    assert not missing, f"{language}: {len(missing)} words of site_data untranslated (make messages): {missing[:10]}"


def test_the_catalogs_update_asks_for_every_word(tmp_path, monkeypatch):
    words = DATA.words()
    assert {"cached", "recompute", "does not fit"} <= words  # words every run writes
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    monkeypatch.setattr(i18n, "asked", {})
    monkeypatch.setattr(i18n, "written_in_code", dict)
    i18n.update_catalogs(["gl"], words=words)
    with (tmp_path / "gl.po").open("rb") as f:
        ids = {m.id for m in read_po(f, locale="gl") if m.id}
    # and every sentence a run may record, and every unit a count is written with (in each form)
    assert ids == words | set(wording.TEMPLATES) | set(i18n.ENGLISH_ONE)


def test_a_text_is_translated_only_where_meta_json_says_words():
    try:
        i18n.set_language("gl")
        assert recorded.data_text("cached", {"words": True}) == "con caché"
        assert recorded.data_text("cached", {"words": False}) == "cached"
        assert recorded.data_text(3, {"words": True}) == 3
    finally:
        i18n.set_language(i18n.DEFAULT)


def test_a_translated_data_word_outlives_a_run_that_does_not_write_it(tmp_path, monkeypatch):
    """A label written only by some runs (the closest variant's) keeps its translation
    through a run without it; a data word nobody translated is not kept."""
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    monkeypatch.setattr(i18n, "asked", {})
    monkeypatch.setattr(i18n, "written_in_code", dict)
    i18n.update_catalogs(["gl"], words={"cached", "int4, group 64", "never translated"})
    with (tmp_path / "gl.po").open("rb") as f:
        catalog = read_po(f, locale="gl")
    catalog.get("cached").string = "con caché"
    catalog.get("int4, group 64").string = "int4, grupos de 64"
    with (tmp_path / "gl.po").open("wb") as f:
        write_po(f, catalog)
    i18n.update_catalogs(["gl"], words={"cached"})
    with (tmp_path / "gl.po").open("rb") as f:
        kept = {
            m.id: m.string for m in read_po(f, locale="gl") if m.id and m.id not in wording.TEMPLATES and not m.context
        }
    assert kept == {"cached": "con caché", "int4, group 64": "int4, grupos de 64"}
