"""Every number on the site is formatted here, once, for the page's locale (Babel).

Bytes are stored as integers and converted only here; GiB/MiB mean powers of two,
GB/MB powers of ten, and the site uses the binary ones.

Whatever the data holds, a number is written, never a traceback: an empty cell reads "–",
a NaN the data wrote reads "not a number" (NOT_A_NUMBER, pagedata.py), an infinity "∞",
and a number too large for a style's arithmetic is written as a power of ten.
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal
from typing import Any

from babel import Locale
from babel.numbers import get_minus_sign_symbol

from sitekit.language import locale_numbers
from sitekit.language.i18n import _, count_word
from sitekit.language.locale_numbers import NBSP, set_locale, symbols

__all__ = ["NBSP", "set_locale", "symbols"]  # the page's locale, set and read here as before

_IEC = [("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)]
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class NotANumber(float):
    """A NaN that the data wrote ("nan" in a CSV cell, NaN in meta.json), as against an
    empty cell, which pandas also reads as NaN: it reads "not a number", not "–"."""

    def __new__(cls) -> NotANumber:
        return super().__new__(cls, "nan")

    def __repr__(self) -> str:
        return "nan"


NOT_A_NUMBER = NotANumber()


def _non_finite(x: Any) -> str | None:
    """The text of a NaN or an infinity; None for a finite number."""
    if not isinstance(x, float) or math.isfinite(x):
        return None
    if math.isnan(x):
        return _("not a number")
    return "∞" if x > 0 else get_minus_sign_symbol(locale_numbers.locale()) + "∞"


def _decimal(x: float, pattern: str) -> str:
    if abs(x) >= 1e21:  # past what Babel's decimal arithmetic rounds (28 digits): a power of ten
        return scientific(x)
    return locale_numbers.decimal(x, pattern)


def number(x: float, *, digits: int = 3, fixed: bool = False) -> str:
    """``digits`` significant digits (or ``digits`` decimals when ``fixed``), grouped.

    A zero that is one of the significant digits is written (6.40, 1.70 × 10⁸: a value
    rounded there, beside 6.61 with as many digits); a value that ends there exactly
    (6.4, 7 × 10⁹, 48) is written without padding zeros."""
    if _non_finite(x):
        return _non_finite(x)
    if fixed:
        return _decimal(x, "#,##0." + "0" * digits if digits else "#,##0")
    if x == 0:
        return "0"
    return _significant(x, digits, exact=_exact(x, digits))


def _exact(x: float, digits: int) -> bool:
    """Whether ``x`` is written whole in ``digits`` significant digits (7e9, 6.4, 48), a
    binary float's last-bit noise aside (0.6000000000000001, a tick's position, is 0.6)."""
    try:
        return math.isclose(float(f"{x:.{digits}g}"), x, rel_tol=4 * sys.float_info.epsilon)
    except OverflowError:  # an integer past a float's range
        return len(Decimal(x).normalize().as_tuple().digits) <= digits


def _significant(x: float, digits: int, *, exact: bool) -> str:
    magnitude = int(math.floor(math.log10(abs(x))))
    decimals = max(0, digits - 1 - magnitude)
    rounded = round(x, decimals)
    if rounded and int(math.floor(math.log10(abs(rounded)))) > magnitude:  # 99.96 is 100, not 100.0
        decimals = max(0, decimals - 1)
    mark = "#" if exact else "0"
    return _decimal(rounded, "#,##0." + mark * decimals if decimals else "#,##0")


def integer(x: int) -> str:
    return _non_finite(x) or _decimal(int(x), "#,##0")


def iec(nbytes: float, digits: int = 3) -> str:
    if _non_finite(nbytes):
        return _non_finite(nbytes)
    for unit, size in _IEC:
        if abs(nbytes) >= size:
            return f"{number(nbytes / size, digits=digits)}{NBSP}{unit}"
    return f"{integer(nbytes)}{NBSP}B"


# A byte quantity written in one unit named by the style (a table column's, cells.py).
IEC_STYLES = {"kib": "KiB", "mib": "MiB", "gib": "GiB", "tib": "TiB"}


def bytes_in(nbytes: float, style: str, digits: int = 3) -> str:
    """``nbytes`` as a number of the style's unit (``"mib"``: 1,444 or 0.703), with
    ``digits`` significant digits, its unit not written."""
    size = dict(_IEC)[IEC_STYLES[style]]
    return number(nbytes / size, digits=digits)  # an infinity or NaN stays one, and number() writes it


def iec_style(largest: float) -> str:
    """The one unit of a column of bytes: the smallest whose count of the column's
    largest cell stays under 10,000 (4,096 MiB, not 4 GiB beside 512 MiB; 13 GiB)."""
    for style, unit in IEC_STYLES.items():
        if abs(largest) < 10_000 * dict(_IEC)[unit]:
            return style
    return "tib"


def scientific(x: float, digits: int = 3) -> str:
    if x == 0 or _non_finite(x):
        return _non_finite(x) or "0"
    exp = int(math.floor(math.log10(abs(x))))
    if -3 <= exp < 6:
        return number(x, digits=digits)
    # Rounded once, from the exact value the float or integer holds: a float quotient
    # x / 10**exp rounds twice, and a tie (1.035e-18) then goes either way; this is exact
    # past a float's range too (1e-320, a huge integer). Half to even, in the default
    # context, as Babel rounds.
    kept = max(digits, 1)
    rounded = Decimal(x).quantize(Decimal(f"1e{exp + 1 - kept}"))
    if abs(rounded) >= Decimal(10).scaleb(exp):  # 9.996 × 10⁸ is 1.00 × 10⁹
        exp += 1
    mant = float(rounded.scaleb(-exp))
    text = _significant(mant, digits, exact=_exact(x, digits))  # 1.7 × 10⁸ is 170,000,000 exactly
    return f"{text} × 10{str(exp).translate(_SUPERSCRIPT)}"


# A float holds 17 significant digits: more write its binary noise (and Babel's decimal
# arithmetic refuses a fraction from about 29 on).
MAX_DIGITS = 17


def format_value(value: Any, unit: str = "", *, style: str = "auto", digits: int | None = None) -> str:
    """Text for one value, chosen by its unit unless ``style`` says otherwise.

    Styles: auto, int, bytes (exact integer), iec (KiB/MiB/GiB), kib, mib, gib, tib (one
    unit, ``digits`` significant digits), sci, ratio (decimals by magnitude, none from 100
    on, and ×), percent (fraction shown as %), fixed (``digits`` decimals), words (a
    small count in a sentence, in words: in_words), raw.
    """
    if digits is not None and not 0 <= digits <= MAX_DIGITS:
        raise ValueError(f"digits {digits} refused: a number is written with 0 to {MAX_DIGITS} digits")
    if isinstance(value, str):
        return value
    if hasattr(value, "item"):  # a NumPy or pandas scalar: the Python number it holds
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value) and not isinstance(value, NotANumber)):
        return "–"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if _non_finite(value):
        return _non_finite(value)
    try:
        return _styled(value, unit, style, digits)
    except ArithmeticError:  # past a float's range in the style's arithmetic (bytes to GiB, x 100)
        return scientific(value, digits or 3)


# Precision by magnitude (stated once on the methods page): a ratio keeps two decimals
# under 10 (3.07×), one under 100 (43.0×) and none from 100 on (40,738×); a percentage
# below a thousandth of a percent is written as "< 0.001 %".
PERCENT_FLOOR = 0.001


def ratio_decimals(value: float) -> int:
    """The decimals a ratio is written with when a page asks for none in particular."""
    return 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2


def _styled(value: int | float, unit: str, style: str, digits: int | None) -> str:
    if style == "raw":
        # every stored digit, none rounded (4.125 bits, 0.5 bytes), in the locale's decimal mark
        text = str(value).removesuffix(".0")
        return text.replace(".", symbols()["decimal"]) if isinstance(value, float) else text
    if style == "auto" and unit == "bits" and round(value, 4) == value:
        # bits per weight are short exact fractions (4 + 16/128 = 4.125): written whole,
        # never rounded to 4.12; an entropy in bits is rounded like any measurement
        return number(value, digits=6)
    if style == "auto":
        style = {"bytes": "iec", "x": "ratio", "MAC": "sci", "fraction": "percent"}.get(unit, "")
        if not style:
            style = "int" if isinstance(value, int) or float(value).is_integer() and abs(value) >= 1 else "num"
    if style == "int":
        return integer(value)
    if style == "bytes":
        return integer(value)
    if style == "iec":
        return iec(value, digits or 3)  # under 1 KiB a whole number of bytes: 1,000 B
    if style in IEC_STYLES:  # 512 MiB, 1.5 GiB, 13.0 GiB: significant digits, no padding zeros
        return f"{bytes_in(value, style, digits or 3)}{NBSP}{IEC_STYLES[style]}"
    if style == "sci":
        return scientific(value, digits or 3)
    if style == "ratio":  # from 100 on no decimals, whatever a page asks: 2,284×, not 2,283.88×
        decimals = ratio_decimals(value) if digits is None or abs(value) >= 100 else digits
        return f"{number(value, digits=decimals, fixed=True)}×"
    if style == "percent":
        if digits is None and 0 < abs(100 * value) < PERCENT_FLOOR:
            # 2.07 × 10⁻¹¹ % is a precision no reader needs: it is less than the floor
            bound = number(PERCENT_FLOOR if value > 0 else -PERCENT_FLOOR, digits=1)
            return f"{'<' if value > 0 else '>'}{NBSP}{bound}{symbols()['percent']}"
        if digits is None and 0 < abs(100 * value) < 1:
            # one decimal would write 0.0106 % as 0.0 %, another number: keep 3 significant digits
            return scientific(100 * value, 3) + symbols()["percent"]
        return number(100 * value, digits=digits if digits is not None else 1, fixed=True) + symbols()["percent"]
    if style == "fixed":
        return number(value, digits=digits if digits is not None else 2, fixed=True)
    if style == "words":
        return in_words(value)
    if style == "num":
        if 0 < abs(value) < 1e-3:  # 2.42 × 10⁻⁷, not 0.000000242: the zeros are not the number
            return scientific(value, digits or 3)
        return number(value, digits=digits or 3)
    raise ValueError(f"unknown number style {style!r}")


# A count a sentence writes in words ("until two measured growths"), as prose writes a small
# number in every language of the site; from thirteen on, in digits. Each word is a
# message of its own, in the form a language uses before a masculine noun, which the
# sentences that ask for one give it (the style sheets, style/<lang>.md).
def _number_words() -> list[str]:
    return [
        _("zero", "number"),
        _("one", "number"),
        _("two", "number"),
        _("three", "number"),
        _("four", "number"),
        _("five", "number"),
        _("six", "number"),
        _("seven", "number"),
        _("eight", "number"),
        _("nine", "number"),
        _("ten", "number"),
        _("eleven", "number"),
        _("twelve", "number"),
    ]


def in_words(value: float) -> str:
    """A whole count of 0 to 12 in the language's words; any other number in digits."""
    words = _number_words()
    if float(value).is_integer() and 0 <= value < len(words):
        return words[int(value)]
    return number(value)


def plural_category(shown: str, locale: str | None = None) -> str:
    """The CLDR plural category (one, few, many, other) of a number as written in the
    page (``"1"``, ``"7,44"``): the digits shown decide, so "1.0" is not "one", and a
    Czech decimal is "many" (7,44 bitu)."""
    locale = locale or locale_numbers.locale()
    sym = symbols(locale)
    text = shown.strip().replace(NBSP, "").replace(sym["group"], "").replace(get_minus_sign_symbol(locale), "-")
    text = text.replace(sym["decimal"], ".")
    try:
        return Locale.parse(locale).plural_form(abs(Decimal(text)))
    except (ArithmeticError, ValueError):  # not a plain number (2.07 × 10⁻¹¹): the general form
        return "other"


def unit_suffix(unit: str, shown: str = "") -> str:
    """How a unit reads after a number in the prose (bytes are already humanised), in the
    form the language gives the number ``shown`` (i18n.count_word)."""
    if unit in ("", "bytes", "x", "fraction"):
        return ""
    word = "MACs" if unit == "MAC" else unit
    return NBSP + count_word(word, plural_category(shown) if shown else "other")
