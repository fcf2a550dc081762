"""Figures drawn at build time from site_data, one module per experiment.

A figure function takes the SiteData and returns a matplotlib Figure; register it
with ``@figure("experiment.name")``. Output is SVG with fixed ids and no date, so an
unchanged table gives a byte-identical file.
"""

from __future__ import annotations

import importlib
import io
import pkgutil
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, ScalarFormatter  # noqa: E402

from sitekit import formatting  # noqa: E402
from sitekit.pagedata import SiteDataError  # noqa: E402

REGISTRY: dict[str, Callable] = {}
plt.rcParams.update(
    {
        "svg.hashsalt": "site",  # deterministic element ids
        "svg.fonttype": "none",  # text stays text: selectable, searchable, small
        "figure.figsize": (7.0, 3.8),
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "font.size": 10,
    }
)


def figure(name: str) -> Callable:
    def register(fn: Callable) -> Callable:
        REGISTRY[name] = fn
        return fn

    return register


def _load_all() -> None:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")


def render_figure(name: str, data) -> str:
    if not REGISTRY:
        _load_all()
    if name not in REGISTRY:
        raise SiteDataError(f"no figure {name!r}; known: {', '.join(sorted(REGISTRY))}")
    fig = REGISTRY[name](data)
    _localize_ticks(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def _localize_ticks(fig) -> None:
    """Plain numeric ticks written as the page's locale writes numbers (0,5 and 1 000 on
    a Galician page): matplotlib's own formatter knows only the C locale. Ticks a
    figure labels itself, and log axes' powers of ten, are left as they are."""
    tick = FuncFormatter(lambda v, pos: formatting.number(v, digits=6) if v else "0")
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_formatter()) is ScalarFormatter:
                axis.set_major_formatter(tick)
