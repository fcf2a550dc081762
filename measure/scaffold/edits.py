"""The project's lists that a new section joins, each edited where it is written, as text
(a comment or the order of what is around it stays as it was), and read back afterwards:

* ``measure/registry.py``: the experiment in ``EXPERIMENTS``, after the one it follows;
* ``mkdocs.yml``: its page in the nav after that experiment's, and a line in each
  edition's ``nav_translations`` holding the English title, marked as not translated yet;
* ``sitekit/sources/works.py``: an empty list of the works its page cites;
* ``hooks/locales/editions.lock``: each edition page, following nothing yet (``-``);
* ``hooks/locales/<lang>.po``: the skeleton's generated texts that a catalog lacks, each
  holding its English text, marked as not translated yet;
* ``tests/prose/numbers.txt``: the numbers of the skeleton's exercises.

``sitekit.language.editions.untranslated`` lists every mark left, and a test fails on it.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from babel.messages.pofile import read_po

from measure.errors import UserError
from measure.scaffold.names import Section, experiments
from sitekit.language.editions import FOLLOWS_NOTHING, UNTRANSLATED


def _replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise UserError(f"{path.name}: cannot find where the new section goes ({old.strip()[:60]!r})")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def registry(root: Path, s: Section, after: str) -> None:
    path = root / "measure" / "registry.py"
    _replace_once(path, f'    "{after}",\n', f'    "{after}",\n    "{s.name}",\n')
    if experiments(root)[experiments(root).index(after) + 1] != s.name:
        raise UserError(f"measure/registry.py: {s.name} did not land after {after}")


def nav(root: Path, s: Section, after: str) -> None:
    path = root / "mkdocs.yml"
    before = yaml.safe_load(path.read_text(encoding="utf-8"))
    after_page = after.replace("_", "-") + ".md"
    titles = [title for item in before["nav"] for title, page in item.items() if page == after_page]
    if len(titles) != 1:
        raise UserError(f"mkdocs.yml: {after_page} is not in the nav once")
    (after_title,) = titles
    text = path.read_text(encoding="utf-8")
    line = re.search(rf"^(\s*)- {re.escape(after_title)}: {re.escape(after_page)}\n", text, re.M)
    if line is None:
        raise UserError(f"mkdocs.yml: no nav line '- {after_title}: {after_page}'")
    indent = line.group(1)
    text = text[: line.end()] + f'{indent}- "{s.nav}": {s.page}\n' + text[line.end() :]
    # each edition's translations: after the line of the page it follows, or at the block's end
    translated = re.compile(rf'^(\s*)"{re.escape(after_title)}": "[^"\n]*"\n', re.M)
    count = 0

    def add(m: re.Match) -> str:
        nonlocal count
        count += 1
        return m.group(0) + f'{m.group(1)}"{s.nav}": "{s.nav}"  # {UNTRANSLATED}\n'

    text = translated.sub(add, text)
    wanted = len(languages(root))
    if count != wanted:
        raise UserError(f"mkdocs.yml: {count} editions translate {after_title!r} in their nav, not {wanted}")
    path.write_text(text, encoding="utf-8")
    written = yaml.safe_load(text)
    assert any(item.get(s.nav) == s.page for item in written["nav"]), "the nav line did not parse back"


def languages(root: Path) -> list[str]:
    """The editions beside English, as the i18n plugin in ``root``'s mkdocs.yml lists them."""
    config = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    (i18n,) = [p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p]
    return [lang["locale"] for lang in i18n["languages"] if not lang.get("default")]


def works(root: Path, s: Section) -> None:
    path = root / "sitekit" / "sources" / "works.py"
    text = path.read_text(encoding="utf-8")
    start = text.index("PAGES: dict[str, tuple[str, ...]] = {")
    end = text.index("\n}\n", start)
    entry = f'    # the works the {s.page} page cites (make section: none yet)\n    "{s.page}": (),'
    path.write_text(text[:end] + "\n" + entry + text[end:], encoding="utf-8")


def lock(root: Path, s: Section, langs: list[str]) -> None:
    path = root / "hooks" / "locales" / "editions.lock"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "".join(f"{lang} {s.page} {FOLLOWS_NOTHING}\n" for lang in langs), encoding="utf-8")


def catalogs(root: Path, messages: dict[str, str], langs: list[str]) -> None:
    """Each (message: where it is asked) that a catalog lacks, appended to it with the
    English text as its placeholder (`make messages` sorts it in later)."""
    for lang in langs:
        path = root / "hooks" / "locales" / f"{lang}.po"
        with path.open("rb") as f:
            have = {m.id for m in read_po(f, locale=lang) if m.id and not m.context}
        new = [(m, where) for m, where in messages.items() if m not in have]
        entries = "".join(f'\n# {UNTRANSLATED}\n#: {where}\nmsgid "{m}"\nmsgstr "{m}"\n' for m, where in new)
        if entries:
            path.write_text(path.read_text(encoding="utf-8") + entries, encoding="utf-8")


def numbers(root: Path, s: Section) -> None:
    path = root / "tests" / "prose" / "numbers.txt"
    lines = [f"{s.page}  {n}  the number of an exercise in the page's Exercises (a count)" for n in (1, 2)]
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
