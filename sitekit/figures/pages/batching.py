"""Figures of the batching page."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from sitekit.figures import figure, log_if_wide
from sitekit.language.formatting import format_value, number
from sitekit.language.i18n import _

POINT, KNEE, PADDING, COMPILED = "#2471a3", "#c0392b", "#d5d8dc", "#1e8449"
WORK = ("#2471a3", "#5dade2", "#1e8449", "#58d68d", "#b9770e", "#f5b041", "#7d3c98", "#bb8fce")
SCHEMES = (
    ("contiguous_reserved_bytes", "contiguous: reserved", "#c0392b", "-"),
    ("paged_reserved_bytes", "paged: reserved", "#2471a3", "-"),
    ("shared_reserved_bytes", "paged, shared prefix: reserved", "#1e8449", "-"),
    ("context_bytes", "tokens held (each context in full)", "#222222", "--"),
    ("shared_stored_bytes", "tokens held, shared prefix once", "#1e8449", ":"),
)


@figure("batching.sweep")
def sweep(data):
    df = data.table("batching.sweep").frame
    df = df[df.status == "measured"]
    knee = data.value("batching.knee_batch")["value"]
    found = data.value("batching.knee_found")["value"]
    fig, ax = plt.subplots()
    ax.plot(df.step_ms, df.throughput_tok_s, "o-", color=POINT, label=_("eager step"))
    for b, x, y in zip(df.batch, df.step_ms, df.throughput_tok_s, strict=True):
        # Above-left of each eager point, on a white ground: the compiled line runs below and
        # right. The first point sits at the left edge, so its label goes above-right.
        first = b == df.batch.min()
        ax.annotate(
            f"B = {b}",
            (x, y),
            textcoords="offset points",
            xytext=(8, 7) if first else (-8, 7),
            ha="left" if first else "right",
            fontsize=9,
            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8),
        )
    compiled = df.dropna(subset=["compiled_step_ms"])
    if not compiled.empty:
        ax.plot(
            compiled.compiled_step_ms,
            compiled.compiled_throughput_tok_s,
            "s--",
            color=COMPILED,
            label=_("compiled step"),
        )
    if found:
        k = df[df.batch == knee]
        ax.plot(
            k.step_ms,
            k.throughput_tok_s,
            "o",
            ms=14,
            mfc="none",
            mec=KNEE,
            mew=2,
            label=_("knee: B = {batch}").format(batch=knee),
        )
    ax.legend()
    plain = FuncFormatter(lambda v, pos: number(v, digits=0, fixed=True) if v >= 10 else number(v, digits=6))
    # a sweep that finds its knee early spans less than a decade: linear reads better there
    latencies = [*df.step_ms, *compiled.compiled_step_ms]
    throughputs = [*df.throughput_tok_s, *compiled.compiled_throughput_tok_s]
    for axis, set_scale, values, log_label, label in (
        (
            ax.xaxis,
            ax.set_xscale,
            latencies,
            _("latency: one decode step (ms, log scale)"),
            _("latency: one decode step (ms)"),
        ),
        (ax.yaxis, ax.set_yscale, throughputs, _("throughput (tokens/s, log scale)"), _("throughput (tokens/s)")),
    ):
        if log_if_wide(values):
            set_scale("log")
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_minor_formatter(FuncFormatter(lambda v, pos: ""))
            axis.set_label_text(log_label)
        else:
            axis.set_label_text(label)
        axis.set_major_formatter(plain)
    return fig


@figure("batching.timeline")
def timeline(data):
    df = data.table("batching.timeline").frame
    fig, axes = plt.subplots(2, 1, figsize=(7.0, 5.2), sharex=True)
    slots = int(df.slot.max()) + 1
    for ax, policy in zip(axes, ("static", "continuous"), strict=True):
        mine = df[df.policy == policy]
        for r in mine.itertuples():
            s = r.start_ms / 1e3
            ax.broken_barh(
                [(s, (r.finish_ms - r.start_ms) / 1e3)],
                (r.slot - 0.4, 0.8),
                facecolors=WORK[r.request % len(WORK)],
                edgecolor="white",
                linewidth=0.4,
            )
            if r.release_ms > r.finish_ms:
                ax.broken_barh(
                    [(r.finish_ms / 1e3, (r.release_ms - r.finish_ms) / 1e3)],
                    (r.slot - 0.4, 0.8),
                    facecolors=PADDING,
                    hatch="///",
                    edgecolor="#aab7b8",
                    linewidth=0,
                )
        done = mine.release_ms.max() / 1e3
        ax.axvline(done, color="#222222", lw=1)
        ax.set_title(
            _(f"{policy} batching: all done at {{seconds}} s").format(seconds=number(done, digits=1, fixed=True)),
            loc="left",
            fontsize=10,
        )
        ax.set_yticks(range(slots), [str(i) for i in range(slots)])
        ax.set_ylim(slots - 0.5, -0.5)
        ax.set_ylabel(_("slot"))
        ax.grid(axis="y", visible=False)
    axes[-1].set_xlabel(_("time (s), from the measured step costs"))
    fig.legend(
        handles=[
            Patch(facecolor=WORK[0], label=_("generating (one colour per request)")),
            Patch(facecolor=PADDING, hatch="///", edgecolor="#aab7b8", label=_("padding: finished, slot still held")),
        ],
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout()
    return fig


@figure("batching.memory")
def memory(data):
    df = data.table("batching.memory_steps").frame
    fig, ax = plt.subplots()
    for col, label, color, style in SCHEMES:
        ax.plot(df.step, df[col] / 2**20, style, color=color, label=_(label), lw=1.6)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(_("step of the continuous schedule"))
    ax.set_ylabel(_("KV memory (MiB)"))
    ax.legend()
    return fig


POLICY_STYLE = {"static": ("#c0392b", "--"), "continuous": ("#2471a3", "-")}


@figure("batching.arrivals")
def arrivals(data):
    """One panel per load: the share of requests served within a time, static against continuous."""
    df = data.table("batching.arrival_requests").frame
    loads = sorted(df.load.unique())
    fig, axes = plt.subplots(1, len(loads), figsize=(3.2 * len(loads), 3.4), sharey=True, squeeze=False)
    for ax, load in zip(axes[0], loads, strict=True):
        for policy, (color, style) in POLICY_STYLE.items():
            lat = sorted(df[(df.load == load) & (df.policy == policy)].latency_ms / 1e3)
            share = [(i + 1) / len(lat) for i in range(len(lat))]
            ax.step(lat, share, style, where="post", color=color, label=_(policy), lw=1.6)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, pos: number(v, digits=6)))
        # Minor ticks carry numbers only where no decade is whole on the axis (else the
        # default labels, in scientific notation, set their exponents in small type).
        lo, hi = ax.get_xlim()
        ax.xaxis.set_minor_formatter(
            NullFormatter() if hi / lo >= 10 else FuncFormatter(lambda v, pos: number(v, digits=6))
        )
        ax.set_title(
            _("{share} of static capacity").format(share=format_value(load, "fraction", digits=0)),
            loc="left",
            fontsize=10,
        )
        ax.set_xlabel(_("latency (s, log scale)"))
    axes[0][0].set_ylabel(_("share of requests served within"))
    axes[0][0].legend()
    fig.tight_layout()
    return fig
