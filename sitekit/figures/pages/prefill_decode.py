"""Figures of the prefill-and-decode page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure, log2_ticks, log_if_wide
from sitekit.language.i18n import _

PREFILL, DECODE, COMPILED, FLOOR = "#2471a3", "#c0392b", "#1e8449", "#555555"


def _bars(df, median: str, low: str, spread: str):
    """Error bars: the 95 % interval where the data has one, else half the IQR either side
    (data measured before intervals)."""
    if low in df:
        return [df[median] - df[low], df[low.replace("_low", "_high")] - df[median]]
    return df[spread] / 2


@figure("prefill_decode.decode")
def decode(data):
    df = data.table("prefill_decode.decode").frame
    fig, ax = plt.subplots()
    yerr = _bars(df, "step_ms", "step_low_ms", "spread_ms")
    label = (
        _("eager decode step (median, bar: 95 % interval)")
        if "step_low_ms" in df
        else _("eager decode step (median, bar: IQR)")
    )
    ax.errorbar(
        df.cache_tokens,
        df.step_ms,
        yerr=yerr,
        fmt="o-",
        color=DECODE,
        capsize=3,
        label=label,
    )
    compiled = df.dropna(subset=["compiled_ms"])
    if not compiled.empty:
        ax.errorbar(
            compiled.cache_tokens,
            compiled.compiled_ms,
            yerr=_bars(compiled, "compiled_ms", "compiled_low_ms", "compiled_spread_ms"),
            fmt="s--",
            color=COMPILED,
            capsize=3,
            label=_("compiled step, static cache"),
        )
    ax.plot(df.cache_tokens, df.floor_ms, "-", color=FLOOR, lw=2, label=_("floor: weight bytes / bandwidth"))
    ax.plot(df.cache_tokens, df.floor_with_cache_ms, ":", color=FLOOR, lw=1.5, label=_("floor with the cache's bytes"))
    ax.fill_between(df.cache_tokens, 0, df.floor_ms, color=FLOOR, alpha=0.12)
    log2_ticks(ax, df.cache_tokens)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(_("cache length C (tokens, log scale)"))
    ax.set_ylabel(_("time per decode step (ms)"))
    ax.legend()
    return fig


@figure("prefill_decode.per_token")
def per_token(data):
    pre = data.table("prefill_decode.prefill").frame
    dec = data.table("prefill_decode.decode").frame
    fig, ax = plt.subplots()
    ax.plot(pre.prompt_tokens, pre.ms_per_token, "o-", color=PREFILL, label=_("prefill: ms per prompt token, at P"))
    ax.plot(dec.cache_tokens, dec.step_ms, "s-", color=DECODE, label=_("decode: ms per generated token, at C"))
    if log_if_wide([*pre.ms_per_token, *dec.step_ms]):
        ax.set_yscale("log")
        ax.set_ylabel(_("ms per token (log scale)"))
    else:
        ax.set_ylim(bottom=0)
        ax.set_ylabel(_("ms per token"))
    ticks = sorted(set(pre.prompt_tokens) | set(dec.cache_tokens))
    log2_ticks(ax, ticks)
    ax.set_xlabel(_("prompt length P, or cache length C (tokens, log scale)"))
    ax.legend()
    return fig
