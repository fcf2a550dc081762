"""Editions that cannot silently fall behind their English page.

``hooks/locales/editions.lock`` records, for every edition page, the English text it translates:
one line ``<language> <page> <hash>``, the hash of the English page's source when the
edition last followed it. When the English page changes and the edition's line does not,
``check`` names the page and the English paragraphs that changed since, read from the
English page's history in git (a paragraph is a block between blank lines).

A translator who has brought an edition up to date states it with

    make editions PAGES=kv-cache.md LANGS=gl      # or every page, every language

which writes the current English hash into the edition's line. The test suite runs
``check`` (tests/test_editions_follow.py), so CI fails while an edition is behind.

A page ``make section`` wrote follows nothing yet: its editions are the English page, and
their lines hold ``-`` (FOLLOWS_NOTHING) instead of a hash. ``check`` names each of them
and what to do, and ``untranslated`` every other placeholder of that kind, marked
UNTRANSLATED: a nav title in mkdocs.yml, a catalog entry holding its English text.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LOCK = ROOT / "hooks" / "locales" / "editions.lock"
CONFIG = ROOT / "mkdocs.yml"
LOCALES = ROOT / "hooks" / "locales"
FOLLOWS_NOTHING = "-"  # a lock line's hash for an edition make section wrote in English
UNTRANSLATED = "make section: not translated yet"  # the mark on its other placeholders


def editions(config: Path = CONFIG) -> tuple[str, ...]:
    """The editions beside English, as the i18n plugin in mkdocs.yml lists them: the one
    place the site's languages are written."""
    project = yaml.safe_load(config.read_text(encoding="utf-8"))
    (i18n,) = [plugin["i18n"] for plugin in project["plugins"] if isinstance(plugin, dict) and "i18n" in plugin]
    return tuple(lang["locale"] for lang in i18n["languages"] if not lang.get("default"))


LANGUAGES = editions()


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


def english_pages(docs: Path = DOCS) -> list[str]:
    return sorted(p.name for p in docs.glob("*.md") if p.suffixes == [".md"])


def read_lock(lock: Path = LOCK) -> dict[tuple[str, str], str]:
    out = {}
    if lock.exists():
        for n, line in enumerate(lock.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 3:
                raise ValueError(f"{lock.name}, line {n}: expected '<language> <page> <hash>', got {line!r}")
            out[(parts[0], parts[1])] = parts[2]
    return out


def write_lock(entries: dict[tuple[str, str], str], lock: Path = LOCK) -> None:
    lines = ["# The English text each edition page translates (sitekit/language/editions.py): make editions"]
    lines += [f"{lang} {page} {h}" for (lang, page), h in sorted(entries.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
    lock.write_text("\n".join(lines) + "\n", encoding="utf-8")


def stamp(pages: list[str], languages: list[str], docs: Path = DOCS, lock: Path = LOCK) -> int:
    """Record that ``languages`` of ``pages`` follow the current English; returns lines written."""
    entries = read_lock(lock)
    count = 0
    for page in pages:
        english = (docs / page).read_text(encoding="utf-8")
        for lang in languages:
            if (docs / page.replace(".md", f".{lang}.md")).exists():
                entries[(lang, page)] = fingerprint(english)
                count += 1
    write_lock(entries, lock)
    return count


def _old_english(page: str, wanted: str, docs: Path) -> str | None:
    """The English page's text whose hash was ``wanted``, from its history in git."""
    rel = (docs / page).resolve().relative_to(ROOT).as_posix() if docs.resolve().is_relative_to(ROOT) else None
    if rel is None:
        return None
    try:
        commits = subprocess.run(
            ["git", "log", "--format=%H", "--", rel], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    for commit in commits:
        shown = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode == 0 and fingerprint(shown.stdout) == wanted:
            return shown.stdout
    return None


def changed_paragraphs(old: str, new: str) -> list[str]:
    """The current English paragraphs that the old text did not have, each cut short."""
    before = set(paragraphs(old))
    return [p[:90] + ("…" if len(p) > 90 else "") for p in paragraphs(new) if p not in before]


def check(docs: Path = DOCS, lock: Path = LOCK) -> list[str]:
    """One line per edition page that does not follow its English page, naming what changed."""
    entries = read_lock(lock)
    problems = []
    for page in english_pages(docs):
        english = (docs / page).read_text(encoding="utf-8")
        now = fingerprint(english)
        for lang in LANGUAGES:
            edition = page.replace(".md", f".{lang}.md")
            if not (docs / edition).exists():
                continue
            recorded = entries.get((lang, page))
            if recorded == FOLLOWS_NOTHING:
                problems.append(
                    f"{edition} follows nothing yet: make section wrote it in English; write it in {lang}, "
                    f"then run make editions PAGES={page} LANGS={lang}"
                )
                continue
            if recorded is None:
                problems.append(f"{edition}: no line in {lock.name}; once it follows {page}, run make editions")
                continue
            if recorded == now:
                continue
            old = _old_english(page, recorded, docs)
            if old is None:
                problems.append(f"{edition}: {page} changed since it was translated (its old text is not in git)")
                continue
            changed = changed_paragraphs(old, english) or ["(paragraphs removed or reordered)"]
            problems.append(f"{edition} is behind {page}, which changed in: " + " | ".join(changed[:5]))
    return problems


def untranslated(config: Path = CONFIG, locales: Path = LOCALES) -> list[str]:
    """Every placeholder make section left in a language's words besides the pages: one
    line each, naming the file, the line and the English text to translate."""
    from babel.messages.pofile import read_po

    found = [
        f"{config.name}:{n}: the nav title {line.split(':')[0].strip()} is not translated yet"
        for n, line in enumerate(config.read_text(encoding="utf-8").splitlines(), 1)
        if UNTRANSLATED in line
    ]
    for lang in editions(config):
        path = locales / f"{lang}.po"
        with path.open("rb") as f:
            found += [
                f"{path.name}:{m.lineno}: {m.id!r} is not translated yet (drop the comment '# {UNTRANSLATED}')"
                for m in read_po(f, locale=lang)
                if m.id and UNTRANSLATED in m.user_comments
            ]
    return found


def pending(lock: Path = LOCK) -> list[str]:
    """The edition pages that follow nothing yet (``<lang> <page>``)."""
    return [f"{lang} {page}" for (lang, page), h in sorted(read_lock(lock).items()) if h == FOLLOWS_NOTHING]


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        problems = check() + untranslated()
        print("\n".join(problems) or "every edition follows its English page")
        return 1 if problems else 0
    if argv[:1] == ["stamp"]:
        pages = [p for p in argv[1].split(",") if p] if len(argv) > 1 and argv[1] else english_pages()
        langs = [x for x in argv[2].split(",") if x] if len(argv) > 2 and argv[2] else list(LANGUAGES)
        unknown = [p for p in pages if not (DOCS / p).exists()] + [x for x in langs if x not in LANGUAGES]
        if unknown:
            print(f"no such page or language: {', '.join(unknown)}", file=sys.stderr)
            return 2
        print(f"{stamp(pages, langs)} edition pages recorded as following their English page")
        return 0
    print("usage: python -m sitekit.language.editions check | stamp [PAGES] [LANGS]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
