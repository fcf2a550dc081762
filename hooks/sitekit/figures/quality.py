"""Figures of the quality page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.escape import figure_text
from sitekit.figures import figure
from sitekit.i18n import _, data_text


@figure("quality.quality")
def quality(data):
    t = data.table("quality.quality")
    df, label_column = t.frame, t.column("label")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.8), sharey=True)
    y = list(range(len(df)))
    colours = ["#5d6d7e" if v == "reference" else "#2471a3" for v in df.variant]
    ax.barh(y, df.perplexity, color=colours)
    ax.set_xscale("log")
    ax.set_xlabel(_("perplexity (log scale, lower is better)"))
    ax.set_yticks(y, [figure_text(data_text(lab, label_column)) for lab in df.label])
    ax.invert_yaxis()
    ax2.barh(y, df.agreement, color=colours)
    ax2.set_xlim(0, 1)
    ax2.set_xlabel(_("agreement with the reference"))
    return fig
