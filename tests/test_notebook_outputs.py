"""A notebook page's outputs in an edition: numbers with the digits the notebook printed and
the language's decimal mark, ids as written."""

from __future__ import annotations

import pytest

from sitekit.language import formatting, i18n
from sitekit.rendering import escape, notebook_outputs

# As pandas writes a table: the index in <th>, the cells in <td>.
TABLE = """<table border="1" class="dataframe">
  <thead>
    <tr style="text-align: right;"><th></th><th>code hash</th><th>tables</th></tr>
  </thead>
  <tbody>
    <tr><th>kv_cache</th><td>af97e757fe99</td><td>6</td></tr>
    <tr><th>memory_budget</th><td>305709108422</td><td>14000</td></tr>
    <tr><th>quality</th><td></td><td>NaN</td></tr>
    <tr><th>distillation</th><td>0</td><td>0.25</td></tr>
  </tbody>
</table>"""


WRITTEN = {"cs": "0,25", "es": "0,25", "en": "0.25"}  # 0.25 with each language's decimal mark


@pytest.fixture(params=sorted(WRITTEN))
def edition(request):
    formatting.set_locale(request.param)
    i18n.set_language(request.param)
    yield request.param
    formatting.set_locale(i18n.DEFAULT)
    i18n.set_language(i18n.DEFAULT)


def test_a_column_of_numbers_is_written_as_the_language_writes_them_and_an_id_column_as_written(edition):
    html = notebook_outputs.translate(TABLE)
    # a code hash that happens to be all digits is an id in a column of ids, not a number
    assert "<td>305709108422</td>" in html and "<td>af97e757fe99</td>" in html
    assert f"<td>{WRITTEN[edition]}</td>" in html and "<td>6</td>" in html and "<td>NaN</td>" in html
    # an integer keeps the digits the notebook printed, ungrouped, as the downloaded notebook shows it
    assert "<td>14000</td>" in html
    assert f"<th>{escape.text('kv_cache', None)}</th>" in html and f"<th>{i18n._('code hash', 'notebook')}</th>" in html


def test_a_column_with_a_word_in_it_is_not_a_column_of_numbers(edition):
    table = TABLE.replace("<td>6</td>", "<td>six</td>")
    assert "<td>0.25</td>" in notebook_outputs.translate(table)  # a word's column: its cells as written


def test_a_printed_line_shows_the_notebooks_digits(edition):
    """A printed count reads as the notebook printed it (the English page once showed 552,960
    where the notebook printed 552960); a decimal takes the language's mark."""
    pre = '<div class="jp-RenderedText" data-mime-type="text/plain"><pre>a count: 552960 and 0.5</pre>'
    shown = notebook_outputs.translate(pre)
    assert "552960" in shown and "552,960" not in shown and "552.960" not in shown
    assert ("0.5" if edition == "en" else "0,5") in shown
