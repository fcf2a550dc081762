"""Answers defined once, by name, beside the experiment they read.

An exercise's answer is a number worked out from the data when the page is built, so it
is this run's answer. Each experiment's answers are a TOML file in its package,
``measure/experiments/<experiment>/answers.toml``, beside its claims.toml::

    [weight_macs_at_longest_context]
    value = "kv_cache.weight_macs_per_token * max(column('kv_cache.macs_per_step', 'context'))"
    unit = "MAC"        # optional: the number's unit, as a value's (bytes, x, fraction, ms ...)
    style = "sci"       # optional: how it is written (formatting.format_value; default auto)
    digits = 2          # optional: its digits, where the style takes them

``value`` is an expression in the language of claims (claims.py: values, ``cell``,
``column``, arithmetic and a few functions), written on one line or, in a ``'''``
string, over several. The answer's id is ``<experiment>.<name>``, and a page writes only
that: ``{{ answer('kv_cache.weight_macs_at_longest_context') }}``; every edition names
the same ids in the same order, and writes the number as its locale does. An answer that
reads two experiments lives with the one its exercise is about. The file is read and
checked as a claims file is (named_files.py): a file that is no TOML, a name defined
twice, an unknown key, a key of the wrong type, an unknown style or an expression that
does not parse fails the build naming the file; so does an unknown id on a page, and an
answer that no page uses (render.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sitekit.claims import named_files
from sitekit.claims.claim_syntax import ClaimError
from sitekit.claims.named_files import Book, Kind, one_line
from sitekit.language import formatting


@dataclass(frozen=True)
class Answer:
    id: str  # <experiment>.<name>
    value: str  # the expression as written in the file
    unit: str = ""
    style: str = "auto"
    digits: int | None = None
    source: str = ""  # the file that defines it, for messages

    @property
    def expression(self) -> str:
        """The value on one line, as evaluated: as written, or, when written over several
        lines, as Python writes its syntax tree back."""
        return one_line(self.value, "answer")


def _writable(answer: Answer) -> None:
    """A style and digits the formatting knows, checked when the file is read: a typo
    fails naming the file, not the first page that shows the answer."""
    try:
        formatting.format_value(1.0, answer.unit, style=answer.style, digits=answer.digits)
    except ValueError as e:
        raise ClaimError(str(e)) from None


class AnswerBook(Book[Answer]):
    """Every answer of a build, by id."""

    kind = Kind(
        word="answer",
        keys={"unit": (str, ""), "style": (str, "auto"), "digits": (int, None)},
        types="unit and style are text, digits a whole number",
        unused="name each in the exercise it answers, or remove it",
        make=Answer,
        check=_writable,
    )


def load(folder: Path, root: Path, calls: frozenset[str]) -> AnswerBook:
    """Every ``<folder>/<experiment>/answers.toml``; ``root`` only shortens the paths shown."""
    return named_files.load(AnswerBook, folder, root, calls)
