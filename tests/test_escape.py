"""The one escaping path (sitekit/rendering/escape.py), context by context, through the
Markdown the site is built with (mkdocs.yml's extensions): hostile text from the data
is shown literally and makes no link, image, emphasis, code, element or comment, in a
paragraph, a Markdown table, a blockquote, a list, an admonition, a raw HTML block, a
tag's attribute, JSON in a script and a figure's label."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import markdown
import pytest
import yaml

from sitekit.rendering import escape
from tests.conftest import REPO

HOSTILE = [
    "[x](javascript:alert(1))",
    "![x](https://tracker.example/t.png)",
    "<img src=x onerror=alert(1)>",
    "<!--<script>",
    "</script><script>alert(1)</script>",
    "*a* _b_ `c`",
    "**strong** __strong__",
    "$x^2$",
    "{{ value('x.y') }}",
    "https://evil.example",
    "<https://evil.example>",
    "&amp; &lt; &#91;",
    "a | b | c",
    "\\*not emphasis\\* \\[not a link\\]",
    "*a*{: onclick=alert(1) }",
    "line one\n# heading\n\n- item\n    code\n> quote\n===",
    "- a list item",
    "1. an ordered item",
    "    indented",
    "---",
    '!!! danger "Title"',
    "??? note",
    "2) a second item",
    "`#!python print(1)`",
    "[^1] [ref][1]\n\n[1]: https://evil.example",
    "<div markdown>*a*</div>",
    "'single' \"double\"",
    "trailing spaces  \nnext",
]


def _markdown() -> markdown.Markdown:
    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # mkdocs' !!python tags
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    names, options = [], {}
    for ext in config["markdown_extensions"]:
        name, opts = next(iter(ext.items())) if isinstance(ext, dict) else (ext, None)
        names.append(name)
        if opts:
            options[name] = opts
    return markdown.Markdown(extensions=names, extension_configs=options)


MD = _markdown()


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def render(page: str) -> _Page:
    MD.reset()
    parsed = _Page()
    parsed.feed(MD.convert(page))
    parsed.close()
    return parsed


# Where a marker's output stands in a page: the data text replaces X.
CONTEXTS = {
    "paragraph": "Before X after.",
    "line start": "X and then the sentence goes on.",
    "own paragraph": "Before.\n\nX\n\nAfter.",
    "bold": "The model **X** was measured.",
    "pipe table": "| what | value |\n|---|---|\n| name | X |",
    "blockquote": "> X",
    "list item": "- one\n- X",
    "admonition": "!!! note\n    Here: X.",
    "raw html block": '<div class="measured-table">\n<table><tr><td class="text">X</td></tr></table>\n</div>',
    "pre": '<pre class="quoted-text" style="white-space: pre-wrap">X</pre>',
    "heading": "## Section X",
}
MADE_BY_CONTEXT = {"paragraph": set(), "bold": {"strong"}, "pipe table": {"table", "thead", "tbody", "tr", "th", "td"}}


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("payload", HOSTILE)
def test_text_is_shown_literally_in_every_context(payload, context):
    page = render(CONTEXTS[context].replace("X", escape.text(payload)))
    around = render(CONTEXTS[context].replace("X", "plain"))
    assert [t for t, _ in page.tags] == [t for t, _ in around.tags], "the data made an element"
    assert payload in "".join(page.text), "the data is not shown as it is"
    assert not page.comments


@pytest.mark.parametrize("payload", HOSTILE)
def test_an_attribute_holds_the_text_and_nothing_else(payload):
    for context in ('Before <sup class="claim" title="X">✓</sup> after.', '!!! note\n    <span title="X">a</span>'):
        page = render(context.replace("X", escape.attribute(payload)))
        titled = [a for _, a in page.tags if "title" in a]
        assert [a["title"] for a in titled] == [payload]
        assert {t for t, _ in page.tags} <= {"sup", "span", "p", "div"}


def test_nothing_data_makes_is_a_marker_the_build_would_refuse():
    for payload in HOSTILE:
        for out in (escape.text(payload), escape.attribute(payload), escape.json_script({"x": payload})):
            assert "{{" not in out and "}}" not in out


@pytest.mark.parametrize("payload", HOSTILE)
def test_json_in_a_script_cannot_end_it_or_open_a_comment(payload):
    data = {"rows": [{"name": payload, "n": 1.5}], "columns": [{"label": payload}]}
    out = escape.json_script(data)
    assert not re.search(r"[<>&]", out)
    assert json.loads(out) == data


def test_json_has_no_nan_and_every_text_is_cut():
    out = json.loads(escape.json_script({"a": float("nan"), "b": [float("inf")], "c": "x" * 100_000}))
    assert out["a"] is None and out["b"] == [None]
    assert out["c"] == "x" * escape.TEXT + "…"


def test_a_long_text_is_cut_and_says_how_long_it_was():
    shown = escape.text("y" * 100_000)
    assert shown == "y" * escape.NAME + "… (100,000 characters in all)"
    assert escape.text("y" * 100_000, escape.TEXT).startswith("y" * escape.TEXT + "…")
    assert escape.text("y" * escape.NAME) == "y" * escape.NAME  # at the bound, whole
    assert len(escape.figure_text("z" * 1_000)) == escape.FIGURE + 1


def test_a_figure_label_draws_a_dollar_as_a_dollar():
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    with plt.rc_context({"svg.fonttype": "none"}):
        ax.set_title(escape.figure_text("$x^2$ costs $5"))
        ax.set_xticks([0, 1], [escape.figure_text("$a$"), escape.figure_text("<script>")])
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
    plt.close(fig)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", buf.getvalue())
    assert "$x^2$ costs $5" in texts and "$a$" in texts and "&lt;script&gt;" in texts


@pytest.mark.parametrize(
    "url, linked",
    [
        ("https://www.nvidia.com/en-us/data-center/h200/", "nvidia.com"),
        ("https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html", "amd.com"),
        ("https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct", "huggingface.co"),
    ],
)
def test_a_source_links_only_to_a_site_the_hooks_name(url, linked):
    page = render(f"A source: {escape.link(url)}.")
    assert ("a", {"href": url}) in page.tags and linked in "".join(page.text)


@pytest.mark.parametrize(
    "url, message",
    [
        ("javascript:alert(1)", "style 'link' needs an http(s) address"),
        ("[x](javascript:alert(1))", "style 'link' needs an http(s) address"),
        ("https://evil.example/", "is not on a site the pages link to"),
        ("https://www.nvidia.com@evil.example/", "is not on a site the pages link to"),
        ("https://nvidia.com.evil.example/", "is not on a site the pages link to"),
        ("https://evil.example/?https://www.nvidia.com/", "is not on a site the pages link to"),
        ('https://www.nvidia.com/" onmouseover="alert(1)', "is not on a site the pages link to"),
        ("https://www.nvidia.com:8443/", "is not on a site the pages link to"),
        ("https://www.nvidia.com:x/", "style 'link' needs an http(s) address"),
    ],
)
def test_any_other_address_fails_the_build_in_one_line(url, message):
    from sitekit.rendering.pagedata import SiteDataError

    with pytest.raises(SiteDataError) as e:
        escape.link(url)
    assert message in str(e.value) and "\n" not in str(e.value)
