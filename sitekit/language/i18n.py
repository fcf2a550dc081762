"""The words of the site's generated parts in the page's language: table headers and
captions, units, provenance, claims' badges, figure labels, the calculator's messages.

The catalogs are gettext files, ``hooks/locales/<language>.po``, read with Babel when the
site is built; the English text is the message id. A message without a translation
shows in English and is reported at the end of that edition's build, which fails
``mkdocs build --strict``: an edition cannot silently mix languages. ``make messages``
brings every catalog's list of messages up to date with what a build asks for (Babel's
catalog update: new messages added empty, vanished ones dropped).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from sitedata import wording
from sitekit.language import typed_numbers
from sitekit.language.catalog_entries import Entries, Entry

PACKAGE = Path(__file__).resolve().parents[1]  # sitekit
HOOKS = PACKAGE.parent / "hooks"  # the MkDocs hooks that drive it, and the catalogs
LOCALES = HOOKS / "locales"
DEFAULT = "en"
# A fixed date in the catalogs' headers: a catalog changes only when its messages do.
_STAMP = datetime(2026, 1, 1, tzinfo=UTC)
_HEADER = (
    "# {language} texts of the site's generated parts: table headers and captions, units,\n"
    "# provenance, claims, figure labels, the calculator's messages. The message id is the\n"
    "# English text; `make messages` updates the list, see sitekit/language/i18n.py."
)

_language = DEFAULT
_catalogs: dict[str, Entries] = {}
asked: dict[tuple[str | None, str], set[str]] = defaultdict(set)  # (context, message) -> where asked
missing: dict[str, set[str]] = defaultdict(set)  # language -> messages shown in English
typed: dict[str, set[str]] = defaultdict(set)  # language -> translations that type a number (not used)
# Markup a translation may carry only where its English message has the same: HTML, a
# Markdown link or code, a marker's braces. A catalog is a contributor's text: one that
# adds any of these is refused (never used, and the build fails naming it), so nothing
# of a catalog becomes markup on a page, in a figure or in the calculator.
MARKUP = ("<", ">", "&", "](", "`", "javascript:", "{{", "}}")
unsafe: dict[str, set[str]] = defaultdict(set)  # language -> translations that add markup (not used)


def markup_added(message, translation) -> list[str]:
    """The markup ``translation`` carries beyond its English ``message`` (each may be a
    plural's tuple of forms)."""
    english = " ".join(message) if isinstance(message, (tuple, list)) else message
    forms = translation if isinstance(translation, (tuple, list)) else (translation,)
    return sorted({t for form in forms if form for t in MARKUP if form.count(t) > english.count(t)})


# The gettext context of a unit written after a number ("46 080 tokens"): the form a
# language puts after a count can differ from a column header's (Czech: "tokeny" heads a
# column, "46 080 tokenů" counts).
COUNT = "after a number"
# English's unit after exactly one ("1 token"): the catalogs' ids are the general forms,
# and English has no catalog. A test keeps it to the units the catalogs list.
ENGLISH_ONE = {
    "FLOP": "FLOP",
    "FLOP/byte": "FLOP/byte",
    "GFLOP/s": "GFLOP/s",
    "GB/s": "GB/s",
    "GiB": "GiB",
    "MACs": "MAC",
    "MiB": "MiB",
    "bits": "bit",
    "bytes": "byte",
    "contexts": "context",
    "dimensions": "dimension",
    "forward passes": "forward pass",
    "layers": "layer",
    "lengths": "length",
    "levels": "level",
    "matrices": "matrix",
    "ms": "ms",
    "parameters": "parameter",
    "positions": "position",
    "prompts": "prompt",
    "requests": "request",
    "requests/s": "requests/s",
    "rounds": "round",
    "s": "s",
    "slot-steps": "slot-step",
    "slots": "slot",
    "steps": "step",
    "tensors": "tensor",
    "threads": "thread",
    "tokens": "token",
    "tokens/s": "tokens/s",
    "users": "user",
    "values": "value",
    "µs": "µs",
}


def set_language(language: str) -> None:
    global _language
    _language = language


def language() -> str:
    return _language


def edition_prefix() -> str:
    """Where this edition's own files (its figures) go in the site: "" for English,
    "gl/" for Galician, beside the pages of that edition."""
    return "" if _language == DEFAULT else f"{_language}/"


def use_catalogs(folder: Path) -> None:
    """Read the catalogs from ``folder`` (the built project's ``hooks/locales``) from now on."""
    global LOCALES
    if Path(folder) != LOCALES:
        LOCALES = Path(folder)
        _catalogs.clear()


def catalog_path(language: str) -> Path:
    return LOCALES / f"{language}.po"


def translations(language: str) -> dict[Entry, str]:
    """(context, message id) -> translation, the entries of the language's catalog that
    are translated and not marked fuzzy."""
    if language not in _catalogs:
        path = catalog_path(language)
        found: dict[str, str] = {}
        if path.exists():
            with path.open("rb") as f:
                for m in read_po(f, locale=language):
                    if not (m.id and m.string and not m.fuzzy):
                        continue
                    markup = markup_added(m.id, m.string)
                    if markup:  # reported, and the entry is not used
                        unsafe[language].add(f"{m.id!r} adds {' '.join(markup)}")
                        continue
                    added = typed_numbers.added_in_translation(m.id, m.string)
                    if added:  # a catalog types no number: reported, and the entry is not used
                        typed[language].add(f"{m.id!r} -> {m.string!r} types {', '.join(added)}")
                        continue
                    found[(m.context, m.id)] = m.string
        _catalogs[language] = Entries(found)
    return _catalogs[language]


def _(message: str, where: str = "", context: str | None = None) -> str:
    """``message`` in the current language. Placeholders in braces are filled by the
    caller after translation (``_("{n} threads").format(n=2)``), so a translation can
    move them where its grammar wants them. A number the message carries as English
    writes it ("at 4,096") is not the catalog's to type: it is lifted out before the
    catalog is asked and written back as the language writes it."""
    if not message or not message.strip():
        return message
    message, numbers = typed_numbers.lift(message)
    asked[(context, message)].add(where)
    found = message if _language == DEFAULT else translations(_language).get((context, message))
    if found is None:
        missing[_language].add(message)
        found = message
    return typed_numbers.write_back(found, numbers)


def known(text: str) -> str | None:
    """The catalog's translation of ``text`` in the current edition, where it has one: for
    text that is shown translated when the catalog knows it and as written otherwise (a
    name), so it is never asked. None in English."""
    if _language == DEFAULT:
        return None
    found = translations(_language)
    return found.get((None, text)) or found.get((None, text.strip()))


def count_word(word: str, category: str) -> str:
    """A unit ``word`` (its general form, "tokens") as the language writes it after a
    number of CLDR plural ``category`` (one, few, many, other; formatting.plural_category):
    the catalog's entry in context "after a number: <category>", else the general one's.
    `make messages` lists each form the language has for every unit asked here."""
    general = _(word, "unit", context=COUNT)
    forms = {"other": general}
    for tag in sorted(Locale.parse(_language).plural_form.tags):
        if _language == DEFAULT:
            forms[tag] = ENGLISH_ONE.get(word, word) if tag == "one" else general
            continue
        found = translations(_language).get((f"{COUNT}: {tag}", word))
        if found is None:
            missing[_language].add(f"{word} ({tag})")
        forms[tag] = found or general
    return forms.get(category, general)


def written_in_code() -> dict[str, set[str]]:
    """Every ``_("...")`` whose message is a literal in the hooks' code, asked for by this
    build or not: a claim's failure note or a figure's label for data this run did not
    produce must stay in the catalogs for the run that does."""
    import ast

    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted((*PACKAGE.rglob("*.py"), *HOOKS.glob("*.py"))):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and (
                    isinstance(node.func, ast.Name)
                    and node.func.id == "_"
                    or isinstance(node.func, ast.Attribute)
                    and node.func.attr == "_"
                )
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value.strip()
            ):
                found[node.args[0].value].add(path.stem)
    return found


def _catalog_on_disk(lang: str) -> Catalog:
    """The language's catalog as it is now, or an empty one where there is none yet."""
    path = catalog_path(lang)
    if not path.exists():
        return Catalog(locale=lang, project="site", fuzzy=False)
    with path.open("rb") as f:
        return read_po(f, locale=lang)


def _translated_data_words(catalogs: Iterable[Catalog]) -> set[str]:
    """The data words the catalogs already translate. A run writes some words only now
    and then (the label of its fastest or closest variant, which noise may change between
    two runs): once translated, a word stays for the run that writes it again."""
    return {
        m.id
        for catalog in catalogs
        for m in catalog
        if m.id and m.string and not m.context and ("data", None) in m.locations
    }


def update_catalogs(languages: list[str], words: Iterable[str] = ()) -> dict[str, int]:
    """Rewrite every catalog's message list to what this build asked for and to every
    ``words`` of site_data (shown on a page or not yet) or data word already translated,
    keeping the translations it already has. Returns the count of untranslated messages
    per language."""
    catalogs = {lang: _catalog_on_disk(lang) for lang in languages}
    everything = {k: v for k, v in asked.items() if not (k[0] or "").startswith(f"{COUNT}: ")}
    for word in (*words, *_translated_data_words(catalogs.values())):
        everything.setdefault((None, word), set()).add("data")
    for message, places in written_in_code().items():
        everything.setdefault((None, message), set()).update(places)
    for template in wording.TEMPLATES:  # every sentence a run may record, recorded by this run or not
        everything.setdefault((None, template), set()).add("recorded")
    for unit in ENGLISH_ONE:  # every unit counted, in every form (a recorded sentence's only in an edition)
        everything.setdefault((COUNT, unit), set()).add("unit")
    lifted: dict[tuple[str | None, str], set[str]] = defaultdict(set)
    for (context, message), places in everything.items():  # as _ asks for it: its numbers lifted out
        lifted[(context, typed_numbers.lift(message)[0])] |= places
    everything = lifted
    LOCALES.mkdir(exist_ok=True)
    empty = {}
    for lang in languages:
        # a unit after a number, once more in each plural form the language has (count_word)
        forms = {
            (f"{COUNT}: {tag}", message): places
            for (context, message), places in everything.items()
            if context == COUNT
            for tag in Locale.parse(lang).plural_form.tags
        }
        template = Catalog(locale=None, project="site", fuzzy=False, creation_date=_STAMP)
        for (context, message), places in sorted(
            {**everything, **forms}.items(), key=lambda kv: (kv[0][1], kv[0][0] or "")
        ):
            where = [(p.replace(" ", "-"), None) for p in sorted(p for p in places if p)]
            template.add(message, locations=where, context=context)
        catalog = catalogs[lang]
        catalog.update(template, no_fuzzy_matching=True)
        catalog.revision_date = catalog.creation_date = _STAMP
        catalog.header_comment = _HEADER.format(language=catalog.locale.english_name)
        catalog.last_translator = catalog.language_team = ""
        for m in catalog:  # the site fills messages with str.format: a "95 %" is no %-format
            m.flags.discard("python-format")
        with catalog_path(lang).open("wb") as f:
            write_po(f, catalog, width=100, omit_header=False, ignore_obsolete=True, sort_output=True)
        empty[lang] = sum(1 for m in catalog if m.id and not m.string)
    _catalogs.clear()
    return empty
