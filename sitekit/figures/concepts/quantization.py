"""Pictures that explain quantization: a grid of levels set by one outlier against one set
by a group of ordinary weights (the weights page), and where an activation's scale is
computed (the outliers page)."""

from __future__ import annotations

from sitekit.figures import figure
from sitekit.figures.concepts.drawing import BAD, FAINT, INK, KEPT, NEW, arrow, box, frame, note, panels
from sitekit.language.i18n import _

# An illustration: ordinary weights as a share of the largest ordinary one, and an outlier
# twelve times that. A 4-bit symmetric grid has 16 levels, -8 to 7 steps of the scale.
ORDINARY = (-0.92, -0.63, -0.41, -0.18, -0.04, 0.12, 0.33, 0.52, 0.74, 1.0)
OUTLIER = 12.0
LEVELS = range(-8, 8)


def _grid(ax, largest: float, weights: tuple[float, ...], title: str, width: float) -> None:
    """Weights (dots, above) and the levels of the grid whose scale ``largest`` sets (ticks,
    below); each weight's arrow goes to the level it rounds to."""
    scale = largest / 7
    to_x = width / (2 * largest)  # the panel's units per unit of weight
    frame(ax, -width / 2 - 0.6, width / 2 + 0.6, -2.6, 3.2, title)
    ax.plot([-width / 2, width / 2], [0, 0], color=FAINT, lw=1)
    for k in LEVELS:
        x = k * scale * to_x
        if abs(x) <= width / 2 + 1e-9:
            ax.plot([x, x], [-0.25, 0.25], color=INK, lw=1.2)
    used = set()
    for i, w in enumerate(weights):
        level = max(-8, min(7, round(w / scale)))
        used.add(level)
        x, y = w * to_x, 1.3 + 0.35 * (i % 3)
        color = BAD if abs(w) > 1.0 else KEPT
        ax.plot([x], [y], "o", color=color, ms=6)
        arrow(ax, (x, y - 0.12), (level * scale * to_x, 0.3), color, width=0.8)
    note(ax, 0, -0.9, _("levels of the grid ({used} used by these weights)").format(used=len(used)), ha="center")
    note(ax, 0, 2.7, _("weights"), ha="center", color=FAINT)


@figure("concepts.quantization")
def quantization(data):
    """The same ordinary weights under a scale the outlier sets, and under one their own group sets."""
    fig, (left, right) = panels(2, 10.0, 3.4)
    _grid(left, OUTLIER, (*ORDINARY, OUTLIER), _("one scale for the matrix: the outlier sets it"), 9.0)
    _grid(right, max(ORDINARY), ORDINARY, _("one scale for a group without it"), 9.0)
    note(left, -4.5, -1.8, _("red: the outlier"), color=BAD)
    return fig


TOKENS, DIMS, SPIKE = 5, 8, 2  # a hidden state drawn as tokens x dimensions; the outlier's dimension


def _scales(ax, where: str, title: str, named: bool) -> None:
    """The hidden state; shaded, the cells that share a scale with the spike (first token,
    the outlier's dimension), so that its size sets their step. ``named``: the first token's
    row is named beside it."""
    frame(ax, -2.6 if named else -0.3, DIMS + 0.2, -1.6, TOKENS + 0.4, title)
    for t in range(TOKENS):
        for d in range(DIMS):
            spike = t == 0 and d == SPIKE
            shares = where == "tensor" or (where == "token" and t == 0) or (where == "dimension" and d == SPIKE)
            color = BAD if spike else NEW if d == SPIKE else "#f5cba7" if shares else "white"
            box(ax, d, TOKENS - 1 - t, 0.9, 0.9, color, edge=FAINT)
    if named:
        note(ax, -0.2, TOKENS - 0.55, _("first token"), ha="right", size=9.5, wrap=12)
    note(ax, SPIKE + 0.45, -0.6, _("outlier dimension"), ha="center", size=9.5)


@figure("concepts.activation_scales")
def activation_scales(data):
    """One scale per tensor, per token, per dimension: which cells the spike's size sets."""
    fig, axes = panels(3, 10.5, 2.9)
    for i, (ax, (where, title)) in enumerate(
        zip(
            axes,
            (
                ("tensor", _("one scale per tensor")),
                ("token", _("one scale per token (row)")),
                ("dimension", _("one scale per dimension (column)")),
            ),
            strict=True,
        )
    ):
        _scales(ax, where, title, named=i == 0)
    box(axes[0], -0.6, -1.55, 0.5, 0.5, "#f5cba7", edge=FAINT)
    note(axes[0], 0.1, -1.3, _("shaded: its step is set by the spike"), size=9.5)
    return fig
