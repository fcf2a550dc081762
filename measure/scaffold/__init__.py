"""``make section NAME=prompt_reuse TITLE="Reusing the prompt" [AFTER=batching]``: a new
section's working skeleton, which builds, tests and measures as it stands.

It writes, from ``templates/`` (``__NAME__``, ``__TITLE__``, ``__NAV__`` and ``__PAGE__``
filled in):

* ``measure/experiments/<name>/``: ``__init__.py`` (a Config with its profiles, ``run``
  timing one prefill at two prompt lengths), ``tables.py`` (one table, two values),
  ``claims.toml`` (two claims decided three ways against the margin) and
  ``answers.toml`` (two answers);
* ``sitekit/figures/pages/<name>.py``: one figure of that table;
* ``docs/<page>``: the English page, with the table, the claims in their branches, the
  figure, two exercises and the references; and ``docs/<page>.<lang>.md`` for each
  edition, a copy of it in English that follows nothing yet;

and joins the project's lists (``measure/scaffold/edits.py``): the registry, the nav and
its translations, the works' pages, the editions' lock, the catalogs and the numbers the
prose may type. Whatever waits for a translator is marked, and one test lists it
(``sitekit.language.editions.untranslated``). Nothing is written until the name and the
title have passed their checks; ``--root`` writes into another copy of the project (the
tests' own).
"""

from __future__ import annotations

from pathlib import Path

from measure.errors import UserError
from measure.scaffold import edits
from measure.scaffold.names import Section, experiments, section

TEMPLATES = Path(__file__).resolve().parent / "templates"
WITHOUT_PAGE = ("chapter",)  # as measure/registry.py says: the experiments no section follows
# The texts the skeleton's table and figure ask the catalogs for (``__NAV__`` filled in),
# with where each is asked, as `make messages` records it.
MESSAGES = {
    "__TITLE__": "experiment-title",
    "__NAV__: one prefill by prompt length": "table-title",
    "prompt": "column-label",
    "prefill": "column-label",
    "prompt tokens per second": "column-label",
    "prompt (tokens)": "__NAME__",
    "prefill (ms)": "__NAME__",
}


def _fill(text: str, s: Section) -> str:
    for key, value in (("__NAME__", s.name), ("__TITLE__", s.title), ("__NAV__", s.nav), ("__PAGE__", s.page)):
        text = text.replace(key, value)
    return text


def write(root: Path, name: str, title: str, after: str | None = None) -> list[Path]:
    """Write the skeleton of section ``name`` into the project at ``root``; returns the
    files written or edited."""
    s = section(name, title, root)
    known = experiments(root)
    sections = [e for e in known if e not in WITHOUT_PAGE]
    after = after or sections[-1]
    if after not in sections:
        raise UserError(f"AFTER must name a section, one of: {', '.join(sections)}")
    languages = edits.languages(root)
    package = root / "measure" / "experiments" / s.name
    docs = root / "docs"
    files = {
        package / "__init__.py": "experiment_init.py.tmpl",
        package / "tables.py": "experiment_tables.py.tmpl",
        package / "claims.toml": "experiment_claims.toml.tmpl",
        package / "answers.toml": "experiment_answers.toml.tmpl",
        root / "sitekit" / "figures" / "pages" / f"{s.name}.py": "figure.py.tmpl",
        docs / s.page: "page.md.tmpl",
    }
    package.mkdir(parents=True)
    for path, template in files.items():
        path.write_text(_fill((TEMPLATES / template).read_text(encoding="utf-8"), s), encoding="utf-8")
    english = (docs / s.page).read_text(encoding="utf-8")
    for lang in languages:
        note = (
            f"<!-- {edits.UNTRANSLATED}: this edition is the English page, and follows nothing yet "
            f"(hooks/locales/editions.lock). Write it in its language, then: "
            f"make editions PAGES={s.page} LANGS={lang} -->\n"
        )
        (docs / s.page.replace(".md", f".{lang}.md")).write_text(note + english, encoding="utf-8")
    edits.registry(root, s, after)
    edits.nav(root, s, after)
    edits.works(root, s)
    edits.lock(root, s, languages)
    edits.catalogs(root, {_fill(m, s): _fill(w, s) for m, w in MESSAGES.items()}, languages)
    edits.numbers(root, s)
    edited = [
        root / p
        for p in ("measure/registry.py", "mkdocs.yml", "sitekit/sources/works.py", "hooks/locales/editions.lock")
    ]
    edited += [root / "hooks" / "locales" / f"{lang}.po" for lang in languages]
    edited += [root / "tests" / "prose" / "numbers.txt"]
    editions_written = [docs / s.page.replace(".md", f".{lang}.md") for lang in languages]
    return [*files, *editions_written, *edited]


def next_steps(s_name: str) -> str:
    return (
        f"Next: make measure ONLY={s_name} (its data), make site (the five editions), make test-fast; "
        "then replace the skeleton's measurement, page and words with the section's own (AUTHORING.md)."
    )
