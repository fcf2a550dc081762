"""Figures of the cache-size page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure
from sitekit.figures.pages.kv_cache import CACHED, RECOMPUTE
from sitekit.language.formatting import integer
from sitekit.language.i18n import _


@figure("cache_size.context_7b")
def context_7b(data):
    df = data.table("cache_size.context_7b").frame
    fig, ax = plt.subplots()
    gib = 2**30
    labels = [integer(t) for t in df.context_tokens]
    ax.bar(labels, df.cache_bytes / gib, color=CACHED, label=_("KV cache, one sequence (fp16)"))
    ax.axhline(df.weights_bytes.iloc[0] / gib, color=RECOMPUTE, linestyle="--", label=_("weights (fp16)"))
    ax.set_xlabel(_("context (tokens)"))
    ax.set_ylabel(_("GiB"))
    ax.legend()
    return fig
