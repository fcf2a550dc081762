"""Figures drawn at build time from site_data, one module per experiment.

A figure function takes the SiteData and returns a matplotlib Figure; register it
with ``@figure("experiment.name")``. A function with a ``narrow`` parameter draws the
phone's version itself; any other's is its desktop figure stacked (layout.py).
Output is SVG with fixed ids and no date, so an unchanged table gives a byte-identical file.

A module places no legend and sizes no text: ``readable`` puts every axes' legend under
the axes, out of the data, and raises every text to 9 pt at the width the page shows
the figure at. A log scale is for data spanning more than a decade (``log_if_wide``).
"""

from __future__ import annotations

import importlib
import inspect
import io
import multiprocessing
import os
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, NullFormatter, ScalarFormatter  # noqa: E402

from sitekit.figures import cache, layout  # noqa: E402
from sitekit.language import catalog_entries, formatting, i18n  # noqa: E402
from sitekit.rendering.pagedata import SiteDataError  # noqa: E402

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
    for mod in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):  # concepts/ too
        importlib.import_module(mod.name)


def render_figure(name: str, data, narrow: bool = False) -> str:
    """The figure as SVG, for a desktop or, ``narrow``, for a phone (layout.py)."""
    if not REGISTRY:
        _load_all()
    if name not in REGISTRY:
        raise SiteDataError(f"no figure {name!r}; known: {', '.join(sorted(REGISTRY))}")
    draw, language = REGISTRY[name], i18n.language()
    kept = cache.kept(draw, name, data, language, narrow)
    # make messages (SITEKIT_MESSAGES) draws every figure: each label it asks for is listed
    if kept is not None and kept.exists() and not os.environ.get("SITEKIT_MESSAGES"):
        return kept.read_text(encoding="utf-8")
    with data.reads() as read, catalog_entries.lookups() as asked:
        if narrow and "narrow" in inspect.signature(draw).parameters:
            fig = draw(data, narrow=True)  # a layout of its own for a phone (a concept picture)
        else:
            fig = draw(data)
    if narrow and "narrow" not in inspect.signature(draw).parameters:
        layout.stack(fig)
    _localize_ticks(fig)
    if narrow:
        readable(fig, display_px=layout.PHONE_PX, min_pt=layout.PHONE_MIN_PX * 3 / 4)
    else:
        readable(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    cache.keep(draw, name, data, language, narrow, svg, {"experiments": read, "messages": asked})
    return svg


def _localize_ticks(fig) -> None:
    """Plain numeric ticks written as the page's locale writes numbers (0,5 and 1 000 on
    a Galician page): matplotlib's own formatter knows only the C locale. Ticks a
    figure labels itself, and log axes' powers of ten, are written out too."""
    tick = FuncFormatter(lambda v, pos: formatting.number(v, digits=6) if v else "0")
    layout.label_log_axes(fig, tick)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_formatter()) is ScalarFormatter:
                axis.set_major_formatter(tick)
            elif type(axis.get_major_formatter()) is LogFormatterSciNotation:
                # 1 000 rather than 10³: a superscript would be drawn at 70 % of the size
                axis.set_major_formatter(tick)
                axis.set_minor_formatter(NullFormatter())


# The widest a figure is shown on a 1280 px desktop: the content column between the two
# sidebars (narrower than the 46rem max-width of .measured-figure img). The theme's figure
# is as wide as its content, so a narrower SVG shows at its own size (1 pt = 4/3 px), a
# wider one is scaled down to this. Its text must read as at least MIN_PT either way.
DISPLAY_PX = 748
MIN_PT = 9.0


def log_if_wide(values) -> bool:
    """A log scale only where the values span more than a decade; linear otherwise."""
    v = [float(x) for x in values if x == x and float(x) > 0]
    return bool(v) and max(v) / min(v) > 10


def log2_ticks(ax, values) -> None:
    """An x axis in powers of two with a tick at each of ``values``, written as the page's
    tables write integers (1.024 on an Italian page), and no minor ticks between them."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(values), [formatting.integer(v) for v in values])
    ax.minorticks_off()


def min_font_pt(width_pt: float, display_px: float = DISPLAY_PX, min_pt: float = MIN_PT) -> float:
    """The smallest font (pt in the SVG) that reads as ``min_pt`` once a figure ``width_pt``
    wide is shown on the page, at most ``display_px`` wide."""
    return min_pt * max(1.0, width_pt * 4 / 3 / display_px)


def readable(fig, display_px: float = DISPLAY_PX, min_pt: float = MIN_PT) -> None:
    """Legends out of the data (below the axes), every text big enough once scaled to
    ``display_px`` (a desktop's column; a phone's for a narrow figure)."""
    for ax in fig.axes:
        if ax.get_legend() is not None:
            _legend_below(fig, ax)
    for _round in range(4):  # bigger text widens the figure: settle
        renderer = fig.canvas.get_renderer()
        width = (fig.get_tightbbox(renderer).width + 2 * plt.rcParams["savefig.pad_inches"]) * 72  # as saved
        need = min_font_pt(width, display_px, min_pt) * 1.02
        small = [t for t in fig.findobj(Text) if t.get_text() and t.get_fontsize() < need]
        if not small:
            break
        for ax in fig.axes:
            for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                ticks = axis.get_ticklabels(which="both")
                if ticks and min(t.get_fontsize() for t in ticks) < need:
                    ax.tick_params(axis=name, which="both", labelsize=need)
        for t in small:
            t.set_fontsize(need)
        for ax in fig.axes:
            if ax.get_legend() is not None:
                _legend_below(fig, ax)


def _legend_below(fig, ax) -> None:
    """Move an axes' legend under all the axes (their tick labels and axis labels), centred
    on the figure, in as many columns as fit its width."""
    old = ax.get_legend()
    if not old.texts:
        return
    handles, labels = ax.get_legend_handles_labels()
    texts = [t.get_text() for t in old.texts]
    if labels != texts:
        handles, labels = old.legend_handles, texts
    size = max(t.get_fontsize() for t in old.texts)
    old.remove()
    renderer = fig.canvas.get_renderer()
    boxes = [a.get_tightbbox(renderer) for a in fig.axes]
    inv = fig.transFigure.inverted()
    bottom = inv.transform((0, min(b.y0 for b in boxes)))[1]
    left = inv.transform((min(a.get_window_extent().x0 for a in fig.axes), 0))[0]
    right = inv.transform((max(a.get_window_extent().x1 for a in fig.axes), 0))[0]
    for ncol in range(len(labels), 0, -1):
        leg = ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=((left + right) / 2, bottom - 0.01),
            bbox_transform=fig.transFigure,
            ncol=ncol,
            fontsize=size,
            frameon=False,
        )
        if ncol == 1 or leg.get_window_extent(renderer).width <= fig.bbox.width:
            break
        leg.remove()


_PREPARING: dict = {}


# a page's figure marker: {{ figure('experiment.name', ...) }}
_NAMED = re.compile(r"""figure\(\s*['"]([a-z0-9_]+\.[a-z0-9_]+)['"]""")


def prepare(data, languages: list[str], workers: int, docs: Path) -> int:
    """Draw every figure a page of ``docs`` shows, in every edition of ``languages``,
    that the cache does not hold yet, ``workers`` at a time, before the first page asks
    for one: the editions are built one after another, but their figures need not be.
    Only those: a build of a few pages (the tests make some) draws no other. A figure
    that fails here is left to its page, which reports it. Returns how many were drawn."""
    if not REGISTRY:
        _load_all()
    shown = {name for page in docs.rglob("*.md") for name in _NAMED.findall(page.read_text(encoding="utf-8"))}
    names = sorted(shown & set(REGISTRY))
    todo = [
        (n, lang, narrow)
        for lang in languages
        for n in names
        for narrow in (False, True)
        if not ((kept := cache.kept(REGISTRY[n], n, data, lang, narrow)) and kept.exists())
    ]
    if workers < 2 or len(todo) < 2:
        return 0
    _PREPARING["data"] = data  # inherited by the forked workers
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        drawn = pool.starmap(_draw, todo)
    return sum(drawn)


def _draw(name: str, language: str, narrow: bool) -> bool:
    try:
        i18n.set_language(language)
        formatting.set_locale(language)
        render_figure(name, _PREPARING["data"], narrow)
        return True
    except Exception:  # noqa: BLE001 - the page that shows the figure reports the error
        return False
