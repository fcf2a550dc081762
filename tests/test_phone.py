"""Every page on a 390 px phone, in English and in Spanish (Debian's chromium through
Playwright): no page wider than the screen; each figure's text at 9 px or more as shown;
each table's caption whole; no code name broken inside a word; and check marks as large
as the text around them, with the contrast the web's guidelines ask for (4.5:1)."""

from __future__ import annotations

import pytest

from tests.test_calculator_browser import CHROMIUM
from tests.test_site_browser import _open, browsing
from tests.test_table_widths import _pages

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium` (.ci/run does it)"
    ),
    pytest.mark.browser,
    pytest.mark.build,
]

# The smallest text of each figure as the phone shows it: the SVG's smallest font (in its
# user units, its pt) times the width the image is shown at over the SVG's own width.
_FIGURE_TEXT = """async () => {
    const out = [];
    for (const img of document.querySelectorAll('figure.measured-figure img')) {
        const svg = await (await fetch(img.currentSrc)).text();
        const found = svg.match(/<svg[^>]*\\swidth="([\\d.]+)pt"/);
        if (!found) { out.push({src: img.currentSrc, px: 0}); continue; }
        const width = parseFloat(found[1]);
        const sizes = [...svg.matchAll(/font(?:-size:|: (?:[a-z]+ )*)\\s*([\\d.]+)px/g)].map(m => parseFloat(m[1]));
        out.push({src: img.currentSrc, px: Math.min(...sizes) * img.getBoundingClientRect().width / width});
    }
    return out;
}"""
# A caption cut by the screen's edge or by the box around it.
_CAPTIONS = """() => [...document.querySelectorAll('.table-caption')]
    .filter(c => c.scrollWidth > c.clientWidth + 1 || c.getBoundingClientRect().right > innerWidth + 1)
    .map(c => c.textContent.trim().slice(0, 60))"""
# Each line of a code name in a table, by the top of its characters: every line but the
# last must end where the name may break, after an underscore.
_CODE_BREAKS = """() => {
    const broken = [];
    for (const code of document.querySelectorAll('.measured-table code')) {
        const lines = new Map(), range = document.createRange();
        let at = 0;
        for (const node of code.childNodes) {
            if (node.nodeType !== Node.TEXT_NODE) continue;
            for (let i = 0; i < node.length; i++) {
                range.setStart(node, i); range.setEnd(node, i + 1);
                const top = Math.round(range.getBoundingClientRect().top);
                lines.set(top, (lines.get(top) || '') + node.data[i]);
            }
        }
        const texts = [...lines.entries()].sort((a, b) => a[0] - b[0]).map(e => e[1]);
        if (texts.slice(0, -1).some(t => !t.endsWith('_'))) broken.push(texts.join('/'));
    }
    return broken;
}"""
# Each check mark: its size against the text's, and its colour's contrast with its ground.
_MARKS = """() => {
    const lum = c => {
        const [r, g, b] = c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(v => {
            v = v / 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    return [...document.querySelectorAll('a.claim')].map(a => {
        const s = getComputedStyle(a), text = parseFloat(getComputedStyle(a.parentElement).fontSize);
        const [fg, bg] = [lum(s.color), lum(s.backgroundColor)];
        return {px: parseFloat(s.fontSize), text, contrast: (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)};
    });
}"""


@pytest.mark.parametrize("edition", ["", "es/"])
def test_every_page_reads_on_a_phone(built_site, edition):
    small, cut, broken, faint, wide = [], [], [], [], []
    with browsing(built_site) as (origin, browser):
        for path in _pages(built_site):
            page, _problems = _open(browser, origin, edition + path, settle="load")
            page.set_viewport_size({"width": 390, "height": 844})
            # the phone's version of each figure, which the browser fetches once the screen is narrow
            page.wait_for_function("[...document.images].every(i => i.complete && i.currentSrc)")
            where = edition + path or "/"
            if page.evaluate("document.documentElement.scrollWidth") > 390:  # the page itself scrolls sideways
                wide.append(where)
            small += [f"{where}: {f['src']} {f['px']:.1f} px" for f in page.evaluate(_FIGURE_TEXT) if f["px"] < 8.95]
            cut += [f"{where}: {c}" for c in page.evaluate(_CAPTIONS)]
            broken += [f"{where}: {b}" for b in page.evaluate(_CODE_BREAKS)]
            for mark in page.evaluate(_MARKS):
                if mark["px"] < 0.8 * mark["text"] or mark["contrast"] < 4.5:
                    faint.append(f"{where}: {mark}")
            page.close()
    assert not wide, "pages wider than a 390 px phone: " + ", ".join(wide)
    assert not small, "figures whose text reads under 9 px on a phone:\n" + "\n".join(small)
    assert not cut, "captions cut on a phone:\n" + "\n".join(cut)
    assert not broken, "code names broken inside a word:\n" + "\n".join(broken)
    assert not faint, "check marks too small or too faint:\n" + "\n".join(faint[:10])
