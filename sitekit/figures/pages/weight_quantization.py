"""Figures of the weight-quantization page."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from sitekit.figures import figure, log_if_wide
from sitekit.language.formatting import format_value, unit_suffix
from sitekit.language.i18n import _
from sitekit.language.recorded import data_text
from sitekit.rendering.escape import figure_text

INT8, INT4, NF4, GREY = "#2471a3", "#c0392b", "#1e8449", "#aab7b8"


def _colour(scheme: str) -> str:
    return INT8 if scheme.startswith("int8") else NF4 if scheme.startswith("nf4") else INT4


def _bits(b: float) -> str:
    """Bits per weight and their unit, which agrees with the number (Czech "4,125 bitu", "8 bitů")."""
    shown = format_value(b, "bits")
    return shown + unit_suffix("bits", shown)


@figure("weight_quantization.errors")
def errors(data):
    t = data.table("weight_quantization.errors")
    df, label_column = t.frame, t.column("label")
    fig, ax = plt.subplots()
    y = range(len(df))
    ax.barh(y, df.mean_rel_error, color=[_colour(s) for s in df.scheme])
    (worst,) = ax.plot(df.worst_rel_error, y, "k|", ms=14, mew=2, label=_("worst matrix"))
    # Bits as the tables write them: 4.125 for group-128, never rounded to 4.12.
    ticks = [
        _("{label} ({bits})").format(label=figure_text(data_text(lab, label_column)), bits=_bits(b))
        for lab, b in zip(df.label, df.bits_per_weight, strict=True)
    ]
    ax.set_yticks(list(y), ticks)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(_("relative error ||W − Ŵ|| / ||W|| (log scale)"))
    families = [
        Patch(color=c, label=_("{name}: mean over all matrices").format(name=name))
        for name, c in (("int8", INT8), ("int4", INT4), ("NF4", NF4))
    ]
    ax.legend(handles=[*families, worst])
    return fig


@figure("weight_quantization.outlier_codes")
def outlier_codes(data):
    df = data.table("weight_quantization.outlier_codes").frame
    fig, ax = plt.subplots()
    ax.bar(df.code - 0.2, df.all_weights.clip(lower=0.8), width=0.4, color=GREY, label=_("all weights"))
    ax.bar(
        df.code + 0.2, df.ordinary_weights.clip(lower=0.8), width=0.4, color=INT4, label=_("ordinary weights (≤ 3σ)")
    )
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xticks(df.code)
    ax.set_xlabel(_("int4 code under one scale for the whole matrix"))
    ax.set_ylabel(_("weights (log scale)"))
    ax.legend()
    return fig


@figure("weight_quantization.decode_kernels")
def decode_kernels(data):
    t = data.table("weight_quantization.decode_kernels")
    df, label_column = t.frame, t.column("label")
    ok = df[df.status == "ok"]
    bw = (ok.weight_bytes / ok.floor_ms).iloc[0] * 1e3  # every floor divides by the run's one bandwidth
    fig, ax = plt.subplots()
    mib = ok.weight_bytes / 2**20  # MiB, as the tables write bytes
    yerr = [ok.step_ms - ok.step_low_ms, ok.step_high_ms - ok.step_ms]  # the 95 % interval of each median
    ax.errorbar(mib, ok.step_ms, yerr=yerr, fmt="none", ecolor=GREY, elinewidth=1, capsize=3)
    # One marker per variant, named in the legend: several read nearly the same bytes, so
    # labels beside the points would overlap.
    # Hollow, each a size smaller than the one before: two variants at the same point show
    # as one shape inside the other rather than one hiding the other.
    markers = iter("os^Dv<>ph")
    for i, (x, y, key, label, act) in enumerate(
        zip(mib, ok.step_ms, ok.variant, ok.label, ok.activations, strict=True)
    ):
        colour = INT8 if "int8" in key else INT4 if "int4" in key else "black"
        ax.plot(
            x,
            y,
            next(markers),
            color=colour,
            ms=max(5.0, 12 - 1.2 * i),
            mfc="none",
            mew=1.5,
            ls="none",
            label=f"{figure_text(data_text(label, label_column))} ({figure_text(act)})",
            zorder=3,
        )
    span = [df.weight_bytes.min() / 2**21, df.weight_bytes.max() / 2**20 * 1.05]
    floor = [b * 2**20 / bw * 1e3 for b in span]
    ax.plot(span, floor, "k--", lw=1, label=_("floor: weight bytes / bandwidth"))
    ax.set_xlim(left=0)
    ax.set_xlabel(_("weight bytes read per decode step (MiB)"))
    if log_if_wide([*ok.step_high_ms, *ok.step_low_ms, *floor]):
        ax.set_yscale("log")
        ax.set_ylabel(_("decode step, median (ms, log scale)"))
    else:
        ax.set_ylim(bottom=0)
        ax.set_ylabel(_("decode step, median (ms)"))
    ax.legend()
    return fig
