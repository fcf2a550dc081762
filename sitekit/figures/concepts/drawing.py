"""What the pictures that explain a concept are drawn with (the modules beside it): panels
whose units are boxes, boxes with a word in them, arrows and notes, in the site's colours.

A concept picture is drawn from code like every figure (SVG, text as text, each word in
the page's language) but from no measurement: its sizes are an illustration, and it
writes no number a run could contradict. Each panel is an axes of its own, side by side,
so that a phone's version stacks them (layout.stack).
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

# New work, kept work, waste, a second series, and the text and lines between them.
NEW, KEPT, WASTE, OTHER, GOOD, BAD = "#d35400", "#2471a3", "#d5d8dc", "#1e8449", "#1e8449", "#c0392b"
INK, FAINT = "#222222", "#7f8c8d"
WORK = ("#2471a3", "#5dade2", "#1e8449", "#58d68d", "#b9770e", "#f5b041", "#7d3c98", "#bb8fce")
TEXT_PT = 10.5  # every word of a concept picture, the 9 pt floor with room


def panels(count: int, width: float, height: float, *, ratios: tuple[float, ...] | None = None):
    """A figure of ``count`` panels side by side (their widths in ``ratios``), each with its
    axes hidden, units equal in x and y; ``width`` and ``height`` in inches, for the desktop."""
    fig, axes = plt.subplots(
        1, count, figsize=(width, height), squeeze=False, gridspec_kw={"width_ratios": ratios} if ratios else None
    )
    for ax in axes[0]:
        ax.set_axis_off()
        ax.set_aspect("equal")
    return fig, list(axes[0])


def frame(ax, x0: float, x1: float, y0: float, y1: float, title: str | None = None) -> None:
    """The panel's extent in its units, and its title above it, on the left."""
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    if title:
        ax.set_title(title, loc="left", fontsize=TEXT_PT + 0.5, color=INK)


def box(
    ax,
    x: float,
    y: float,
    w: float,
    h: float,
    color: str,
    text: str = "",
    *,
    hatch: str | None = None,
    text_color: str | None = None,
    edge: str = "white",
    size: float = TEXT_PT,
) -> None:
    """A box with its lower left corner at (x, y), and a word centred in it."""
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, linewidth=1.0, hatch=hatch))
    if text:
        light = color in (WASTE, "white", "none")
        ax.text(
            x + w / 2,
            y + h / 2,
            text,
            ha="center",
            va="center",
            fontsize=size,
            color=text_color or (INK if light else "white"),
        )


def arrow(
    ax,
    start: tuple[float, float],
    end: tuple[float, float],
    color: str = INK,
    *,
    style: str = "-|>",
    width: float = 1.2,
    bend: float = 0.0,
) -> None:
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle=style,
            mutation_scale=11,
            color=color,
            linewidth=width,
            connectionstyle=f"arc3,rad={bend}",
            shrinkA=1,
            shrinkB=1,
        )
    )


def note(
    ax,
    x: float,
    y: float,
    text: str,
    *,
    ha: str = "left",
    va: str = "center",
    color: str = INK,
    size: float = TEXT_PT,
    weight: str = "normal",
    wrap: int = 0,
) -> None:
    """Words at (x, y); ``wrap``: broken into lines of at most that many characters, as a
    narrow panel needs whatever the language's words."""
    text = textwrap.fill(text, wrap) if wrap else text
    ax.text(x, y, text, ha=ha, va=va, fontsize=size, color=color, fontweight=weight, linespacing=1.3)


def key(ax, x: float, y: float, entries: list[tuple[str, str, str | None]], *, step: float = 0.9) -> None:
    """A key written in the panel, one entry a line: a small box of each colour (and
    hatch), then what it stands for."""
    for i, (color, text, hatch) in enumerate(entries):
        box(ax, x, y - i * step - 0.3, 0.6, 0.6, color, hatch=hatch, edge=FAINT if color == WASTE else "white")
        note(ax, x + 0.85, y - i * step, text)
