"""Every figure, drawn from the committed data, reads at its displayed width: no text under
9 pt once the SVG is scaled to the page, no legend over the data."""

import io
import re

import matplotlib.pyplot as plt
import pytest

from sitekit import figures
from sitekit.figures import DISPLAY_PX, MIN_PT, log_if_wide, readable
from sitekit.rendering.pagedata import SiteData
from tests.conftest import REPO

figures._load_all()
DATA = SiteData(REPO / "site_data")


def _draw(name):
    try:
        fig = figures.REGISTRY[name](DATA)
    except Exception as e:  # noqa: BLE001 - data of an older run, or a table not measured yet
        pytest.skip(f"{name}: {e}")
    figures._localize_ticks(fig)
    readable(fig)
    return fig


def legends_over_data(fig) -> int:
    renderer = fig.canvas.get_renderer()
    legends = [leg for leg in [*(ax.get_legend() for ax in fig.axes), *fig.legends] if leg is not None]
    return sum(
        leg.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)) for leg in legends for ax in fig.axes
    )


def smallest_shown_pt(fig) -> float:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buf.getvalue()
    width_pt = float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg).group(1))
    sizes = [float(s) for s in re.findall(r"font(?:-size:|: (?:[a-z]+ )*)\s*([\d.]+)px", svg)]
    assert sizes, "no text found in the SVG"
    # The SVG's user unit is its pt (4/3 CSS px); the image, width_pt·4/3 px wide, shows at
    # that width, or scaled down to DISPLAY_PX where it is wider.
    return min(sizes) * min(1.0, DISPLAY_PX / (width_pt * 4 / 3))


@pytest.mark.parametrize("name", sorted(figures.REGISTRY))
def test_each_figure_reads_on_the_page(name):
    """No legend over the data, no text under 9 pt as shown, no log axis over less than a
    decade: three readings of one drawing (a figure takes about a second to draw)."""
    fig = _draw(name)
    try:
        assert not legends_over_data(fig), f"{name}: a legend over the axes"
        for ax in fig.axes:
            for scale, lim in ((ax.get_xscale(), ax.get_xlim()), (ax.get_yscale(), ax.get_ylim())):
                if scale == "log":
                    assert max(lim) / min(lim) > 8, (
                        f"{name}: a log scale over {max(lim) / min(lim):.1f}×, linear reads better"
                    )
        shown = smallest_shown_pt(fig)
        assert shown >= MIN_PT - 1e-6, f"{name}: smallest text {shown:.1f} pt on the page"
    finally:
        plt.close(fig)


def test_a_small_legend_in_the_data_is_moved_and_enlarged():
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11.0, 3.8))
    for a in (ax, ax2):
        a.plot([1, 2, 3], [3, 1, 2], label="a series with a long name")
        a.plot([1, 2, 3], [1, 2, 3], label="another")
    ax.legend(loc="center", fontsize=5)
    ax.set_title("tiny", fontsize=6)
    assert legends_over_data(fig) and smallest_shown_pt(fig) < MIN_PT  # the checks see the fault
    readable(fig)
    assert not legends_over_data(fig)
    assert smallest_shown_pt(fig) >= MIN_PT - 1e-6
    plt.close(fig)


def test_log_only_past_a_decade():
    assert not log_if_wide([19.8, 41.4, 33.9])
    assert log_if_wide([0.0005, 0.22])
    assert not log_if_wide([float("nan"), 0, 5])


def test_a_build_draws_ahead_only_the_figures_its_pages_show_in_the_editions_it_builds(tmp_path, monkeypatch):
    monkeypatch.setattr(figures.cache, "CACHE", tmp_path / "cache")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "one.md").write_text("{{ figure('kv_cache.head_step', alt='a') }}\n", encoding="utf-8")
    (docs / "one.gl.md").write_text("{{ figure( \"quality.quality\", alt='b') }} figure('no_such.figure')\n")
    (docs / "notes.txt").write_text("{{ figure('batching.sweep') }}\n")  # not a page
    assert figures.prepare(DATA, ["en", "gl"], workers=2, docs=docs) == 8  # each for a desktop and a phone
    drawn = sorted(p.relative_to(tmp_path / "cache").as_posix().rsplit(".", 2)[0] for p in tmp_path.rglob("*.svg"))
    assert drawn == [
        f"{lang}/{name}{phone}"
        for lang in ("en", "gl")
        for name in ("kv_cache.head_step", "quality.quality")
        for phone in ("", ".narrow")
    ]
    assert figures.prepare(DATA, ["en", "gl"], workers=2, docs=docs) == 0  # all held now
