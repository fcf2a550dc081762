"""Figures of the quality page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure, log_if_wide
from sitekit.language.formatting import number
from sitekit.language.i18n import _
from sitekit.language.recorded import data_text
from sitekit.rendering.escape import figure_text


@figure("quality.quality")
def quality(data):
    t = data.table("quality.quality")
    df, label_column = t.frame, t.column("label")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.8), sharey=True)
    y = list(range(len(df)))
    colours = ["#5d6d7e" if v == "reference" else "#2471a3" for v in df.variant]
    ppl = df.perplexity
    # A variant that broke the model (perplexity over ten times the reference's) would make
    # every other bar a sliver: its bar is cut at the axis's end and its value written on it.
    ref = ppl[df.variant == "reference"].min() if (df.variant == "reference").any() else ppl.min()
    broken = ppl > 10 * ref
    rest = ppl[~broken]
    if broken.any() and not rest.empty and not log_if_wide(rest):
        top = rest.max() * 1.15
        ax.barh(y, ppl.clip(upper=top), color=colours)
        for yi, v in zip(y, ppl, strict=True):
            if v > top:
                ax.annotate(
                    f"{number(v, digits=0, fixed=True)} →",
                    (top, yi),
                    xytext=(-4, 0),
                    textcoords="offset points",
                    ha="right",
                    va="center",
                    color="white",
                    fontweight="bold",
                )
        ax.set_xlim(0, top)
        ax.set_xlabel(_("perplexity (lower is better)"))
    elif log_if_wide(ppl):
        ax.barh(y, ppl, color=colours)
        ax.set_xscale("log")
        ax.set_xlabel(_("perplexity (log scale, lower is better)"))
    else:
        ax.barh(y, ppl, color=colours)
        ax.set_xlabel(_("perplexity (lower is better)"))
    ax.set_yticks(y, [figure_text(data_text(lab, label_column)) for lab in df.label])
    ax.invert_yaxis()
    ax2.barh(y, df.agreement, color=colours)
    ax2.set_xlim(0, 1)
    ax2.set_xlabel(_("agreement with the reference"))
    return fig
