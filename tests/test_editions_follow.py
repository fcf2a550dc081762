"""An edition page records the English text it translates; when the English changes and
the edition does not follow, the tests fail naming the page and the changed paragraphs."""

from __future__ import annotations

import subprocess

from sitekit.language import editions


def test_every_edition_follows_its_english_page():
    problems = editions.check()
    assert not problems, "\n".join(problems)


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_changed_english_paragraph_is_caught_and_named(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr(editions, "ROOT", tmp_path)
    lock = docs / "editions.lock"
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    (docs / "p.md").write_text("# Title\n\nFirst paragraph.\n\nSecond paragraph.\n")
    (docs / "p.gl.md").write_text("# Título\n\nPrimeiro.\n\nSegundo.\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "one")
    assert editions.check(docs, lock) == ["p.gl.md: no line in editions.lock; once it follows p.md, run make editions"]
    assert editions.stamp(["p.md"], ["gl"], docs, lock) == 1
    assert editions.check(docs, lock) == []

    (docs / "p.md").write_text("# Title\n\nFirst paragraph.\n\nThe second paragraph, rewritten.\n")
    _git(tmp_path, "commit", "-qam", "two")
    assert editions.check(docs, lock) == ["p.gl.md is behind p.md, which changed in: The second paragraph, rewritten."]
    # the translator follows, and says so
    editions.stamp(["p.md"], ["gl"], docs, lock)
    assert editions.check(docs, lock) == []


def test_a_change_whose_old_text_git_does_not_hold_still_fails(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr(editions, "ROOT", tmp_path)
    lock = docs / "editions.lock"
    (docs / "p.md").write_text("A.\n")
    (docs / "p.es.md").write_text("A.\n")
    editions.stamp(["p.md"], ["es"], docs, lock)
    (docs / "p.md").write_text("B.\n")
    assert editions.check(docs, lock) == ["p.es.md: p.md changed since it was translated (its old text is not in git)"]


def test_nothing_make_section_wrote_in_english_is_left_untranslated():
    """make section writes a nav title and catalog entries holding their English text,
    each marked: one line per mark left names the file and what to translate."""
    problems = editions.untranslated()
    assert not problems, "\n".join(problems)


def test_an_edition_make_section_wrote_says_it_follows_nothing_yet(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    lock = docs / "editions.lock"
    (docs / "p.md").write_text("# Title\n")
    (docs / "p.gl.md").write_text("# Title\n")
    lock.write_text(f"gl p.md {editions.FOLLOWS_NOTHING}\n")
    assert editions.pending(lock) == ["gl p.md"]
    assert editions.check(docs, lock) == [
        "p.gl.md follows nothing yet: make section wrote it in English; write it in gl, "
        "then run make editions PAGES=p.md LANGS=gl"
    ]
    editions.stamp(["p.md"], ["gl"], docs, lock)  # written in Galician, and said so
    assert editions.check(docs, lock) == [] and editions.pending(lock) == []


def test_the_placeholders_left_in_the_nav_and_a_catalog_are_named(tmp_path):
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "plugins:\n  - i18n:\n      languages:\n        - locale: en\n          default: true\n        - locale: gl\n"
        "          nav_translations:\n"
        f'            "Reusing the prompt": "Reusing the prompt"  # {editions.UNTRANSLATED}\n'
    )
    (tmp_path / "gl.po").write_text(
        'msgid ""\nmsgstr ""\n\nmsgid "done"\nmsgstr "feito"\n\n'
        f'# {editions.UNTRANSLATED}\nmsgid "prompt"\nmsgstr "prompt"\n'
    )
    assert editions.untranslated(config, tmp_path) == [
        'mkdocs.yml:8: the nav title "Reusing the prompt" is not translated yet',
        f"gl.po:8: 'prompt' is not translated yet (drop the comment '# {editions.UNTRANSLATED}')",
    ]
