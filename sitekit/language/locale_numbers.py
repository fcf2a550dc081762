"""How the page's locale writes a number: its separators and grouping (Babel, CLDR), and
the two places the site departs from Babel's defaults.

The bottom of the site's number writing: it knows no words, so the catalogs' lookup
(i18n) writes a number with it as ``formatting`` does, and neither imports the other's
caller.
"""

from __future__ import annotations

import functools

from babel import Locale
from babel.numbers import get_decimal_symbol, get_group_symbol, parse_pattern

NBSP = "\u00a0"  # between a number and its unit, and in groups, so that neither breaks a line
# CLDR groups Galician thousands with a dot; the Galician Academy's norms write a space,
# as Czech does: Galician pages group with a no-break space.
_GROUP_OVERRIDE = {"gl": NBSP}
# CLDR's minimum grouping digits, which Babel's formatter does not apply: Spanish leaves a
# four-digit number whole (8295, 12.345), as the RAE's norms write it.
_MIN_GROUPING = {"es": 2}

_locale = "en"


def set_locale(locale: str) -> None:
    global _locale
    _locale = locale


def locale() -> str:
    return _locale


def symbols(locale: str | None = None) -> dict[str, str]:
    """The separators a page of ``locale`` writes numbers with (for the calculator,
    which formats and reads numbers in the browser as its page does)."""
    return dict(_symbols(locale or _locale))


@functools.cache
def _symbols(locale: str) -> dict[str, str]:
    percent = Locale.parse(locale).percent_formats[None].pattern
    return {
        "decimal": get_decimal_symbol(locale),
        "group": _GROUP_OVERRIDE.get(locale, get_group_symbol(locale)),
        "percent": NBSP + "%" if NBSP + "%" in percent else "%",
        "min_grouping": _MIN_GROUPING.get(locale, 1),
    }


def decimal(x: float, pattern: str) -> str:
    """``x`` in a Babel number ``pattern`` ("#,##0.00"), grouped as the locale groups."""
    if abs(x) < 10 ** (2 + _MIN_GROUPING.get(_locale, 1)):
        pattern = pattern.replace("#,##", "")  # too short to group in this locale
    # what format_decimal does, with the pattern and the locale parsed once: a build
    # writes some 70,000 numbers, and parsing them again took most of each one's time
    text = _parsed(pattern).apply(x, _babel_locale(_locale))
    if _locale in _GROUP_OVERRIDE:
        text = text.replace(_babel_group(_locale), _GROUP_OVERRIDE[_locale])
    return text


@functools.cache
def _parsed(pattern: str):
    return parse_pattern(pattern)


@functools.cache
def _babel_locale(locale: str) -> Locale:
    return Locale.parse(locale)


@functools.cache
def _babel_group(locale: str) -> str:
    return get_group_symbol(locale)


def integer(x: int) -> str:
    return decimal(int(x), "#,##0")


def fixed(x: float, decimals: int) -> str:
    """``x`` with exactly ``decimals`` decimals, grouped."""
    return decimal(x, "#,##0." + "0" * decimals if decimals else "#,##0")
