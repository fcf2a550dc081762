"""Figures of the prompt-reuse.md page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure
from sitekit.language.i18n import _


@figure("prompt_reuse.prefill")
def prefill(data):
    df = data.table("prompt_reuse.prefill").frame
    fig, ax = plt.subplots()
    below, above = df.time_ms - df.time_low_ms, df.time_high_ms - df.time_ms
    ax.errorbar(df.prompt_tokens, df.time_ms, yerr=[below, above], marker="o", capsize=3)
    ax.set_xlabel(_("prompt (tokens)"))
    ax.set_ylabel(_("prefill (ms)"))
    return fig
