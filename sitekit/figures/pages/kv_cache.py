"""Figures of the KV-cache page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure
from sitekit.language.formatting import integer
from sitekit.language.i18n import _

RECOMPUTE, CACHED = "#c0392b", "#2471a3"


@figure("kv_cache.head_step")
def head_step(data):
    df = data.table("kv_cache.head_step").frame
    fig, ax = plt.subplots()
    ax.loglog(df.context, df.recompute_ms, "o-", color=RECOMPUTE, label=_("recompute: n × n scores"))
    ax.loglog(df.context, df.cached_ms, "s-", color=CACHED, label=_("cached: 1 × n scores"))
    ax.set_xlabel(_("context n (tokens)"))
    ax.set_ylabel(_("one step (ms, median)"))
    ax.set_xticks(df.context, [integer(n) for n in df.context])  # 1.024 on an Italian page, as its tables
    ax.minorticks_off()
    ax.legend()
    return fig


@figure("kv_cache.macs_per_step")
def macs_per_step(data):
    df = data.table("kv_cache.macs_per_step").frame
    fig, ax = plt.subplots()
    ax.loglog(df.context, df.recompute_macs, "o-", color=RECOMPUTE, label=_("recompute step"))
    ax.loglog(df.context, df.cached_macs, "s-", color=CACHED, label=_("cached step"))
    ax.set_xlabel(_("context n (tokens)"))
    ax.set_ylabel(_("multiply-accumulates per step"))
    ax.legend()
    return fig
