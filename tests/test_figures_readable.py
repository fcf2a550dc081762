"""Every figure, drawn from the committed data, reads at its displayed width: no text under
9 pt once the SVG is scaled to the page, no legend over the data."""

import io
import re

import matplotlib.pyplot as plt
import pytest
from sitekit import figures
from sitekit.figures import DISPLAY_PX, MIN_PT, log_if_wide, readable
from sitekit.pagedata import SiteData

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


@pytest.mark.parametrize("name", sorted(figures.REGISTRY))
def test_no_legend_over_the_data(name):
    fig = _draw(name)
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        area = ax.get_window_extent(renderer)
        for leg in [ax.get_legend(), *fig.legends]:
            if leg is not None:
                assert not leg.get_window_extent(renderer).overlaps(area), f"{name}: legend over the axes"
    plt.close(fig)


@pytest.mark.parametrize("name", sorted(figures.REGISTRY))
def test_every_text_reads_at_9pt_on_the_page(name):
    fig = _draw(name)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    width_pt = float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg).group(1))
    sizes = [float(s) for s in re.findall(r"font(?:-size:|: (?:[a-z]+ )*)\s*([\d.]+)px", svg)]
    assert sizes, f"{name}: no text found in the SVG"
    # The SVG's user unit is its pt (4/3 CSS px); the image, width_pt·4/3 px wide, is scaled
    # to DISPLAY_PX: a size s shows as s·DISPLAY_PX/width_pt px, that is 3/4 as many pt.
    shown = min(sizes) * DISPLAY_PX / width_pt * 0.75
    assert shown >= MIN_PT - 1e-6, f"{name}: smallest text {shown:.1f} pt on the page"


def test_log_only_past_a_decade():
    assert not log_if_wide([19.8, 41.4, 33.9])
    assert log_if_wide([0.0005, 0.22])
    assert not log_if_wide([float("nan"), 0, 5])


@pytest.mark.parametrize("name", sorted(figures.REGISTRY))
def test_a_log_axis_spans_about_a_decade(name):
    fig = _draw(name)
    for ax in fig.axes:
        for scale, lim in ((ax.get_xscale(), ax.get_xlim()), (ax.get_yscale(), ax.get_ylim())):
            if scale == "log":
                assert max(lim) / min(lim) > 8, (
                    f"{name}: a log scale over {max(lim) / min(lim):.1f}×, linear reads better"
                )
    plt.close(fig)
