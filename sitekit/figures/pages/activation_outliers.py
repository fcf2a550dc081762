"""Figures of the activation-outliers page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure
from sitekit.language import recorded
from sitekit.language.formatting import number
from sitekit.language.i18n import _
from sitekit.rendering.escape import figure_text

# Ten colours no two of which read alike (matplotlib's tab10): one per tracked dimension.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


@figure("activation_outliers.tracked")
def tracked(data):
    df = data.table("activation_outliers.tracked").frame
    layers = data.table("activation_outliers.layers").frame
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.8), sharey=True)
    for i, (dim, g) in enumerate(df.groupby("dim", sort=False)):
        c = COLOURS[i % len(COLOURS)]
        line = "-" if i < len(COLOURS) else "-."  # past ten, a colour comes back with another line
        ax.plot(g.layer, g.max_abs, line, color=c, lw=2 if i == 0 else 1, label=_("dim {dim}").format(dim=dim))
        ax2.plot(g.layer, g.rest_max_abs, line, color=c, lw=2 if i == 0 else 1)
    ax.plot(layers.layer, layers.median_dim_max, "k--", lw=1, label=_("median dimension"))
    ax2.plot(layers.layer, layers.rest_median_dim_max, "k--", lw=1)
    ax.set_yscale("log")
    ax.set_title(_("all tokens"), fontsize=10)
    ax2.set_title(_("without the first token"), fontsize=10)
    ax.set_ylabel(_("max |h| over tokens (log scale)"))
    for a in (ax, ax2):
        a.set_xlabel(_("layer"))
    ax.legend()
    return fig


@figure("activation_outliers.histogram")
def histogram(data):
    df = data.table("activation_outliers.histogram").frame
    fig, ax = plt.subplots()
    x = range(len(df))
    for shift, col, colour, label in (
        (-0.2, "dims", "#c0392b", _("all tokens")),
        (0.2, "dims_rest", "#2471a3", _("without the first token")),
    ):
        xs = [i + shift for i in x]
        ax.bar(xs, df[col], width=0.4, color=colour, label=label)
        for xi, n in zip(xs, df[col], strict=True):
            if 0 < n < 20:  # too short to see: say how many
                ax.annotate(
                    str(n), (xi, n), textcoords="offset points", xytext=(0, 2), ha="center", fontsize=8, color=colour
                )
    ax.set_xticks(
        list(x),
        [f"{number(lo, digits=6)}–{number(hi, digits=6)}" for lo, hi in zip(df.bin_low, df.bin_high, strict=True)],
        rotation=45,
    )
    ax.set_xlabel(_("max |h| of a dimension (power-of-two bins)"))
    ax.set_ylabel(_("dimensions"))
    ax.legend()
    return fig


@figure("activation_outliers.prompt_layers")
def prompt_layers(data):
    df = data.table("activation_outliers.prompt_layers").frame
    dim = data.value("activation_outliers.biggest_dim")["value"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.8), sharey=True)
    for i, (prompt, g) in enumerate(df.groupby("prompt", sort=False)):
        # book passages in one colour, the two prompts that are not prose stand out
        book = str(prompt).startswith("book")
        c = "#7f8c8d" if book else COLOURS[i % len(COLOURS)]
        shown = recorded.data_text(prompt, data.table("activation_outliers.prompt_layers").column("prompt"))
        label = _("book passages") if book and i == 0 else (None if book else figure_text(shown))
        for a, col, med in ((ax, "dim_max", "median_dim_max"), (ax2, "rest_dim_max", "rest_median_dim_max")):
            a.plot(g.layer, g[col], "-", color=c, lw=1 if book else 1.6, label=label if a is ax else None)
            a.plot(g.layer, g[med], ":", color=c, lw=1)
    ax.set_yscale("log")
    ax.set_title(_("all tokens"), fontsize=10)
    ax2.set_title(_("without the first token"), fontsize=10)
    ax.set_ylabel(_("max |h| over tokens (log scale)\nsolid: dim {dim}; dotted: median dimension").format(dim=dim))
    for a in (ax, ax2):
        a.set_xlabel(_("layer"))
    ax.legend()
    return fig


@figure("activation_outliers.tensors")
def tensors(data):
    """INT8 levels one tensor-wide scale leaves each tensor, layer by layer: the residual
    stream dashed (no scheme quantizes it), each projection input solid."""
    table = data.table("activation_outliers.tensors")
    df = table.frame
    fig, ax = plt.subplots(figsize=(9.0, 3.8))
    for i, (tensor, g) in enumerate(df.groupby("tensor", sort=False)):
        residual = i == 0  # the table lists the residual stream first
        ax.plot(
            g.layer,
            g.levels,
            "--" if residual else "-",
            color="#7f7f7f" if residual else COLOURS[i % len(COLOURS)],
            lw=1.2 if residual else 1.6,
            marker=None if residual else "o",
            markersize=3,
            label=figure_text(recorded.data_text(tensor, table.column("tensor"))),
        )
    ax.axhline(256, color="k", lw=0.6, ls=":")
    ax.set_ylim(0, 270)
    ax.set_xlabel(_("layer"))
    ax.set_ylabel(_("INT8 levels used, one scale (of 256)"))
    ax.legend(fontsize=8, loc="lower left", ncol=2)
    return fig
