"""The site as a course text: a home page with a way in (who it is for, what to know, reading
paths, the chapter named, the repository, the licences and how to cite) in every edition; a
picture that explains a concept on every measured page; a glossary for the words a
student meets first; figures drawn again for a phone, their text readable there."""

from __future__ import annotations

import re
from html import unescape

import matplotlib.pyplot as plt
import pytest

from sitekit import figures
from sitekit.figures import layout
from sitekit.language import glossary
from sitekit.sources import project, source_archive
from tests.conftest import LANGUAGES, REPO

figures._load_all()

EDITIONS = ["", *(f"{lang}/" for lang in LANGUAGES if lang != "en")]
MEASURED = (
    "kv-cache",
    "cache-size",
    "prefill-decode",
    "batching",
    "weight-quantization",
    "activation-outliers",
    "quality",
    "speculative-decoding",
    "distillation",
    "memory-budget",
)
# The jargon a reader met before any page explained it; the glossary defines each.
JARGON = ("VmHWM", "dynamic cache", "static cache", "inductor", "Wilson", "bootstrap", "floor / step", "prefill")


def test_the_citation_file_holds_title_authors_and_both_licences():
    cff = project.read(REPO)
    assert cff["title"] == "Making LLM inference cheap, measured" and cff["authors"]
    assert cff["license"] == ["MIT", "CC-BY-4.0"]
    for spdx, name in project.LICENCES.items():
        text = (REPO / name).read_text(encoding="utf-8")
        assert ("MIT License" if spdx == "MIT" else "Attribution 4.0 International") in text


def test_a_citation_names_the_site_its_commit_and_the_repository_when_known(monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setattr(project, "cff", project.read(REPO))
    monkeypatch.setattr(source_archive, "built_from", SimpleNamespace(commit="0123456789abcdef", changed=False))
    monkeypatch.setattr(source_archive, "repository", "")
    monkeypatch.setattr(project, "site_url", "")
    page = SimpleNamespace(url_prefix="../")
    plain = unescape(project.citation(page))
    assert "Making LLM inference cheap, measured" in plain and "0123456789" in plain and "http" not in plain
    assert 'href="../source.tar.gz"' in project.repository(page)  # no address known: the files it was built from
    monkeypatch.setattr(source_archive, "repository", "https://example.org/owner/site")
    assert "https://example.org/owner/site" in unescape(project.citation(page))
    assert project.repository(page) == '<a href="https://example.org/owner/site">https://example.org/owner/site</a>'
    assert "{{" not in project.citation(page)  # a page may hold no marker's braces


def test_the_pages_workflows_repository_is_the_themes_repo_url(monkeypatch):
    from tests.helpers import _hook

    monkeypatch.setenv("SITE_REPOSITORY", "https://example.org/owner/site")
    _render, config = _hook(None)
    assert config.repo_url == "https://example.org/owner/site"
    monkeypatch.delenv("SITE_REPOSITORY")
    _render, config = _hook(None)
    assert not config.repo_url


@pytest.mark.parametrize("lang", ["en", *(lang for lang in LANGUAGES if lang != "en")])
def test_every_edition_has_a_glossary_and_the_english_one_defines_the_first_jargon(lang):
    terms = glossary.definitions(lang)
    assert len(terms) >= 25 and all(len(d) > 20 for d in terms.values()), lang
    if lang == "en":
        assert set(JARGON) <= set(terms), set(JARGON) - set(terms)


def test_a_term_in_a_pages_own_html_is_explained_once_and_never_inside_a_tag():
    shown = glossary.explain('peak resident set (Linux VmHWM) <a title="VmHWM">VmHWM</a> and VmHWM', "en")
    assert shown.count("<abbr") == 2  # "resident set" and the first VmHWM
    assert '<a title="VmHWM">VmHWM</a> and VmHWM' in shown


def _grid_figure(cols: int):
    fig, axes = plt.subplots(1, cols, figsize=(3.4 * cols, 3.2), sharey=True)
    for ax in axes:
        ax.plot([1, 2, 3], [1, 3, 2])
    return fig


def test_a_row_of_panels_is_stacked_for_a_phone_each_with_its_own_labels():
    fig = _grid_figure(3)
    layout.stack(fig)
    assert fig.get_size_inches()[0] == layout.NARROW_IN
    lefts = {round(ax.get_position().x0, 3) for ax in fig.axes}
    tops = [ax.get_position().y0 for ax in fig.axes]
    assert len(lefts) == 1 and tops == sorted(tops, reverse=True)  # one column, in reading order
    assert all(ax.yaxis.get_tick_params()["labelleft"] for ax in fig.axes)
    plt.close(fig)


def test_a_log_axis_over_few_decades_is_labelled_between_its_powers_of_ten():
    fig, ax = plt.subplots()
    ax.semilogy([1, 2, 3], [3.0, 30.0, 70.0])
    tick = figures.FuncFormatter(lambda v, pos: f"{v:g}")
    layout.label_log_axes(fig, tick)
    fig.canvas.draw()
    shown = {t.get_text() for t in ax.get_yticklabels() if t.get_text()}
    assert {"20", "50"} <= shown, shown  # a point at 30 or 70 reads between them
    plt.close(fig)


def _min_phone_px(svg: str) -> float:
    width = float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg).group(1))
    sizes = [float(s) for s in re.findall(r"font(?:-size:|: (?:[a-z]+ )*)\s*([\d.]+)px", svg)]
    # user units are the SVG's pt; the phone shows it PHONE_PX wide, or its own width if narrower
    shown = min(layout.PHONE_PX, width * 4 / 3)
    return min(sizes) * shown / width


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(figures.REGISTRY))
def test_every_figures_phone_version_keeps_its_text_at_nine_pixels(name):
    from sitekit.rendering.pagedata import SiteData

    try:
        svg = figures.render_figure(name, SiteData(REPO / "site_data"), narrow=True)
    except Exception as e:  # noqa: BLE001 - data of an older run, or a table not measured yet
        pytest.skip(f"{name}: {e}")
    assert _min_phone_px(svg) >= layout.PHONE_MIN_PX - 0.05, name


@pytest.mark.build
@pytest.mark.parametrize("edition", EDITIONS)
def test_the_home_page_is_a_way_in(built_site, edition):
    html = (built_site / edition / "index.html").read_text(encoding="utf-8")
    for anchor in ("who-it-is-for", "what-to-know-first", "reading-paths", "the-chapter", "reusing-this-site"):
        assert f'id="{anchor}"' in html, (edition, anchor)
    assert "LICENSE-CC-BY-4.0.txt" in html and "CC-BY-4.0" in html and '<pre class="citation">' in html
    assert "source.tar.gz" in html.split('id="reusing-this-site"', 1)[1]  # where the files are
    assert 'class="md-copyright' in html and "CC BY 4.0" in html.split('class="md-copyright', 1)[1]
    assert "experiments-shared" not in html  # the list of runs lives on the methods page
    assert html.count('class="measured-table"') == 0


@pytest.mark.build
@pytest.mark.parametrize("edition", EDITIONS)
def test_every_measured_page_explains_with_a_picture(built_site, edition):
    for page in MEASURED:
        html = (built_site / edition / page / "index.html").read_text(encoding="utf-8")
        concepts = re.findall(r'data-figure="concepts\.[a-z_]+"', html)
        assert concepts, f"{edition}{page}: no picture that explains"
        for phone in re.findall(r'<source media="[^"]+" srcset="([^"]+)">', html):
            assert (built_site / edition / page / phone).resolve().is_file(), (edition, page, phone)
        assert "<abbr title=" in html, f"{edition}{page}: no glossary term"
