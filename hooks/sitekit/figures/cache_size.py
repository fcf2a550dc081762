"""Figures of the cache-size page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure
from sitekit.figures.kv_cache import CACHED, RECOMPUTE


@figure("cache_size.context_7b")
def context_7b(data):
    df = data.table("cache_size.context_7b").frame
    fig, ax = plt.subplots()
    gib = 2**30
    labels = [f"{t:,}" for t in df.context_tokens]
    ax.bar(labels, df.cache_bytes / gib, color=CACHED, label="KV cache, one sequence (fp16)")
    ax.axhline(df.weights_bytes.iloc[0] / gib, color=RECOMPUTE, linestyle="--", label="weights (fp16)")
    ax.set_xlabel("context (tokens)")
    ax.set_ylabel("GiB")
    ax.legend()
    return fig
