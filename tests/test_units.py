"""Units and precision as a reader meets them on the built English pages: one IEC unit
per table column, a column of bytes whose header names its unit, no decimals on a ratio
from 100 on, no power of ten in a percentage, and no padding zeros after an exact
quantity of bytes (methods, "How numbers are written"). English pages: the editions
are written by the same formatter."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import LANGUAGES

NBSP = "\u00a0"
IEC = r"(KiB|MiB|GiB|TiB)"
SPACE = rf"[ {NBSP}\u202f]"


class _Tables(HTMLParser):
    """A page's tables as (headers, rows), a cell as (its text, whether its number carries
    a title of exact bytes), and the text outside them."""

    def __init__(self):
        super().__init__()
        self.tables, self.text = [], []
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = ([], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ["", False]
        elif tag == "span" and self._cell is not None and attrs.get("title", "").endswith(" bytes"):
            self._cell[1] = True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            text = " ".join(self._cell[0].split())
            self._row.append((text, self._cell[1], tag))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            heads = [c[0] for c in self._row if c[2] == "th"]
            cells = [c[:2] for c in self._row if c[2] == "td"]
            if heads and not cells:
                self._table[0][:] = heads
            elif cells:
                self._table[1].append(cells)
            self._row = None
        elif tag == "table" and self._table is not None:
            self.tables.append(self._table)
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data
        else:
            self.text.append(data)


def _shown(text: str) -> str:
    return "'" + text.replace(NBSP, " ") + "'"


def violations(html: str) -> list[str]:
    """What a page writes against the rules above, one line each."""
    parsed = _Tables()
    parsed.feed(html.split("<article", 1)[-1].split("</article>", 1)[0])
    found = []
    for heads, rows in parsed.tables:
        for i in range(max((len(r) for r in rows), default=0)):
            head = heads[i] if i < len(heads) else ""
            cells = [r[i] for r in rows if i < len(r)]
            units = {m.group(1) for text, _ in cells for m in re.finditer(rf"\d{SPACE}{IEC}\b", text)}
            if len(units) > 1:
                found.append(f"column {head!r} mixes {sorted(units)}")
            counted = [text for text, exact in cells if exact]
            carried = all(re.search(rf"{SPACE}({IEC}|B)$", text) for text in counted)
            if counted and not carried and not re.search(rf"\b{IEC}\b|bytes|byte|bajt", head, re.I):
                found.append(f"column {head!r} counts bytes and its header names no unit")
    texts = [t for _h, rows in parsed.tables for r in rows for t, _ in r] + ["".join(parsed.text)]
    for text in texts:
        for m in re.finditer(rf"(?<![\d.,])(\d{{1,3}}(?:,\d{{3}})*)\.\d+{SPACE}?×", text):
            if int(m.group(1).replace(",", "")) >= 100:
                found.append(f"a ratio from 100 on with decimals: {_shown(m.group(0))}")
        for m in re.finditer(rf"10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+{SPACE}?%", text):
            found.append(f"a percentage in a power of ten: {_shown(text[max(0, m.start() - 12) : m.end()])}")
        for m in re.finditer(rf"(?<![\d.,])([\d,]+)\.(\d+){SPACE}{IEC}\b", text):
            if len((m.group(1).replace(",", "") + m.group(2)).lstrip("0")) > 3:  # 24.00 GiB, 13.04 GiB
                found.append(f"more than three significant digits in bytes: {_shown(m.group(0))}")
    return found


def _english_pages(site: Path) -> dict[str, str]:
    skip = {"search", "assets", "data", "figures", *LANGUAGES}
    return {
        p.parent.name or "index": p.read_text(encoding="utf-8")
        for p in [site / "index.html", *site.glob("*/index.html")]
        if p.parent.name not in skip
    }


@pytest.mark.build
def test_every_english_page_writes_units_and_precision_as_methods_states(built_site):
    found = {page: v for page, html in _english_pages(built_site).items() if (v := violations(html))}
    assert not found, found


def _table(head: str, *cells: str) -> str:
    body = "".join(f"<tr><td>{c}</td></tr>" for c in cells)
    return f"<article><table><thead><tr><th>{head}</th></tr></thead><tbody>{body}</tbody></table></article>"


def test_a_column_mixing_iec_units_is_found():
    html = _table("peak", f"1,005{NBSP}MiB", f"1.03{NBSP}GiB")
    assert violations(html) == ["column 'peak' mixes ['GiB', 'MiB']"]
    assert violations(_table("peak (MiB)", "1,005", "1,055")) == []


def test_a_column_of_bytes_without_its_unit_is_found():
    cell = '<span title="2,048 bytes">{}</span>'
    assert violations(_table("scores", cell.format("2,048"))) == [
        "column 'scores' counts bytes and its header names no unit"
    ]
    assert violations(_table("scores (bytes)", cell.format("2,048"))) == []
    assert violations(_table("scores", cell.format(f"2{NBSP}KiB"))) == []  # the cell carries it


def test_a_ratio_from_100_on_with_decimals_is_found():
    assert violations(_table("gain", "2,283.88×")) == ["a ratio from 100 on with decimals: '2,283.88×'"]
    assert violations(f"<article><p>it took 412.5{NBSP}× longer</p></article>") == [
        "a ratio from 100 on with decimals: '412.5 ×'"
    ]
    assert violations(_table("gain", "2,284×", "43.0×", "3.07×")) == []


def test_a_percentage_in_a_power_of_ten_is_found():
    assert violations(_table("error", f"2.07 × 10⁻¹¹{NBSP}%")) == ["a percentage in a power of ten: '2.07 × 10⁻¹¹ %'"]
    assert violations(_table("error", f"<{NBSP}0.001%", "0.0106%")) == []


def test_padding_zeros_after_bytes_are_found():
    assert violations(f"<article><p>left: 24.00{NBSP}GiB of 512.00{NBSP}MiB</p></article>") == [
        "more than three significant digits in bytes: '24.00 GiB'",
        "more than three significant digits in bytes: '512.00 MiB'",
    ]
    assert violations(f"<article><p>left: 24{NBSP}GiB, 13.0{NBSP}GiB, 0.703{NBSP}MiB</p></article>") == []
