"""Every number on the site is formatted here, once, for the page's locale (Babel).

Bytes are stored as integers and converted only here; GiB/MiB mean powers of two,
GB/MB powers of ten, and the site uses the binary ones.
"""

from __future__ import annotations

import math
from typing import Any

from babel.numbers import format_decimal

LOCALE = "en"
_IEC = [("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)]
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def set_locale(locale: str) -> None:
    global LOCALE
    LOCALE = locale


def number(x: float, *, digits: int = 3, fixed: bool = False) -> str:
    """``digits`` significant digits (or ``digits`` decimals when ``fixed``), grouped."""
    if fixed:
        return format_decimal(x, format="#,##0." + "0" * digits if digits else "#,##0", locale=LOCALE)
    if x == 0:
        return "0"
    magnitude = int(math.floor(math.log10(abs(x))))
    decimals = max(0, digits - 1 - magnitude)
    rounded = round(x, decimals)
    return format_decimal(rounded, format="#,##0." + "#" * decimals if decimals else "#,##0", locale=LOCALE)


def integer(x: int) -> str:
    return format_decimal(int(x), format="#,##0", locale=LOCALE)


def iec(nbytes: float, digits: int = 3) -> str:
    for unit, size in _IEC:
        if abs(nbytes) >= size:
            return f"{number(nbytes / size, digits=digits)} {unit}"
    return f"{integer(nbytes)} B"


def scientific(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    exp = int(math.floor(math.log10(abs(x))))
    if -3 <= exp < 6:
        return number(x, digits=digits)
    mant = x / 10**exp
    return f"{number(mant, digits=digits)} × 10{str(exp).translate(_SUPERSCRIPT)}"


def format_value(value: Any, unit: str = "", *, style: str = "auto", digits: int | None = None) -> str:
    """Text for one value, chosen by its unit unless ``style`` says otherwise.

    Styles: auto, int, bytes (exact integer), iec (KiB/MiB/GiB), gib, mib, sci, ratio
    (2 decimals and ×), percent (fraction shown as %), fixed (``digits`` decimals), raw.
    """
    if isinstance(value, str):
        return value
    if hasattr(value, "item"):  # a NumPy or pandas scalar: the Python number it holds
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if style == "raw":
        return str(value)
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
        return iec(value, digits or 3) if abs(value) >= 1024 else f"{integer(value)} B"
    if style == "gib":
        return f"{number(value / 2**30, digits=digits or 2, fixed=True)} GiB"
    if style == "mib":
        return f"{number(value / 2**20, digits=digits or 1, fixed=True)} MiB"
    if style == "sci":
        return scientific(value, digits or 3)
    if style == "ratio":
        return f"{number(value, digits=digits if digits is not None else 2, fixed=True)}×"
    if style == "percent":
        if digits is None and 0 < abs(100 * value) < 1:
            # one decimal would write 0.0106 % as 0.0 %, another number: keep 3 significant
            # digits, and a power of ten once the zeros would outnumber them
            return f"{scientific(100 * value, 3)}%"
        return f"{number(100 * value, digits=digits if digits is not None else 1, fixed=True)}%"
    if style == "fixed":
        return number(value, digits=digits if digits is not None else 2, fixed=True)
    if style == "num":
        if 0 < abs(value) < 1e-3:  # 2.42 × 10⁻⁷, not 0.000000242: the zeros are not the number
            return scientific(value, digits or 3)
        return number(value, digits=digits or 3)
    raise ValueError(f"unknown number style {style!r}")


def unit_suffix(unit: str) -> str:
    """How a unit reads after a number in the prose (bytes are already humanised)."""
    return {"": "", "bytes": "", "x": "", "MAC": " MACs", "fraction": ""}.get(unit, f" {unit}")
