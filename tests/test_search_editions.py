"""Search per edition: the one index of all editions split by edition, worked by hand."""

from tests.conftest import hook

split_index = hook("search_editions").split_index

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


def test_each_index_names_its_editions_language_and_keeps_the_rest():
    split = split_index(INDEX, "en", ["gl", "es", "it", "cs"])
    langs = {lang: i["config"]["lang"] for lang, i in split.items()}
    assert langs == {"en": ["en"], "gl": ["es"], "es": ["es"], "it": ["it"], "cs": ["en"]}
    assert all(i["config"]["separator"] == "[\\s\\-]+" for i in split.values())
    assert INDEX["config"]["lang"] == ["en", "es", "it"]  # the input is not changed
