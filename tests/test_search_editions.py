"""Search per edition: the one index of all editions split by edition, worked by hand."""

from tests.conftest import hook

_search_editions = hook("search_editions")
LUNR_FILES, language_script, split_index = (
    _search_editions.LUNR_FILES,
    _search_editions.language_script,
    _search_editions.split_index,
)

INDEX = {
    "config": {"lang": ["en", "es", "it"], "separator": "[\\s\\-]+", "pipeline": ["stopWordFilter"]},
    "docs": [
        {"location": "", "title": "Home", "text": "quantization"},
        {"location": "kv-cache/#a", "title": "A", "text": "cache"},
        {"location": "gl/", "title": "Inicio", "text": "cuantización"},
        {"location": "gl/kv-cache/#a", "title": "A", "text": "caché"},
        {"location": "es/kv-cache/", "title": "La caché", "text": "cuantización"},
        {"location": "glossary/", "title": "A page whose name starts like an edition", "text": ""},
    ],
}


def test_each_edition_gets_its_own_pages_relative_to_its_root():
    split = split_index(INDEX, "en", ["gl", "es", "it", "cs"])
    assert [d["location"] for d in split["en"]["docs"]] == ["", "kv-cache/#a", "glossary/"]
    assert [d["location"] for d in split["gl"]["docs"]] == ["", "kv-cache/#a"]
    assert [d["title"] for d in split["es"]["docs"]] == ["La caché"]
    assert split["it"]["docs"] == [] and split["cs"]["docs"] == []
    # every page in exactly one index
    assert sum(len(i["docs"]) for i in split.values()) == len(INDEX["docs"])


def test_each_index_names_its_editions_own_language_and_keeps_the_rest():
    split = split_index(INDEX, "en", ["gl", "es", "it", "cs"])
    langs = {lang: i["config"]["lang"] for lang, i in split.items()}
    assert langs == {lang: [f"edition_{lang}"] for lang in ("en", "gl", "es", "it", "cs")}
    # the edition's plugin sets the whole pipeline: the theme removes none of it
    assert all(i["config"]["pipeline"] == ["stemmer", "stopWordFilter", "trimmer"] for i in split.values())
    assert all(i["config"]["separator"] == "[\\s\\-]+" for i in split.values())
    assert INDEX["config"]["lang"] == ["en", "es", "it"]  # the input is not changed


def test_each_editions_language_file_holds_its_stemmer_and_registers_the_edition(tmp_path):
    (tmp_path / LUNR_FILES).mkdir(parents=True)
    (tmp_path / LUNR_FILES / "lunr.es.min.js").write_text("/* the Spanish stemmer */", encoding="utf-8")
    spanish = language_script(tmp_path, "es")
    assert spanish.startswith("/* the Spanish stemmer */") and "lunr.Index.prototype.query" in spanish
    assert spanish.rstrip().endswith('lunr.edition("edition_es", {"language": "es", "stemmer": "es"});')
    galician = language_script(tmp_path, "gl")  # Spanish's stemmer, Galician's stop words
    assert galician.startswith("/* the Spanish stemmer */") and '"stopWords": ["a", "o"' in galician
    czech = language_script(tmp_path, "cs")  # no lunr-languages file: the stemmer is the script's own
    assert "the Spanish stemmer" not in czech and '"stemmer": "cs"' in czech
