"""What a run recorded in words, in the page's language: the text of a column or value
that meta.json declares words for a reader, and the English sentences a run writes with
the templates of ``sitedata.wording``, written again from the template's translation
with their numbers as the page's locale writes them.

Beside the catalogs' lookup (i18n) and the numbers (formatting), which both read: a
recorded sentence needs the two, and neither needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sitedata import wording
from sitekit.language import formatting, i18n
from sitekit.language.i18n import _


def data_text(value: Any, declared: Mapping[str, Any]) -> Any:
    """A cell or a value of site_data as the page shows it: text of a column or value that
    meta.json declares words for a reader (``words``: a method's name, a verdict, a
    reason) in the page's language, anything else as measured (what a model wrote,
    tokens, a matrix's name)."""
    if isinstance(value, str) and declared.get("words"):
        return recorded_text(value, "data")
    return value


def recorded_text(text: str, where: str) -> str:
    """An English sentence a run recorded, in the page's language: one written with a
    template of ``sitedata.wording`` is written again from the template's translation,
    its numbers as the language writes them and its words translated where the catalog
    knows them; any other text is a message of its own."""
    found = None if (None, text) in i18n.translations(i18n.language()) else wording.parse(text)
    if found is None:
        return _(text, where)
    template, fields = found
    if i18n.language() == i18n.DEFAULT:
        _(template, where)  # asked, so that `make messages` lists the template
        return text

    def field(name: str, value: str) -> str:
        if name in wording.NUMBERS:  # parse read a number there, as the run wrote it ("2,048")
            number = float(value.replace(",", ""))
            shown = (
                formatting.integer(int(number))
                if number.is_integer() and "." not in value
                else formatting.number(number)
            )
            # a count whose unit the template's translation leaves to it, agreeing (wording.COUNTED)
            return shown + formatting.unit_suffix(wording.COUNTED[name], shown) if name in wording.COUNTED else shown
        return i18n.translations(i18n.language()).get((None, value), value)

    return _(template, where).format(**{k: field(k, v) for k, v in fields.items()})
