"""A catalog's entries as the site reads them, each entry asked for noted while a
``lookups`` block is open: what a figure wrote depends on the catalog through the entries
it asked for alone (figures/cache.py), not on every message the catalog holds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

Entry = tuple[str | None, str]  # (context, message id)
_looking: list[set[Entry]] = []  # the sets of the open ``lookups`` blocks


class Entries(dict):
    """(context, message id) -> translation, each key asked for noted by the open ``lookups``."""

    def get(self, key, default=None):
        _note(key)
        return super().get(key, default)

    def __contains__(self, key) -> bool:
        _note(key)
        return super().__contains__(key)

    def __getitem__(self, key):
        _note(key)
        return super().__getitem__(key)


def _note(key: Entry) -> None:
    for found in _looking:
        found.add(key)


@contextmanager
def lookups() -> Iterator[set[Entry]]:
    """The entries asked for while the block runs, translated or not."""
    found: set[Entry] = set()
    _looking.append(found)
    try:
        yield found
    finally:
        _looking.remove(found)
