"""What the five editions' build does once (hooks/build_caches.py): the theme's templates
compiled once, and each edition's notebook conversions kept for the next build."""

from __future__ import annotations

import uuid

import jinja2
import pytest

from tests.conftest import DOCS, LANGUAGES, hook

build_caches = hook("build_caches")


def test_a_template_is_compiled_once_for_every_environment_and_again_when_its_source_changes():
    fresh = f"{{# {uuid.uuid4()} #}}"  # a source no earlier test compiled into the shared cache
    sources = {"page.html": fresh + "{{ x }} one"}
    compiled = []

    class Counting(jinja2.Environment):
        def _compile(self, source, filename):
            compiled.append(filename)
            return super()._compile(source, filename)

    def render() -> str:
        env = build_caches.on_env(Counting(loader=jinja2.DictLoader(sources)), config=None, files=None)
        return env.get_template("page.html").render(x=1)

    assert render() == render() == "1 one" and len(compiled) == 1  # a new environment, as each edition's
    sources["page.html"] = fresh + "{{ x }} two"
    assert render() == "1 two" and len(compiled) == 2


@pytest.mark.build
def test_each_edition_keeps_its_notebooks_conversions_for_the_next_build(built_site):
    """mkdocs-jupyter deletes, at the end of a build, each cached conversion that build did
    not use; an edition's build uses its own notebooks only, so in one shared folder every
    edition's build deleted the others' and the next build found none."""
    cache = built_site.parent / "project" / ".cache" / "mkdocs-jupyter"
    editions = {"en": [".ipynb"]} | {lang: [f".{lang}", ".ipynb"] for lang in LANGUAGES}
    notebooks = {lang: sum(p.suffixes == suffixes for p in DOCS.glob("*.ipynb")) for lang, suffixes in editions.items()}
    kept = {lang: len(list((cache / lang).glob("*.json"))) for lang in editions}
    assert min(notebooks.values()) >= 1 and kept == notebooks
