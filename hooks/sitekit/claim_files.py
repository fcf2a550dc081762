"""Claims defined once, by name, beside the experiment they read.

Each experiment's claims are a TOML file in its package,
``measure/experiments/<experiment>/claims.toml`` (the folder is ``extra: claims`` in
mkdocs.yml; the hooks read the files as data and never import ``measure``)::

    [generated_token_costlier]
    check = "prefill_decode.split_ratio > 1"
    hardware = true          # a timing: may not hold on another machine (default false)
    note = "for authors"     # optional

The claim's id is ``<experiment>.<name>``. A page names it and writes its own sentence,
``{{ claim('prefill_decode.generated_token_costlier', 'A generated token cost more') }}``,
or branches on it, ``<!-- if prefill_decode.generated_token_costlier -->``; every
edition names the same ids. A claim that reads two experiments lives with the one it
is about. A file that is no TOML, a name defined twice, an unknown key or an expression
that does not parse fails the build naming the file; so does an unknown id on a page,
and a claim that no page uses (render.py), since a claim nobody reads goes stale.
"""

from __future__ import annotations

import ast
import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from sitekit import escape
from sitekit.claim_syntax import ClaimError, parse, supported

NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
ID = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\Z")
KEYS = ("check", "hardware", "note")
MAX_FILE_CHECK = 4_000  # characters of a check as written (indented over lines); its one-line form keeps parse's bound


@dataclass(frozen=True)
class Claim:
    id: str  # <experiment>.<name>
    check: str  # the expression as written in the file
    hardware: bool = False
    note: str = ""
    source: str = ""  # the file that defines it, for messages

    @property
    def expression(self) -> str:
        """The check on one line, as evaluated and shown: as written, or, when written
        over several lines, as Python writes its syntax tree back."""
        if "\n" not in self.check:
            return self.check
        return ast.unparse(parse(self.check, limit=MAX_FILE_CHECK))


@dataclass
class ClaimBook:
    """Every claim of a build, by id; ``folder`` is where they are defined, for messages."""

    claims: dict[str, Claim] = field(default_factory=dict)
    folder: str = "measure/experiments"

    def get(self, ref: object) -> Claim:
        if not isinstance(ref, str) or not ID.match(ref):
            shown = escape.cut(repr(ref), 120, note=False)
            raise ClaimError(
                f"{shown} is no claim id: a page names a claim as <experiment>.<name>, "
                f"defined in {self.folder}/<experiment>/claims.toml"
            )
        if ref not in self.claims:
            exp, name = ref.split(".")
            near = difflib.get_close_matches(ref, list(self.claims), n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ClaimError(f"unknown claim {ref!r}: {self.folder}/{exp}/claims.toml defines no {name!r}{hint}")
        return self.claims[ref]


def read_file(path: Path, experiment: str, shown: str, calls: frozenset[str]) -> list[Claim]:
    """The claims of one file, each checked: its name, its keys, its types, its expression."""
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ClaimError(f"{shown}: not a claims file: {e}") from None
    out = []
    for name, entry in table.items():
        where = f"{shown}: [{name}]"
        if not NAME.match(name):
            raise ClaimError(f"{where}: a claim's name is snake_case (a-z, 0-9, _), starting with a letter")
        if not isinstance(entry, dict):
            raise ClaimError(f'{where}: a claim is a table with check = "...", not {type(entry).__name__}')
        unknown = sorted(set(entry) - set(KEYS))
        if unknown:
            raise ClaimError(f"{where}: unknown key {', '.join(map(repr, unknown))}; a claim has {', '.join(KEYS)}")
        check, hardware, note = entry.get("check"), entry.get("hardware", False), entry.get("note", "")
        if not isinstance(check, str) or not check.strip():
            raise ClaimError(f"{where}: check must be the claim's expression, as text")
        if not isinstance(hardware, bool) or not isinstance(note, str):
            raise ClaimError(f"{where}: hardware is true or false, note is text")
        claim = Claim(f"{experiment}.{name}", check.strip(), hardware, note, shown)
        try:
            supported(parse(claim.check, limit=MAX_FILE_CHECK), calls)
            parse(claim.expression)
        except ClaimError as e:
            raise ClaimError(f"{where}: {e}") from None
        out.append(claim)
    return out


def load(folder: Path, root: Path, calls: frozenset[str]) -> ClaimBook:
    """Every ``<folder>/<experiment>/claims.toml``; ``root`` only shortens the paths shown."""
    if not folder.is_dir():
        raise ClaimError(f"claims folder {folder} does not exist (extra: claims in mkdocs.yml)")
    shown_folder = _relative(folder, root)
    book = ClaimBook(folder=shown_folder)
    for path in sorted(folder.glob("*/claims.toml")):
        shown = _relative(path, root)
        if not NAME.match(path.parent.name):
            raise ClaimError(f"{shown}: {path.parent.name!r} is no experiment's name")
        # an id is its folder's name and a name the TOML file defines once (TOML refuses a second)
        book.claims.update((c.id, c) for c in read_file(path, path.parent.name, shown, calls))
    return book


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
