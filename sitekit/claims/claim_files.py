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
is about. The file is read and checked as every such file is (named_files.py, which reads
answers.toml too): a file that is no TOML, a name defined twice, an unknown key or an
expression that does not parse fails the build naming the file; so does an unknown id on
a page, and a claim that no page uses (render.py), since a claim nobody reads goes stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sitekit.claims import named_files
from sitekit.claims.named_files import Book, Kind, one_line


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
        return one_line(self.check, "claim")


class ClaimBook(Book[Claim]):
    """Every claim of a build, by id."""

    kind = Kind(
        word="claim",
        keys={"hardware": (bool, False), "note": (str, "")},
        types="hardware is true or false, note is text",
        unused="name each on the page it checks, or remove it",
        make=Claim,
    )


def load(folder: Path, root: Path, calls: frozenset[str]) -> ClaimBook:
    """Every ``<folder>/<experiment>/claims.toml``; ``root`` only shortens the paths shown."""
    return named_files.load(ClaimBook, folder, root, calls)
