"""Nothing a reader sees or hovers in the Galician, Spanish, Italian and Czech editions is
English, except what tests/prose/english.txt allows, what the edition's style sheet keeps
(style/<lang>.md, "English kept") and what the HTML marks as English
(``lang="en"``: text as a run recorded it, the titles of published works).

Two nets, on the built HTML of every page: English function words (the, of, with...),
which no sentence of these languages uses; and the catalogs' own English messages
(hooks/locales/*.po), which would show verbatim where a translation is missing. Code
(``code``, ``pre``) and the theme's scripts are not read; what a notebook printed (a
``pre`` in its output area) and the text of its figures (SVG) are."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import pytest
from babel.messages.pofile import read_po

from sitekit.language import i18n
from sitekit.language.hyphenation import unhyphenated
from tests.conftest import LANGUAGES, REPO, english_pages
from tests.style_sheets import style_sheet

pytestmark = pytest.mark.build

# Words only English writes. Left out: a word one of the editions also uses ("a", "in",
# "per", "no", "do", "se"; Czech "to", "by"; Galician "as").
ENGLISH = frozenset(
    "the of and with from for is are each every which that this these those not be was were than when where "
    "what how its into only also but or has have had does would could should will can an at on".split()
)
NOT_ENGLISH = {"cs": {"to", "by"}, "gl": {"as"}, "it": set(), "es": set()}
SKIP = {"script", "style", "code", "pre", "svg", "math", "kbd", "template"}
ATTRIBUTES = ("title", "alt", "aria-label", "placeholder")
SVG_DATA = "data:image/svg+xml;base64,"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PAGES = [p.stem for p in english_pages()] + sorted(p.stem for p in (REPO / "docs").glob("*.ipynb") if "." not in p.stem)


def allowed() -> list[str]:
    lines = (REPO / "tests" / "prose" / "english.txt").read_text(encoding="utf-8").splitlines()
    entries = [line.split(" | ")[0].strip() for line in lines if line.strip() and not line.startswith("#")]
    assert all(" | " in line for line in lines if line.strip() and not line.startswith("#")), "phrase | why"
    return entries


class Visible(HTMLParser):
    """The text and the hover texts of a page, without code and without what is marked English."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, hidden, a notebook's printed output)
        self.found: list[str] = []

    def hidden(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        # hidden: code, what is marked English, and the notebook's copy of each cell's code,
        # kept for its copy button and never shown
        printed = tag == "pre" and bool(self.stack) and self.stack[-1][2]  # a notebook's printed output
        hide = (
            self.hidden()
            or (tag in SKIP and not printed)
            or a.get("lang") == "en"
            or "clipboard-copy-txt" in (a.get("class") or "")
        )
        if not hide:
            for name in ATTRIBUTES:
                if a.get(name):
                    self.found.append(_hover(a[name], a.get("class") or ""))
            src = a.get("src") or ""
            if src.startswith(SVG_DATA):  # a notebook's figure: its text is text
                svg = base64.b64decode(src[len(SVG_DATA) :]).decode("utf-8")
                self.found += [t for t in re.findall(r"<text\b[^>]*>([^<>]+)</text>", svg) if t.strip()]
        if tag not in VOID:
            self.stack.append((tag, hide, "jp-RenderedText" in (a.get("class") or "")))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not self.hidden() and data.strip():
            self.found.append(unhyphenated(data))  # a header's soft hyphens: the reader sees whole words


def _hover(text: str, classes: str) -> str:
    """A claim mark's tooltip is its sentence's lead, then the claim's id and expression and
    the data it read: code, not words."""
    if "claim" in classes.split():
        return CLAIM_ID.split(text)[0]
    return text


CLAIM_ID = re.compile(r"\s[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*: ")


def visible(html: str) -> list[str]:
    parser = Visible()
    parser.feed(html)
    return parser.found


def column_names(lang: str) -> re.Pattern:
    """A header's tooltip names the CSV column as the file has it ("columna what de
    figures.csv"): the name is an identifier, not a word."""
    template = i18n.translations(lang).get((None, "column {name} of {file}"), "column {name} of {file}")
    parts = re.split(r"\{(?:name|file)\}", template)
    return re.compile(r"\S+".join(re.escape(p) for p in parts))


def english_words(text: str, lang: str, allow: list[str]) -> list[str]:
    for phrase in allow:
        text = text.replace(phrase, " ")
    text = column_names(lang).sub(" ", text)
    # identifiers, paths and files are names (site_data's columns, code, files), not words;
    # so is a hash (a commit's "bf3be2b364" holds no English "be")
    words = [
        w
        for w in text.split()
        if not re.search(r"[_/=()\[\]{}<>]|\.(csv|py|json|md|txt)\b", w)
        and not re.fullmatch(r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]+", w.strip(".,;:"))
    ]
    found = re.findall(r"[^\W\d_]+", " ".join(words))
    # an abbreviation in capitals is the language's own ("IS", Czech for a confidence interval)
    return [w for w in found if w.lower() in ENGLISH - NOT_ENGLISH[lang] and not (w.isupper() and len(w) > 1)]


def messages(lang: str) -> list[str]:
    """The catalog's English messages long enough to be a phrase of their own."""
    with i18n.catalog_path(lang).open("rb") as f:
        catalog = read_po(f, locale=lang)
    return [m.id for m in catalog if m.id and m.string != m.id and " " in m.id and len(m.id) >= 12 and "{" not in m.id]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_edition_shows_no_english_beyond_the_allowed(built_site, lang):
    allow = allowed() + style_sheet(lang).kept  # and the English its style sheet keeps
    english_messages = messages(lang)
    problems = []
    for page in PAGES:
        path = built_site / lang / ("" if page == "index" else page) / "index.html"
        for text in visible(path.read_text(encoding="utf-8")):
            flat = " ".join(text.split())
            words = english_words(flat, lang, allow)
            rest = flat
            for phrase in allow:
                rest = rest.replace(phrase, " ")
            verbatim = [m for m in english_messages if m in rest and re.search(rf"(?<!\w){re.escape(m)}(?!\w)", rest)]
            if words or verbatim:
                problems.append(f"{page}: {flat[:160]!r} ({', '.join(words + verbatim)[:80]})")
    assert not problems, f"{lang}: {len(problems)} texts in English:\n" + "\n".join(problems[:40])


def test_the_nets_catch_english_and_pass_the_editions_own_words():
    allow = ["Material for MkDocs"]
    assert english_words("process peak resident set size (reset before each point)", "gl", allow) == ["each"]
    assert english_words("as matrices de proxección", "gl", allow) == []  # Galician "as" is an article
    assert english_words("Made with Material for MkDocs", "es", allow) == ["with"]
    assert english_words("sloupec fraction_of_floor souboru decode.csv", "cs", allow) == []
    assert english_words("sloupec where souboru figures.csv", "cs", allow) == []
    assert english_words("95% IS od (podíl)", "cs", allow) == []
    # a claim mark's tooltip is a sentence of the edition, read as words
    mark = '<a class="claim claim-ok" href="#check-exp.c" title="Comprobado al construir esta página.">✓</a>'
    assert visible(mark) == ["Comprobado al construir esta página.", "✓"]
    printed = '<div class="jp-RenderedText jp-OutputArea-output"><pre>tokens in the prompt: 12</pre></div>'
    assert visible(printed) == ["tokens in the prompt: 12"]
    figure = base64.b64encode(b'<svg><text x="1">the floor</text></svg>').decode()
    assert visible(f'<img src="data:image/svg+xml;base64,{figure}" alt="a">') == ["a", "the floor"]
    assert visible('<p>a <code>the</code> <span lang="en">the end</span> <b title="of it">b</b></p>') == [
        "a ",
        "of it",
        "b",
    ]
