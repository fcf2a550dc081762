"""Figures of the prompt-reuse.md page."""

from __future__ import annotations

import matplotlib.pyplot as plt

from sitekit.figures import figure
from sitekit.language.i18n import _

WHOLE, REUSED = "#c0392b", "#2471a3"


def _errors(df, name: str, low: str, high: str):
    return [df[name] - df[low], df[high] - df[name]]


@figure("prompt_reuse.first_token")
def first_token(data):
    """Left: the first token with the prefix read again or cached, by prefix length.
    Right: what a long prompt admitted whole or in chunks does (simulated from measured
    costs): its own first token, and the longest wait of a running request."""
    df = data.table("prompt_reuse.first_token").frame
    adm = data.table("prompt_reuse.admission").frame.sort_values("passes")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    for col, low, high, label, color, marker in (
        ("whole_ms", "whole_low_ms", "whole_high_ms", _("whole prompt read"), WHOLE, "o"),
        ("cached_ms", "cached_low_ms", "cached_high_ms", _("prefix cached"), REUSED, "s"),
    ):
        left.errorbar(
            df.prefix_tokens,
            df[col],
            yerr=_errors(df, col, low, high),
            marker=marker,
            capsize=3,
            color=color,
            label=label,
        )
    left.set_xlabel(_("shared prefix (tokens)"))
    left.set_ylabel(_("time to the first token (ms)"))
    left.set_ylim(bottom=0)
    left.legend()
    quantities = (
        ("first_token_ms", "first_token_low_ms", "first_token_high_ms", _("its first token")),
        ("longest_gap_ms", "longest_gap_low_ms", "longest_gap_high_ms", _("longest wait of a running request")),
    )
    width = 0.38
    for i, (row, color) in enumerate(zip(adm.itertuples(), (WHOLE, REUSED), strict=True)):
        label = _("one pass") if row.passes == 1 else _("in chunks")
        xs = [j + (i - 0.5) * width for j in range(len(quantities))]
        heights = [getattr(row, q[0]) for q in quantities]
        errors = [
            [h - getattr(row, q[1]) for h, q in zip(heights, quantities, strict=True)],
            [getattr(row, q[2]) - h for h, q in zip(heights, quantities, strict=True)],
        ]
        right.bar(xs, heights, width, yerr=errors, capsize=3, color=color, label=label)
    right.set_xticks(range(len(quantities)), [q[3] for q in quantities])
    right.set_ylabel(_("simulated time (ms)"))
    right.legend()
    fig.tight_layout()
    return fig
