"""Every way the site writes a number, against text worked out by hand: each IEC step
of bytes, percent, ratio, scientific, fixed and significant digits, grouping, and the
values that are not numbers. A formatter that drops the x100 of a percentage or
changes the size of a GiB fails here, not only in a browser."""

import math

import pytest
from sitekit import formatting, i18n


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


@pytest.mark.parametrize(
    "largest,style",
    [
        (720 * 2**10, "kib"),
        (180 * 2**20, "mib"),
        (1.41 * 2**30, "mib"),
        (4 * 2**30, "mib"),
        (13 * 2**30, "gib"),
        (2**60, "tib"),
    ],
)
def test_a_column_of_bytes_takes_the_unit_that_writes_its_largest_cell_under_ten_thousand(largest, style):
    assert f.iec_style(largest) == style


def test_a_rounded_zero_is_a_significant_digit_and_an_exact_value_is_not_padded():
    assert f.number(6.4) == "6.4" and f.number(6.4001) == "6.40" and f.number(5.0002) == "5.00"
    assert f.number(47.95) == "48.0" and f.number(48.0) == "48" and f.number(99.96) == "100"
    assert f.format_value(170_123_456, "MAC") == "1.70 × 10⁸" and f.format_value(170_000_000, "MAC") == "1.7 × 10⁸"
    assert f.format_value(7.0001e-4) == "7.00 × 10⁻⁴"  # beside 6.61 × 10⁻⁴, as many digits
    assert f.format_value(9.996e8, "MAC") == "1.00 × 10⁹"  # rounded up to the next power of ten
    assert f.format_value(1_048_575, "bytes", style="bytes") == "1,048,575"
    # a float's last-bit noise is no digit: a tick at 0.6000000000000001 reads 0.6, not 0.600000
    assert f.number(0.6000000000000001, digits=6) == "0.6" and f.number(0.1 + 0.2, digits=6) == "0.3"


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
