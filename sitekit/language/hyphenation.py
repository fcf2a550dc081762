"""Where a table header's long words may break, in the page's language: a soft hyphen
(U+00AD) at each of the language's hyphenation points (pyphen's dictionaries, those of
LibreOffice), so that a narrow column breaks "předpovězené" as "předpo-vězené" and not
past the page's edge. Browsers hyphenate with ``hyphens: auto`` only where they hold the
language's dictionary; a soft hyphen needs none. The search index drops them again
(hooks/search_editions.py), so that a word is found whole."""

from __future__ import annotations

import re
from functools import cache

import pyphen

SOFT_HYPHEN = "\u00ad"
# Shorter words fit any column the tables give them; breaking them would only look busy.
SHORTEST = 10
_WORD = re.compile(rf"\w{{{SHORTEST},}}")


@cache
def _dictionary(language: str) -> pyphen.Pyphen | None:
    return pyphen.Pyphen(lang=language) if language in pyphen.LANGUAGES else None


def hyphenated(text: str, language: str) -> str:
    """``text`` with soft hyphens in its words of SHORTEST letters or more; unchanged in a
    language pyphen has no dictionary for."""
    found = _dictionary(language)
    if found is None:
        return text
    return _WORD.sub(lambda m: found.inserted(m.group(0), hyphen=SOFT_HYPHEN), text)


def unhyphenated(text: str) -> str:
    return text.replace(SOFT_HYPHEN, "")
