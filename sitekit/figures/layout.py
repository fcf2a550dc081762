"""How a figure is laid out for the screen that shows it: the phone's version of every
figure, and log axes labelled densely enough to read every point.

A page shows each figure twice over (figures.render_figure, markers.figure): the desktop
SVG, and, below 720 px, a narrow one drawn from the same figure, its panels stacked in
one column and no wider than NARROW_IN, so that once the phone scales it to its screen
(PHONE_PX) no text is under PHONE_MIN_PX.
"""

from __future__ import annotations

import math

from matplotlib.gridspec import GridSpec
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

# A 390 px phone shows the text column about 358 px wide (the theme's 0.8 rem margins); a
# figure there must keep its text at 9 px or more, the size the desktop figures' 9 pt is
# scaled to at worst. Drawn for 350 px, it keeps that with room for a scroll bar or rounding.
PHONE_PX = 350
PHONE_MIN_PX = 9.0
NARROW_IN = 5.0  # as drawn: 480 px, shown at about 358 px, so 9 pt text reads as about 9 px
PANEL_IN = 3.0  # the height of each stacked panel


def stack(fig) -> None:
    """The figure narrowed for a phone: panels side by side are stacked in one column, in
    reading order (row by row), and the whole is NARROW_IN wide. Panels drawn to scale
    (equal units in x and y, as the concept pictures are) keep their proportions: each row
    is as tall as its panel needs, with room for its title."""
    grids = {}
    for ax in fig.axes:
        spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
        if spec is not None:
            grids.setdefault(id(spec.get_gridspec()), (spec.get_gridspec(), []))[1].append((ax, spec))
    width, height = fig.get_size_inches()
    panels = 1
    for grid, members in grids.values():
        rows, cols = grid.get_geometry()
        if cols < 2:
            panels = max(panels, rows)
            continue
        cells = sorted({(s.rowspan.start, s.colspan.start) for _ax, s in members})
        order = {cell: i for i, cell in enumerate(cells)}
        at = {order[(s.rowspan.start, s.colspan.start)]: ax for ax, s in members}
        ratios = [_drawn_ratio(at[i]) for i in range(len(cells))]
        if all(ratios):  # to scale: the height each panel's drawing needs, plus its title
            column = GridSpec(len(cells), 1, figure=fig, height_ratios=ratios, hspace=0.3)
            height = NARROW_IN * 0.92 * sum(ratios) + 0.45 * len(cells)
        else:
            column = GridSpec(len(cells), 1, figure=fig, hspace=0.55)
            height = PANEL_IN * len(cells) + 0.6
        for ax, spec in members:
            ax.set_subplotspec(column[order[(spec.rowspan.start, spec.colspan.start)], 0])
        fig.set_size_inches(NARROW_IN, height)
        panels = 0
    if panels > 1:
        fig.set_size_inches(NARROW_IN, PANEL_IN * panels + 0.6)
    elif panels == 1:
        fig.set_size_inches(NARROW_IN, max(PANEL_IN, height * NARROW_IN / width))
    for ax in fig.axes:  # each stacked panel labels its own values: a shared axis hid all but the first's
        ax.tick_params(labelleft=True, labelbottom=True)
    for legend in list(fig.legends):  # a legend for the whole figure lists its entries one under another
        _one_column(fig, legend)


def _drawn_ratio(ax) -> float:
    """Height over width of a panel drawn to scale; 0 for a chart, whose axes stretch."""
    if ax.get_aspect() != 1.0:
        return 0.0
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return abs(y1 - y0) / abs(x1 - x0)


def _one_column(fig, legend) -> None:
    """A figure's legend drawn again in one column, where it stood."""
    labels = [t.get_text() for t in legend.texts]
    size = max((t.get_fontsize() for t in legend.texts), default=None)
    anchor = legend.get_bbox_to_anchor().transformed(fig.transFigure.inverted())
    loc = legend._loc
    legend.remove()
    fig.legend(
        legend.legend_handles,
        labels,
        loc=loc,
        bbox_to_anchor=(anchor.x0, anchor.y0, anchor.width, anchor.height),
        ncol=1,
        fontsize=size,
        frameon=False,
    )


def label_log_axes(fig, tick) -> None:
    """A log axis that spans few decades is labelled at 1, 2 and 5 of each (and at every
    digit within one decade), not at its powers of ten alone: a point between 10 and 100
    must be readable from the axis. ``tick`` writes a number as the page's locale does."""
    for ax in fig.axes:
        for axis, limits, scale in (
            (ax.xaxis, ax.get_xlim(), ax.get_xscale()),
            (ax.yaxis, ax.get_ylim(), ax.get_yscale()),
        ):
            locator = axis.get_major_locator()
            # only the scale's own locator, at the powers of ten: a figure that placed its ticks keeps them
            if scale != "log" or not isinstance(locator, LogLocator) or list(locator._subs) != [1.0]:
                continue
            low, high = sorted(abs(v) for v in limits)
            if low <= 0:
                continue
            decades = math.log10(high / low)
            if decades > 3:
                continue
            subs = (1.0, 2.0, 5.0) if decades > 1.2 else (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0)
            axis.set_major_locator(LogLocator(base=10, subs=subs))
            axis.set_major_formatter(FuncFormatter(tick))
            axis.set_minor_formatter(NullFormatter())
