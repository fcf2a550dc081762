"""The pages' formulas: LaTeX rendered to MathML at build time (sitekit/rendering/maths.py),
drawn by the browser with no script, no font and nothing from another address."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from sitekit.rendering import maths
from tests.conftest import DOCS, LANGUAGES


def test_a_fraction_is_mfrac_and_keeps_its_source():
    out = maths.to_mathml(r"\frac{a}{b}", display=True)
    assert out.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">')
    assert "<mfrac><mrow><mi>a</mi></mrow><mrow><mi>b</mi></mrow></mfrac>" in out
    assert '<annotation encoding="application/x-tex">\\frac{a}{b}</annotation></semantics></math>' in out


def test_a_subscript_and_words():
    out = maths.to_mathml(r"\text{bytes per token} = H_{\mathrm{kv}}")
    assert 'display="inline"' in out
    assert "<mtext>bytes&#x000A0;per&#x000A0;token</mtext>" in out
    assert re.search(r"<msub><mi>H</mi>.*<mi mathvariant=\"normal\">k</mi>.*</msub>", out)


def test_a_floor_and_the_source_escaped():
    out = maths.to_mathml(r"\left\lfloor \frac{x}{y} \right\rfloor < 1 & 2")
    assert "&#x0230A;" in out and "&#x0230B;" in out  # ⌊ and ⌋
    source = r"\left\lfloor \frac{x}{y} \right\rfloor &lt; 1 &amp; 2"
    assert f'<annotation encoding="application/x-tex">{source}</annotation>' in out


@pytest.mark.parametrize("tex", [r"\frac{a}{", r"\nosuchcommand{x} + 1"])
def test_a_formula_that_does_not_convert_is_named(tex):
    with pytest.raises(maths.MathsError) as e:
        maths.to_mathml(tex)
    assert str(e.value).endswith(tex) and "\n" not in str(e.value)


def test_render_replaces_what_arithmatex_marked_and_nothing_else():
    html = (
        '<p>a <span class="arithmatex">\\(x &lt; 2\\)</span> b <code>$HOME</code></p>\n'
        '<div class="arithmatex">\\[\n\\frac{1}{2}\n\\]</div>'
    )
    out = maths.render(html)
    assert '<span class="arithmatex"><math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in out
    assert "<mo>&#x0003C;</mo>" in out and "x &lt; 2</annotation>" in out
    assert '<div class="arithmatex"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in out
    assert "<code>$HOME</code>" in out and "\\(" not in out and "\\[" not in out


def test_render_names_the_formula_that_fails():
    with pytest.raises(maths.MathsError, match=r"\\nosuch\{y\}$"):
        maths.render('<div class="arithmatex">\\[\n\\nosuch{y}\n\\]</div>')


# -- on the built site --------------------------------------------------------------------


def _pages_with_formulas() -> list[str]:
    """docs/<page>[.<lang>].md that write a formula, as the built page's folder."""
    found = []
    for path in sorted(DOCS.glob("*.md")):
        if re.search(r"\$\$|\$[^$\s]", path.read_text(encoding="utf-8").replace("`$INFERENCE_CHEAP_CACHE`", "")):
            stem, *lang = path.name[: -len(".md")].split(".")
            found.append(f"{lang[0] + '/' if lang else ''}{stem}")
    return found


class Shown(HTMLParser):
    """A page's visible text: without scripts, styles, code, and a formula's annotation."""

    HIDDEN = {"script", "style", "code", "pre", "annotation", "template", "svg"}

    def __init__(self) -> None:
        super().__init__()
        self.depth, self.text = 0, []

    def handle_starttag(self, tag, attrs):
        self.depth += tag in self.HIDDEN

    def handle_endtag(self, tag):
        self.depth -= tag in self.HIDDEN and self.depth > 0

    def handle_data(self, data):
        if not self.depth:
            self.text.append(data)


def _shown(html: str) -> str:
    parser = Shown()
    parser.feed(html)
    return " ".join(parser.text)


def test_the_pages_with_formulas_are_the_five_editions_of_each():
    pages = _pages_with_formulas()
    english = [p for p in pages if "/" not in p]
    assert {"cache-size", "memory-budget", "calculator", "speculative-decoding", "weight-quantization"} <= set(english)
    assert sorted(pages) == sorted(english + [f"{lang}/{p}" for lang in LANGUAGES for p in english])


@pytest.mark.build
def test_every_page_with_a_formula_shows_mathml(built_site):
    for page in _pages_with_formulas():
        html = (built_site / page / "index.html").read_text(encoding="utf-8")
        assert "<math " in html and '<annotation encoding="application/x-tex">' in html, page


@pytest.mark.build
def test_no_page_shows_latex_or_asks_another_address_for_maths(built_site):
    for path in sorted(built_site.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        shown = _shown(html)
        page = path.relative_to(built_site)
        for raw in ("$$", "\\(", "\\[", "\\frac", "\\text", "_{", "^{"):
            assert raw not in shown, f"{page}: {raw} left as text"
        assert not re.search(r"(?<![\w`])\$[^$\s][^$]*\$", shown), f"{page}: a $...$ formula left as text"
        # what the browser fetches: nothing from another address, and no maths script at all
        # (a notebook page keeps its renderer's MathJax settings, with no script to load)
        for address in FETCHED.findall(html):
            assert not re.search(r"^(?:https?:)?//|mathjax|katex", address, re.I), f"{page}: fetches {address}"


FETCHED = re.compile(r'<(?:script|link|img|iframe)\b[^>]*?\b(?:src|href)="([^"]*)"')
