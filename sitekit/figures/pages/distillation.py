"""Figures of the distillation page."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from sitekit.figures import figure, log_if_wide
from sitekit.language.formatting import number
from sitekit.language.i18n import _
from sitekit.rendering.escape import figure_text

COLORS = ("#7d3c98", "#2471a3", "#17a589", "#d68910", "#c0392b")


@figure("distillation.distribution")
def distribution(data):
    df = data.table("distillation.distribution").frame
    temps = sorted(df.temperature.unique())
    ranks = sorted(df["rank"].unique())
    tokens = [figure_text(repr(t)) for t in df[df.temperature == temps[0]].sort_values("rank").token]
    x = np.arange(len(ranks))
    width = 0.8 / len(temps)
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for i, t in enumerate(temps):
        sel = df[df.temperature == t].sort_values("rank")
        ax.bar(
            x + (i - (len(temps) - 1) / 2) * width,
            sel.probability,
            width,
            color=COLORS[i % 5],
            label=f"T = {number(t, digits=6)}",
        )
    ax.set_xticks(x, tokens, rotation=30, ha="right")
    if log_if_wide(df.probability):  # a hot temperature's bars would be slivers beside T = 0.5's
        ax.set_yscale("log")
        ax.set_ylabel(_("probability (log scale)"))
    else:
        ax.set_ylabel(_("probability"))
    ax.set_xlabel(_("next token (ranked at T = 1)"))
    ax.legend()
    return fig
