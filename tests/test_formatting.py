"""Every way the site writes a number, against text worked out by hand: each IEC step
of bytes, percent, ratio, scientific, fixed and significant digits, grouping, and the
values that are not numbers. A formatter that drops the x100 of a percentage or
changes the size of a GiB fails here, not only in a browser."""

import math

import pytest

from sitekit.language import formatting, i18n


class _Spaced:
    """The formatter with its no-break spaces shown as spaces, so that the expected texts
    below read as a page does; test_units_and_groups_do_not_break pins the no-break space."""

    def __getattr__(self, name):
        fn = getattr(formatting, name)
        if not callable(fn) or name in ("set_locale", "symbols"):
            return fn
        return lambda *a, **k: _spaced(fn(*a, **k))


def _spaced(out):
    return out.replace(formatting.NBSP, " ") if isinstance(out, str) else out


f = _Spaced()


@pytest.mark.parametrize(
    "nbytes,text",
    [
        (0, "0 B"),
        (1023, "1,023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (2**20 - 1, "1,024 KiB"),  # 1,023.999 KiB, three significant digits
        (2**20, "1 MiB"),
        (536_870_912, "512 MiB"),
        (20_447_232, "19.5 MiB"),
        (2**30, "1 GiB"),
        (3 * 2**29, "1.5 GiB"),
        (14_000_000_000, "13.0 GiB"),  # 13.04: its zero is a significant digit
        (2**40, "1 TiB"),
        (3 * 2**40, "3 TiB"),
        (-(2**21), "-2 MiB"),
    ],
)
def test_bytes_in_each_iec_step(nbytes, text):
    assert f.format_value(nbytes, "bytes") == text


def test_one_unit_styles_keep_significant_digits_and_pad_no_exact_value():
    assert f.format_value(14_000_000_000, "bytes", style="gib") == "13.0 GiB"  # 14e9 / 2^30 = 13.0385
    assert f.format_value(2**30, "bytes", style="gib") == "1 GiB"  # not 1.00 GiB
    assert f.format_value(2**31, "bytes", style="gib", digits=1) == "2 GiB"
    assert f.format_value(536_870_912, "bytes", style="mib") == "512 MiB"  # not 512.00 MiB
    assert f.format_value(2**20 + 2**19, "bytes", style="mib", digits=2) == "1.5 MiB"
    assert f.format_value(2**30 + 2**20, "bytes", style="mib") == "1,025 MiB"
    assert f.format_value(737_280, "bytes", style="mib") == "0.703 MiB"
    assert f.format_value(3 * 2**40, "bytes", style="tib") == "3 TiB"
    assert f.format_value(2**10, "bytes", style="kib") == "1 KiB"
    assert f.bytes_in(1_515_978_752, "mib") == "1,446" and f.bytes_in(1_515_978_752, "gib") == "1.41"
    # the digits a page asks: 13.0385 GiB to two significant digits is 13, to three 13.0
    assert f.format_value(14_000_000_000, "bytes", style="gib", digits=2) == "13 GiB"
    assert f.bytes_in(14_000_000_000, "gib", digits=2) == "13"


@pytest.mark.parametrize(
    "largest,style",
    [
        (720 * 2**10, "kib"),
        (180 * 2**20, "mib"),
        (1.41 * 2**30, "mib"),
        (4 * 2**30, "mib"),
        (13 * 2**30, "gib"),
        (10_000 * 2**10 - 1, "kib"),  # 9,999.999 KiB: under ten thousand
        (10_000 * 2**10, "mib"),  # 10,000 KiB is not under it
        (2**60, "tib"),
    ],
)
def test_a_column_of_bytes_takes_the_unit_that_writes_its_largest_cell_under_ten_thousand(largest, style):
    assert f.iec_style(largest) == style


def test_a_rounded_zero_is_a_significant_digit_and_an_exact_value_is_not_padded():
    assert f.number(6.4) == "6.4" and f.number(6.4001) == "6.40" and f.number(5.0002) == "5.00"
    assert f.number(47.95) == "48.0" and f.number(48.0) == "48" and f.number(99.96) == "100"
    # a rounding that carries into the next power of ten keeps the digits asked, no more
    assert f.number(0.9996) == "1.00" and f.number(9.9996, digits=4) == "10.00" and f.number(0.099996) == "0.100"
    assert f.format_value(170_123_456, "MAC") == "1.70 × 10⁸" and f.format_value(170_000_000, "MAC") == "1.7 × 10⁸"
    assert f.format_value(7.0001e-4) == "7.00 × 10⁻⁴"  # beside 6.61 × 10⁻⁴, as many digits
    assert f.format_value(9.996e8, "MAC") == "1.00 × 10⁹"  # rounded up to the next power of ten
    assert f.format_value(1_048_575, "bytes", style="bytes") == "1,048,575"
    # a float's last-bit noise is no digit: a tick at 0.6000000000000001 reads 0.6, not 0.600000
    assert f.number(0.6000000000000001, digits=6) == "0.6" and f.number(0.1 + 0.2, digits=6) == "0.3"


@pytest.mark.parametrize("style", ["auto", "fixed", "sci", "gib"])
def test_digits_past_what_a_float_holds_are_refused_in_one_line(style):
    """17 significant digits are a float's; 1.5 with 17 fixed decimals is still written,
    with 18 the page is told, where Babel's decimal arithmetic once failed from about 29."""
    assert formatting.format_value(1.5, style="fixed", digits=17) == "1.50000000000000000"
    for digits in (18, 30, -1):
        with pytest.raises(ValueError, match=rf"^digits {digits} refused: a number is written with 0 to 17 digits$"):
            formatting.format_value(1.5, "bytes" if style == "gib" else "", style=style, digits=digits)


def test_iec_digits():
    assert f.iec(20_447_232, digits=4) == "19.5 MiB"  # 19.5000: trailing zeros dropped
    assert f.iec(20_500_000, digits=4) == "19.55 MiB"
    assert f.iec(20_500_000, digits=2) == "20 MiB"
    assert f.format_value(1536, "bytes", style="iec", digits=2) == "1.5 KiB"
    assert f.format_value(1000, "bytes", style="iec") == "1,000 B"


@pytest.mark.parametrize(
    "value,text",
    [
        (0.125, "12.5%"),
        (1.0, "100.0%"),
        (0.000106, "0.0106%"),  # never rounded to another number (0.0 %)
        (0.005, "0.5%"),
        (-0.000106, "-0.0106%"),
        (2.0712e-13, "< 0.001%"),  # not 0.0000000000207%, nor 0.0%, nor 2.07 × 10⁻¹¹ %
        (-2.0712e-13, "> -0.001%"),
        (0.00000999, "< 0.001%"),  # 0.000999 %: under the floor
        (0.00001, "0.001%"),  # the floor itself is written
        (0.0000106, "0.00106%"),
        (0.00995, "0.995%"),  # under one percent: 3 significant digits
        (0.00012345, "0.0123%"),  # 0.012345 %: three of them, not four
        (0.01, "1.0%"),  # from one percent on: one decimal
        (0.0123, "1.2%"),
        (0.5, "50.0%"),
        (1.2346, "123.5%"),
        (0.0, "0.0%"),
    ],
)
def test_percent(value, text):
    assert f.format_value(value, "fraction") == text


def test_percent_and_ratio_digits():
    assert f.format_value(0.000106, "fraction", digits=4) == "0.0106%"
    assert f.format_value(0.5, "fraction", digits=0) == "50%"
    assert f.format_value(3.0712, "x") == "3.07×"
    assert f.format_value(1.0, "x") == "1.00×"
    assert f.format_value(13.65, "x", digits=1) == "13.6×"  # 13.65 is 13.6499... in binary
    assert f.format_value(13.66, "x", digits=1) == "13.7×"
    assert f.format_value(2.5, "x", digits=0) == "2×"  # half to even, as Babel rounds
    # by magnitude when the page asks for no digits: 2 decimals under 10, 1 under 100, none above
    assert f.format_value(9.994, "x") == "9.99×" and f.format_value(43.0, "x") == "43.0×"
    assert f.format_value(99.94, "x") == "99.9×" and f.format_value(100.4, "x") == "100×"
    assert f.format_value(40738.3, "x") == "40,738×" and f.format_value(-2283.88, "x") == "-2,284×"
    assert f.format_value(40738.3, "x", digits=2) == "40,738×"  # from 100 on, no decimals whatever a page asks
    assert f.format_value(-2283.88, "x", digits=2) == "-2,284×" and f.format_value(43.05, "x", digits=2) == "43.05×"


@pytest.mark.parametrize(
    "value,digits,text",
    [
        (9.99, None, "9.99×"),
        (10.0, None, "10.0×"),  # from 10 on: one decimal
        (-10.0, None, "-10.0×"),
        (99.9, None, "99.9×"),
        (100.0, None, "100×"),  # from 100 on: none
        (100.0, 2, "100×"),  # whatever a page asks
        (99.5, 2, "99.50×"),
    ],
)
def test_a_ratio_drops_a_decimal_exactly_at_10_and_100(value, digits, text):
    assert f.format_value(value, "x", digits=digits) == text


@pytest.mark.parametrize(
    "value,text",
    [
        (7e9, "7 × 10⁹"),
        (134_515_008, "1.35 × 10⁸"),
        (1.234e-5, "1.23 × 10⁻⁵"),
        (-4.5e7, "-4.5 × 10⁷"),
        (999_999, "999,999"),  # below 10^6: written out
        (1_000_000, "1 × 10⁶"),
        (0.001, "0.001"),
        (0.000999, "9.99 × 10⁻⁴"),
        (0, "0"),
    ],
)
def test_scientific(value, text):
    assert f.format_value(value, "MAC") == text


def test_significant_digits_and_grouping():
    assert f.number(12_345.678) == "12,346"
    assert f.format_value(2.421538e-07) == "2.42 × 10⁻⁷" and f.format_value(0.00123) == "0.00123"
    assert f.format_value(2.4567e-07, style="num", digits=2) == "2.5 × 10⁻⁷"
    assert f.number(0.000123456) == "0.000123"
    assert f.number(1.23456, digits=2) == "1.2"
    assert f.number(99.96) == "100"
    assert f.number(-2.5) == "-2.5"
    assert f.number(0) == "0"
    assert f.number(1234.5, digits=2, fixed=True) == "1,234.50"
    assert f.number(1234.5, digits=0, fixed=True) == "1,234"  # half to even
    assert f.number(1235.5, digits=0, fixed=True) == "1,236"
    assert f.integer(1_234_567) == "1,234,567"
    assert f.integer(-1000) == "-1,000"


def test_auto_style_by_unit_and_type():
    assert f.format_value(3, "") == "3"
    assert f.format_value(3.0, "") == "3"
    assert f.format_value(12_345.0, "tokens") == "12,345"
    # a whole float past 2^53 is the integer it holds, every digit (not 1.152921504606847e18
    # padded with zeros), whatever digits a page asks
    assert f.format_value(float(2**60), "") == "1,152,921,504,606,846,976"
    assert f.format_value(float(2**60), "", digits=2) == "1,152,921,504,606,846,976"
    assert f.format_value(0.5, "") == "0.5"  # a fraction of one is no integer
    assert f.format_value(2.345678, "ms") == "2.35"
    assert f.format_value(46_080, "bytes") == "45 KiB"


def test_not_numbers():
    assert f.format_value(None) == "–"
    assert f.format_value(math.nan) == "–"
    assert f.format_value(True) == "yes" and f.format_value(False) == "no"
    assert f.format_value("fits") == "fits"
    assert f.format_value(12.5, style="raw") == "12.5"
    assert f.format_value(16.0, style="raw") == "16" and f.format_value(4.125, style="raw") == "4.125"
    with pytest.raises(ValueError, match="unknown number style"):
        f.format_value(1.0, style="nonsense")


def test_numpy_scalars_are_plain_numbers():
    np = pytest.importorskip("numpy")
    assert f.format_value(np.int64(1536), "bytes") == "1.5 KiB"
    assert f.format_value(np.float64(0.125), "fraction") == "12.5%"
    assert f.format_value(np.bool_(True)) == "yes" and f.format_value(np.bool_(False)) == "no"
    assert f.format_value(np.float64("nan")) == "–" and f.format_value(np.float32("nan")) == "–"
    assert f.format_value(np.int64(123_456), "") == "123,456"


def test_unit_suffix():
    assert f.unit_suffix("tokens") == " tokens"
    assert f.unit_suffix("MAC") == " MACs"
    assert [f.unit_suffix(u) for u in ("", "bytes", "x", "fraction")] == ["", "", "", ""]
    # the number shown before it decides the form: 1 token, 2 tokens, 1.0 tokens
    assert f.unit_suffix("tokens", "1") == " token" and f.unit_suffix("MAC", "1") == " MAC"
    assert f.unit_suffix("tokens", "2") == " tokens" and f.unit_suffix("tokens", "1.0") == " tokens"


@pytest.mark.parametrize(
    "shown,locale,category",
    [
        ("1", "en", "one"),
        ("-1", "en", "one"),  # the sign is no digit: minus one token
        ("1.0", "en", "other"),  # a decimal shown is no "one" in English
        ("1,000", "en", "other"),
        ("7,44", "cs", "many"),  # a Czech decimal (7,44 bitu), its comma the decimal mark
        ("1\xa0234,5", "cs", "many"),  # grouped with a no-break space
        ("3", "cs", "few"),
        ("1.000.000", "es", "many"),  # un millón de tokens: the dots group
        ("1.000", "es", "other"),
        ("\u22121", "sv", "one"),  # Swedish writes its minus as U+2212
        ("2.07 × 10⁻¹¹", "en", "other"),  # not a plain number: the general form
        ("", "en", "other"),
    ],
)
def test_plural_category_reads_the_number_as_its_locale_wrote_it(shown, locale, category):
    """CLDR's categories, from the digits a page of ``locale`` shows, whatever the
    current page's locale (here English)."""
    assert formatting.plural_category(shown, locale) == category


def test_other_locales_group_and_separate_as_they_write():
    try:
        f.set_locale("es")
        assert f.integer(1_234_567) == "1.234.567"
        assert f.number(1234.5, digits=1, fixed=True) == "1234,5"  # four digits stay whole
        assert f.number(12345.5, digits=1, fixed=True) == "12.345,5" and f.integer(8295) == "8295"
        assert f.number(0.000123) == "0,000123"
        assert f.format_value(1536, "bytes") == "1,5 KiB"
        f.set_locale("cs")
        assert formatting.integer(1_234_567) == "1\xa0234\xa0567"
    finally:
        f.set_locale("en")
    assert f.integer(1_234_567) == "1,234,567"


def test_default_digits_and_the_fixed_style():
    assert f.iec(20_500_000) == "19.6 MiB" and f.iec(100) == "100 B"
    assert f.scientific(134_515_008) == "1.35 × 10⁸" and f.scientific(0.0123456) == "0.0123"
    assert f.scientific(0.0123456, digits=2) == "0.012" and f.scientific(134_515_008, digits=2) == "1.3 × 10⁸"
    assert f.format_value(1.234e-5, "MAC", digits=2) == "1.2 × 10⁻⁵"
    assert f.format_value(20_500_000, "bytes", style="iec", digits=2) == "20 MiB"
    assert f.format_value(0.123456, "", digits=2) == "0.12"
    assert f.format_value(3.14159, style="fixed") == "3.14"
    assert f.format_value(3.14159, style="fixed", digits=3) == "3.142"
    assert f.format_value(3.14159, style="fixed", digits=0) == "3"
    assert f.format_value(31415.9, style="fixed") == "31,415.90"


def test_bits_per_weight_are_written_exactly():
    assert f.format_value(4.125, "bits") == "4.125"  # 4 + 16/128, not 4.12
    assert f.format_value(4.25, "bits") == "4.25" and f.format_value(16, "bits") == "16"
    assert f.format_value(4.125, "bits", style="num") == "4.12"  # only when a page asks for 3 digits
    assert f.format_value(7.438937488786226, "bits") == "7.44"  # an entropy: a measurement, rounded
    assert f.format_value(4.12345, "bits") == "4.12"  # five decimals: a measurement, not a format's size
    # four decimals at most, but six significant digits at most too: 1,234.5678 is 1,234.57
    assert f.format_value(1234.5678, "bits") == "1,234.57"


def test_units_and_groups_do_not_break():
    assert formatting.iec(1536) == "1.5\xa0KiB" and formatting.format_value(7, "bytes") == "7\xa0B"
    assert formatting.unit_suffix("ms") == "\xa0ms"


@pytest.mark.parametrize(
    ("locale", "grouped", "decimal", "percent"),
    [
        ("en", "1,234,567", "1,234.5", "12.5%"),
        ("gl", "1\xa0234\xa0567", "1\xa0234,5", "12,5\xa0%"),
        ("es", "1.234.567", "1234,5", "12,5\xa0%"),  # four digits stay whole in Spanish
        ("it", "1.234.567", "1.234,5", "12,5%"),
        ("cs", "1\xa0234\xa0567", "1\xa0234,5", "12,5\xa0%"),
    ],
)
def test_each_edition_writes_a_known_value_as_its_locale_does(locale, grouped, decimal, percent):
    try:
        formatting.set_locale(locale)
        assert formatting.integer(1_234_567) == grouped
        assert formatting.number(1234.5, digits=1, fixed=True) == decimal
        assert formatting.format_value(0.125, "fraction") == percent
        assert formatting.symbols()["decimal"] == decimal[-2]
        assert formatting.format_value(4.125, style="raw") == f"4{decimal[-2]}125"  # unrounded, the page's mark
    finally:
        formatting.set_locale("en")


def test_yes_and_no_in_the_edition_language(tmp_path, monkeypatch):
    (tmp_path / "gl.po").write_text('msgid "yes"\nmsgstr "si"\n\nmsgid "no"\nmsgstr "non"\n', encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    monkeypatch.setattr(i18n, "_catalogs", {})
    try:
        i18n.set_language("gl")
        assert (formatting.format_value(True), formatting.format_value(False)) == ("si", "non")
        assert not i18n.missing["gl"] - {"x"}
        assert i18n._("a message nobody translated") == "a message nobody translated"
        assert "a message nobody translated" in i18n.missing["gl"]
    finally:
        i18n.set_language("en")
        i18n.missing.pop("gl", None)


class TestPowersOfTen:
    """Where a number becomes a power of ten, and how its mantissa is rounded."""

    def test_from_ten_to_the_21_on_a_number_is_a_power_of_ten(self):
        # past what Babel rounds digit by digit; under it, every digit is written out
        assert f.number(1e21) == "1 × 10²¹" and f.number(-1e21) == "-1 × 10²¹"
        assert f.number(9.99e20) == "999,000,000,000,000,000,000"
        assert f.integer(10**21) == "1 × 10²¹" and f.number(2.5e21, digits=2, fixed=True) == "2.5 × 10²¹"

    @pytest.mark.parametrize(
        "x,digits,text",
        [
            # the float lies above the tie (1.035000000000000078e-18 ...): up, by any rule
            (1.035e-18, 3, "1.04 × 10⁻¹⁸"),
            (1.075e-20, 3, "1.08 × 10⁻²⁰"),
            (1.335e-300, 3, "1.34 × 10⁻³⁰⁰"),
            (1.035e300, 3, "1.04 × 10³⁰⁰"),
            # an integer exactly on the tie: half to even, as Babel rounds every other number
            (88_352_500, 5, "8.8352 × 10⁷"),
            (1_235_000_000, 3, "1.24 × 10⁹"),
            (9.9995e-300, 4, "1.000 × 10⁻²⁹⁹"),  # 9.99950000000000029e-300: up to 10.000, rounded
            (1.46e7, 1, "1 × 10⁷"),  # rounded once: 1.46 is 1, not 1.5 and then 2
            (2.5e7, 1, "2 × 10⁷"),
        ],
    )
    def test_a_mantissa_is_rounded_once_from_the_exact_value(self, x, digits, text):
        assert f.scientific(x, digits) == text

    def test_a_huge_integer_is_a_power_of_ten_where_a_style_divides_it(self):
        assert f.format_value(10**400, "bytes", style="iec") == "1 × 10⁴⁰⁰"
        assert f.format_value(10**400, "bytes", style="gib") == "1 × 10⁴⁰⁰"
        assert f.scientific(5e-324) == "4.94 × 10⁻³²⁴"  # 2^-1074, the smallest float
        assert f.scientific(-(10**400)) == "-1 × 10⁴⁰⁰"
        # a division past a float's range: the power of ten, with the digits a page asks
        assert f.format_value(1234 * 10**400, "bytes", style="gib") == "1.23 × 10⁴⁰³"
        assert f.format_value(1234 * 10**400, "bytes", style="gib", digits=2) == "1.2 × 10⁴⁰³"
        # a count is written whole whatever digits a page asks, as a power of ten past 10^21
        assert f.format_value(123 * 10**400, "", digits=2) == f.format_value(123 * 10**400, "") == "1.23 × 10⁴⁰²"

    def test_an_exact_integer_is_never_padded_however_many_digits_a_page_asks(self):
        # an answer may ask up to 30 digits; a float mantissa holds 17, so the text
        # stops there rather than going on with zeros it does not know
        x = 123_456_789_012_345_678 * 10**400
        mantissa, power = f.scientific(x, 18).split(" × ")
        assert power == "10⁴¹⁷" and mantissa.startswith("1.234567890123456") and not mantissa.endswith("0")

    def test_last_bit_noise_is_no_digit_but_a_few_bits_more_are(self):
        """Up to four machine epsilons from what ``digits`` write is a float's noise (0.6 +
        4 ulps, 3.3 epsilons away, reads 0.6); 0.6 + 5 ulps (4.2 epsilons) is a number
        rounded there, and so is 6.4000000001, its zero a significant digit."""
        x = 0.6
        for _ in range(4):
            x = math.nextafter(x, 1)
        assert f.number(x, digits=6) == "0.6"
        assert f.number(math.nextafter(x, 1), digits=6) == "0.600000"
        assert f.number(6.4000000001) == "6.40"


# Numbers no measurement gives but data can hold: written as text a reader understands,
# never an OverflowError, a ValueError or a ZeroDivisionError.
@pytest.mark.parametrize(
    "style",
    ["auto", "int", "bytes", "iec", "kib", "gib", "mib", "tib", "sci", "ratio", "percent", "fixed", "num", "raw"],
)
@pytest.mark.parametrize(
    "value, expected",
    [
        (float("inf"), "∞"),
        (float("-inf"), "-∞"),
        (float("1e400"), "∞"),  # what "1e400" reads as
        (formatting.NOT_A_NUMBER, "not a number"),
        (float("nan"), "–"),  # an empty cell
        (None, "–"),
    ],
)
def test_non_finite_numbers_are_written_in_every_style(value, expected, style):
    for unit in ("bytes", "", "x", "fraction", "MAC", "bits"):  # never ∞×, ∞% or "inf"
        assert formatting.format_value(value, unit, style=style) == expected


@pytest.mark.parametrize(
    "helper",
    [
        formatting.number,
        formatting.integer,
        formatting.iec,
        formatting.scientific,
        lambda x: formatting.number(x, digits=2, fixed=True),
        lambda x: formatting.bytes_in(x, "gib"),
    ],
)
def test_the_helpers_write_non_finite_numbers_as_format_value_does(helper):
    """Called directly (a column of bytes, a notebook's printed output), each helper
    writes ∞, -∞ and "not a number": never "∞ TiB", "0" or a traceback."""
    assert helper(math.inf) == "∞" and helper(-math.inf) == "-∞"
    assert helper(formatting.NOT_A_NUMBER) == "not a number"


def test_minus_infinity_takes_the_minus_sign_of_the_pages_locale():
    try:
        formatting.set_locale("sv")  # CLDR's Swedish minus is U+2212, not the hyphen
        assert formatting.format_value(-math.inf) == "\u2212∞" and formatting.format_value(math.inf) == "∞"
    finally:
        formatting.set_locale("en")
    assert formatting.format_value(-math.inf) == "-∞"


def test_a_nan_the_data_wrote_prints_as_any_nan():
    """NOT_A_NUMBER differs from an empty cell's NaN only in how a page reads it; printed
    (a log, an error message, a CSV written back) it is the "nan" the data held."""
    assert repr(formatting.NOT_A_NUMBER) == repr(math.nan) == "nan"
    assert math.isnan(formatting.NOT_A_NUMBER) and isinstance(formatting.NOT_A_NUMBER, float)
