"""No comparison in the pages' prose that the build does not check: a sentence that says
something is faster, smaller, flat, nearly, most, never... either carries a claim marker
(checked against site_data when the site is built) or is listed, with the reason it
needs no check, in tests/prose/qualitative.txt (a definition, the method, a cited or
general fact, or a sentence whose comparison the marker-rendered numbers in it show)."""

from __future__ import annotations

import re

from tests.conftest import REPO, english_pages

DOCS = REPO / "docs"
LISTED = REPO / "tests" / "prose" / "qualitative.txt"

# Words that state an order or a shape: the statements a reader could check against the
# table beside them, and the ones that went wrong before (a "flat" curve that was not).
QUALITATIVE = re.compile(
    r"\b(flat|knee|most|faster|slower|fastest|slowest|larger|smaller|bigger|higher|lower|"
    r"more than|less than|fewer|better|worse|best|worst|barely|almost|nearly|never|always|"
    r"doubles?|halves|exceeds?|dominates?)\b",
    re.I,
)
MARKER = re.compile(r"\{\{.*?\}\}", re.S)
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z*(_\[\x00-])")  # \x00 opens a marker


def _without_code(markdown: str) -> str:
    for pattern in (r"```.*?```", r"<!--.*?-->", r"<form.*?</form>", r"\$\$.*?\$\$", r"\$[^$\n]+\$", r"`[^`]*`"):
        markdown = re.sub(pattern, " ", markdown, flags=re.S)
    return markdown


def unchecked_comparisons(markdown: str) -> list[str]:
    """Sentences (markers dropped, as a reader sees the words) that use a comparison word
    and carry no claim marker. Markers are protected first so a sentence is never split
    inside one; headings and table rows are left out (a heading names, a table shows)."""
    markers: list[str] = []

    def protect(m: re.Match) -> str:
        markers.append(m.group(0))
        return f"\x00{len(markers) - 1}\x00"

    text = MARKER.sub(protect, _without_code(markdown))
    found = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith(("#", "|"))]
        for sentence in SENTENCE_END.split(" ".join(lines)):
            words = re.sub(r"\x00\d+\x00", "", sentence)
            if not QUALITATIVE.search(words):
                continue
            used = [markers[int(i)] for i in re.findall(r"\x00(\d+)\x00", sentence)]
            if any(re.match(r"\{\{\s*claim\(", u) for u in used):
                continue
            found.append(" ".join(words.split()))
    return found


def _listed() -> list[tuple[str, str, str]]:
    out = []
    for raw in LISTED.read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            page, excerpt, why = re.split(r"\s{2,}", raw.strip(), maxsplit=2)
            out.append((page, excerpt.strip('"'), why))
    return out


def test_every_comparison_is_claimed_or_explained():
    listed = _listed()
    used, unexplained = set(), []
    for page in english_pages():
        for sentence in unchecked_comparisons(page.read_text(encoding="utf-8")):
            match = [i for i, (p, excerpt, _) in enumerate(listed) if p == page.name and excerpt in sentence]
            used.update(match)
            if not match:
                unexplained.append(f"{page.name}: “{sentence[:160]}”")
    assert not unexplained, (
        "comparisons no claim checks: wrap them in {{ claim(...) }}, or list them with the reason "
        "in tests/prose/qualitative.txt:\n" + "\n".join(unexplained)
    )
    stale = [listed[i][:2] for i in range(len(listed)) if i not in used]
    assert not stale, f"tests/prose/qualitative.txt lists sentences no page has any more: {stale}"


def test_every_listing_gives_a_reason():
    for page, excerpt, why in _listed():
        assert (DOCS / page).exists(), page
        assert len(excerpt) >= 12 and len(why) >= 12, (page, excerpt, why)


def test_the_checker_finds_an_unchecked_comparison():
    page = (
        "# Faster steps\n\n"
        "Decode time is flat in the context. "
        '{{ claim("kv_cache.speedup > 2", "The cache is faster") }} than recomputing. '
        "The step took {{ value('prefill_decode.step_ms') }}, nearly the floor.\n\n"
        "| faster | slower |\n|---|---|\n\n"
        "`x is never y` and a plain sentence."
    )
    assert unchecked_comparisons(page) == ["Decode time is flat in the context.", "The step took , nearly the floor."]
