"""Numbers no measurement gives but data can hold, through every style and through a
page: NaN written in a cell, infinity, 1e400, integers and floats past what a style's
arithmetic or Babel can round. Their exact texts, worked by hand, are in
test_formatting.py."""

import re

import pytest

from sitekit.language import formatting, i18n


@pytest.mark.parametrize("style", ["auto", "int", "iec", "gib", "mib", "sci", "ratio", "percent", "fixed", "num"])
@pytest.mark.parametrize("value", [10**400, -(10**400), 1e308, 5e-324, -5e-324])
def test_numbers_past_a_floats_range_are_written(value, style):
    for unit in ("", "bytes", "fraction", "x", "MAC", "bits"):
        text = formatting.format_value(value, unit, style=style)
        assert text and "nan" not in text.lower(), (value, unit, style, text)


def test_not_a_number_is_translated(monkeypatch):
    monkeypatch.setattr(i18n, "_language", "it")
    assert formatting.format_value(formatting.NOT_A_NUMBER) == "non è un numero"


def test_a_nan_cell_keeps_its_columns_formatting(tmp_path):
    """A "nan" (or "inf") written in a column of numbers: the column is still read as
    numbers, so its other cells are grouped and rounded; the cell reads as what it is."""
    from sitekit.rendering.markers import PageContext, table
    from sitekit.rendering.pagedata import SiteData
    from tests.conftest import edit_table, write_data

    folder = write_data(tmp_path, "e", {"t": [{"n": 1, "bytes_used": 123456}, {"n": 2, "bytes_used": 2048}]})

    def nan_and_inf(rows):
        rows.append(["nan", "inf"])
        rows.append(["3", "1e400"])

    edit_table(folder, "t", nan_and_inf)
    html = table(PageContext(data=SiteData(tmp_path), page="p.md", url_prefix=""), "e.t")
    body = html.split("</table>", 1)[0]  # the table, not the provenance under it
    cells = [re.sub("<[^>]*>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", body)]
    assert cells == ["1", "123,456", "2", "2,048", "not a number", "∞", "3", "∞"], cells


def test_a_nan_or_infinite_value_in_meta_json_is_refused_with_one_line(tmp_path):
    """JSON has no NaN or Infinity; Python writes them anyway. The data layer refuses
    such a meta.json with a line naming the file and the fix, rather than a page
    printing "not a number" for a measurement."""
    import json

    from sitekit.rendering.markers import PageContext, value
    from sitekit.rendering.pagedata import SiteData, SiteDataError
    from tests.conftest import write_data

    for bad, word in ((float("nan"), "NaN"), (float("inf"), "Infinity")):
        folder = write_data(tmp_path / word, "e", {"t": [{"n": 1}]}, {"v": 1.0})
        meta = json.loads((folder / "meta.json").read_text())
        meta["values"]["v"]["value"] = bad
        (folder / "meta.json").write_text(json.dumps(meta))
        ctx = PageContext(data=SiteData(tmp_path / word), page="p.md", url_prefix="")
        with pytest.raises(SiteDataError, match=f"holds {word}.*make measure ONLY=e"):
            value(ctx, "e.v")
