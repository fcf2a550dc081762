"""Figures of the speculative-decoding page."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from sitekit.figures import figure, log2_ticks
from sitekit.language.formatting import number
from sitekit.language.i18n import _
from sitekit.language.recorded import data_text
from sitekit.rendering.escape import figure_text

FORMULA, ADJUSTED, MEASURED = "#aab7b8", "#7d3c98", "#2471a3"


@figure("speculative_decoding.real_run")
def real_run(data):
    t = data.table("speculative_decoding.real_run")
    df, label_column = t.frame, t.column("label")
    labels = [
        figure_text(data_text(lab, label_column)).replace(", ", ",\n") + f"\nγ = {g}"
        for lab, g in zip(df.label, df.gamma, strict=True)
    ]
    x = np.arange(len(df))
    w = 0.27
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    ax.bar(x - w, df.predicted_speedup, w, color=FORMULA, label=_("formula: α and c measured"))
    ax.bar(
        x,
        df.predicted_with_verify_cost,
        w,
        color=ADJUSTED,
        label=_("formula with the run's tokens/round and verify cost"),
    )
    # The measured speedup's range, where the data has one (the intervals of its two times).
    ranged = "measured_speedup_low" in df.columns
    yerr = (
        np.vstack([df.measured_speedup - df.measured_speedup_low, df.measured_speedup_high - df.measured_speedup])
        if ranged
        else None
    )
    ax.bar(x + w, df.measured_speedup, w, color=MEASURED, yerr=yerr, capsize=3, label=_("measured wall clock"))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel(_("speedup over plain greedy (×)"))
    ax.legend()
    return fig


@figure("speculative_decoding.formula")
def formula(data):
    df = data.table("speculative_decoding.speedup").frame
    cols = [c for c in df.columns if c.startswith("speedup_g")]
    gammas = [int(c.removeprefix("speedup_g")) for c in cols]
    fig, ax = plt.subplots()
    low = df.draft_cost.min()
    for _index, row in df[(df.alpha_source == "assumed") & (df.draft_cost == low)].iterrows():
        ax.plot(gammas, [row[c] for c in cols], "o-", label=f"α = {number(row.alpha, digits=6)}")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    log2_ticks(ax, gammas)
    ax.set_xlabel(_("draft length γ"))
    ax.set_ylabel(_("predicted speedup at c = {cost} (×)").format(cost=number(low, digits=6)))
    ax.legend()
    return fig


@figure("speculative_decoding.acceptance_by_temperature")
def acceptance_by_temperature(data):
    t = data.table("speculative_decoding.acceptance_by_temperature")
    df, label_column = t.frame, t.column("label")
    fig, ax = plt.subplots(figsize=(7.0, 4.0))
    for _draft, rows in df.groupby("draft", sort=False):
        ax.plot(
            rows.temperature,
            rows.expected_acceptance,
            "o-",
            label=figure_text(data_text(rows.label.iloc[0], label_column)),
        )
    temps = sorted(df.temperature.unique())
    ax.set_xticks(temps, [number(t, digits=6) + ("\n" + _("(greedy)") if t == 0 else "") for t in temps])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(_("temperature T"))
    ax.set_ylabel(_("chance a drafted token is kept, Σ min(p, q)"))
    ax.legend()
    return fig
