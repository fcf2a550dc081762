"""Figures of the memory-budget page."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from sitekit.figures import figure
from sitekit.language.formatting import number
from sitekit.language.i18n import _

SERIES = (("7B", "#2471a3"), ("13B", "#c0392b"), ("70B", "#7d3c98"))
HATCH = {"fp16": "", "int4 g128": "//"}


@figure("memory_budget.tokens_by_card")
def tokens_by_card(data):
    df = data.table("memory_budget.budget").frame
    cards = sorted(df.card_gib.unique())
    x = np.arange(len(cards))
    bars = [(m, p, c) for m, c in SERIES for p in HATCH]
    width = 0.8 / len(bars)
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    unfit = None
    for i, (model, precision, color) in enumerate(bars):
        sel = df[(df.model == model) & (df.precision == precision)].set_index("card_gib")
        heights = [sel.max_tokens.get(c) for c in cards]
        heights = [h if h == h and h and h > 0 else 0 for h in heights]  # NaN (does not fit) or 0: no bar
        at = x + (i - (len(bars) - 1) / 2) * width
        missing = [a for a, h in zip(at, heights, strict=True) if not h]
        if missing:  # no bar: a cross at its foot, so that no series is silently absent
            ax.plot(missing, [0.03] * len(missing), "x", color=color, ms=7, mew=2, transform=ax.get_xaxis_transform())
            unfit = Line2D([], [], marker="x", ls="none", color="#555555", ms=7, mew=2, label=_("does not fit"))
        ax.bar(
            at,
            heights,
            width,
            color=color if precision == "fp16" else "white",
            edgecolor=color,
            hatch=HATCH[precision],
            label=f"{model} {precision}",
        )
    ax.set_yscale("log")
    ax.set_xticks(x, [f"{number(c, digits=6)} GiB" for c in cards])
    ax.set_ylabel(_("max resident tokens"))
    handles = ax.get_legend_handles_labels()[0] + ([unfit] if unfit else [])
    ax.legend(handles=handles)
    return fig
