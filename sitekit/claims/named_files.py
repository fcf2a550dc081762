"""What a page names and a TOML file beside the experiment it reads defines, once, by
name: claims (``claims.toml``, claim_files.py) and answers (``answers.toml``,
answer_files.py), read and checked here alike.

The files live in each experiment's package, ``measure/experiments/<experiment>/`` (the
folder is ``extra: claims`` in mkdocs.yml; the hooks read the files as data and never
import ``measure``). Each table of a file is one definition: its name is snake_case, its
id ``<experiment>.<name>``, and one of its keys an expression over the data, in the
language of claims (claim_syntax.py). A file that is no TOML, a name defined twice, a bad
name, an unknown key, a key of the wrong type or an expression that does not parse fails
the build naming the file; so does an unknown id on a page (with the ids it may have
meant), and a definition that no page names (render.py), since what nobody reads goes
stale.
"""

from __future__ import annotations

import ast
import difflib
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from sitedata.named import EXPRESSION_KEYS
from sitekit.claims.claim_syntax import ClaimError, parse, supported
from sitekit.rendering import escape

NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
ID = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\Z")
# characters of an expression as written (indented over lines); its one-line form keeps parse's bound
MAX_WRITTEN = 4_000

T = TypeVar("T")


def one_line(written: str, what: str) -> str:
    """An expression on one line, as evaluated and shown: as written, or, when written
    over several lines, as Python writes its syntax tree back."""
    if "\n" not in written:
        return written
    return ast.unparse(parse(written, what, MAX_WRITTEN))


def _no_more(entry: Any) -> None:
    """A kind that asks nothing of a definition beyond its keys and its expression."""


@dataclass(frozen=True)
class Kind:
    """One kind of definition: its file, its keys, and the words of its messages."""

    word: str  # "claim": in messages, and in the plural the file's name (claims.toml)
    keys: dict[str, tuple[type, Any]]  # every other key: the one type it takes, its default
    types: str  # those types in words, for a key given another
    unused: str  # what to do with a definition no page names
    make: Callable[..., Any]  # (id=, the expression as written, source=, the other keys) -> the definition
    check: Callable[[Any], None] = _no_more  # what else a definition must satisfy (raises ClaimError)

    @property
    def file(self) -> str:
        return f"{self.word}s.toml"

    @property
    def expression(self) -> str:
        """The key that holds the expression (sitedata.named, which the drift gate reads too)."""
        return EXPRESSION_KEYS[f"{self.word}s"]

    @property
    def a(self) -> str:
        return f"{'an' if self.word[0] in 'aeiou' else 'a'} {self.word}"


@dataclass
class Book(Generic[T]):
    """Every definition of one kind in a build, by id; ``folder`` is where they are
    defined, for messages. A subclass names its ``kind``."""

    entries: dict[str, T] = field(default_factory=dict)
    folder: str = "measure/experiments"
    kind: ClassVar[Kind]

    def get(self, ref: object) -> T:
        word, file = self.kind.word, self.kind.file
        if not isinstance(ref, str) or not ID.match(ref):
            shown = escape.cut(repr(ref), 120, note=False)
            raise ClaimError(
                f"{shown} is no {word} id: a page names {self.kind.a} as <experiment>.<name>, "
                f"defined in {self.folder}/<experiment>/{file}"
            )
        if ref not in self.entries:
            exp, name = ref.split(".")
            near = difflib.get_close_matches(ref, list(self.entries), n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ClaimError(f"unknown {word} {ref!r}: {self.folder}/{exp}/{file} defines no {name!r}{hint}")
        return self.entries[ref]

    def check_used(self, used: set[str]) -> None:
        """A definition no page names is read by nobody and goes stale: one line naming it."""
        unused = sorted(set(self.entries) - used)
        if unused:
            listed = "; ".join(f"{i} ({self.entries[i].source})" for i in unused[:10])
            more = f" and {len(unused) - 10} more" if len(unused) > 10 else ""
            raise ClaimError(
                f"{len(unused)} {self.kind.word}s are defined but used on no page: {listed}{more}; {self.kind.unused}"
            )


def read_file(kind: Kind, path: Path, experiment: str, shown: str, calls: frozenset[str]) -> list:
    """The definitions of one file, each checked: its name, its keys, their types, its expression."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ClaimError(f"{shown}: not {kind.a}s file: {e}") from None
    key = (kind.word, text, experiment, shown, calls)
    if key not in _READ:
        if len(_READ) >= 256:
            _READ.clear()
        _READ[key] = _definitions(kind, text, experiment, shown, calls)
    return list(_READ[key])


# A file's definitions are read again at every build (`mkdocs serve` sees an edit), and the
# five editions are five builds: a file whose text is unchanged is not parsed again. The
# definitions are frozen, so every build may hold the same ones.
_READ: dict[tuple, tuple] = {}


def _definitions(kind: Kind, text: str, experiment: str, shown: str, calls: frozenset[str]) -> tuple:
    word = kind.word
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ClaimError(f"{shown}: not {kind.a}s file: {e}") from None
    out = []
    for name, entry in table.items():
        where = f"{shown}: [{name}]"
        if not NAME.match(name):
            raise ClaimError(f"{where}: {kind.a}'s name is snake_case (a-z, 0-9, _), starting with a letter")
        if not isinstance(entry, dict):
            raise ClaimError(f'{where}: {kind.a} is a table with {kind.expression} = "...", not {type(entry).__name__}')
        known = (kind.expression, *kind.keys)
        unknown = sorted(set(entry) - set(known))
        if unknown:
            raise ClaimError(f"{where}: unknown key {', '.join(map(repr, unknown))}; {kind.a} has {', '.join(known)}")
        written = entry.get(kind.expression)
        if not isinstance(written, str) or not written.strip():
            raise ClaimError(f"{where}: {kind.expression} must be the {word}'s expression, as text")
        # exact types: TOML's true is no whole number of digits, nor 1 a truth
        if any(key in entry and type(entry[key]) is not t for key, (t, _) in kind.keys.items()):
            raise ClaimError(f"{where}: {kind.types}")
        others = {key: entry.get(key, default) for key, (_, default) in kind.keys.items()}
        made = kind.make(id=f"{experiment}.{name}", source=shown, **{kind.expression: written.strip()}, **others)
        try:
            supported(parse(written.strip(), word, MAX_WRITTEN), calls)
            parse(made.expression, word)
            kind.check(made)
        except ClaimError as e:
            raise ClaimError(f"{where}: {e}") from None
        out.append(made)
    return tuple(out)


B = TypeVar("B", bound=Book)


def load(book: type[B], folder: Path, root: Path, calls: frozenset[str]) -> B:
    """Every ``<folder>/<experiment>/<kind>s.toml``; ``root`` only shortens the paths shown."""
    kind = book.kind
    if not folder.is_dir():
        raise ClaimError(f"{kind.word}s folder {folder} does not exist (extra: claims in mkdocs.yml)")
    out = book(folder=_relative(folder, root))
    for path in sorted(folder.glob(f"*/{kind.file}")):
        shown = _relative(path, root)
        if not NAME.match(path.parent.name):
            raise ClaimError(f"{shown}: {path.parent.name!r} is no experiment's name")
        # an id is its folder's name and a name the TOML file defines once (TOML refuses a second)
        out.entries.update((d.id, d) for d in read_file(kind, path, path.parent.name, shown, calls))
    return out


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
