"""Pictures that explain the cache: what it holds and what a step computes with and
without it (the KV-cache page), how query heads share key-value heads (its size), and how
a card's memory divides into weights, cache and users (the memory budget)."""

from __future__ import annotations

from sitekit.figures import figure
from sitekit.figures.concepts.drawing import FAINT, INK, KEPT, NEW, OTHER, WASTE, arrow, box, frame, key, note, panels
from sitekit.language.i18n import _

TOKENS = 5  # the tokens drawn: enough to show a square against a row


def _step(ax, cached: bool) -> None:
    """One generation step at the fifth token: its keys and values, and its attention scores."""
    title = _("with the cache: the new token only") if cached else _("without the cache: every token again")
    frame(ax, -1.6, 12.2, -3.4, 7.6, title)
    for i in range(TOKENS):
        new = not cached or i == TOKENS - 1
        for row, name in ((1, "K"), (0, "V")):
            box(ax, i, row, 0.9, 0.9, NEW if new else KEPT, name)
        note(ax, i + 0.45, -0.45, _("t{index}").format(index=i + 1), ha="center")
    note(ax, -0.25, 1.45, _("keys"), ha="right")
    note(ax, -0.25, 0.45, _("values"), ha="right")
    # the scores: every query against every key, or the newest query alone
    left, top = 6.6, 6.2
    rows = range(TOKENS) if not cached else [TOKENS - 1]
    for r in range(TOKENS):
        for c in range(r + 1):
            box(ax, left + c * 0.95, top - r * 0.95, 0.85, 0.85, NEW if r in rows else "white", edge=FAINT)
    note(ax, left, top + 1.25, _("attention scores"), weight="bold")
    note(ax, left, top - 5.1, _("a row per query,\na column per key"), va="top", color=FAINT)
    arrow(ax, (TOKENS + 0.1, 1.4), (left - 0.2, top - 2.5), FAINT, bend=-0.2)


@figure("concepts.kv_cache")
def kv_cache(data):
    """What a step at the fifth token computes: without the cache, the keys and values of
    every token and a square of scores; with it, one token's and one row."""
    fig, axes = panels(2, 10.0, 3.6)
    _step(axes[0], cached=False)
    _step(axes[1], cached=True)
    key(
        axes[1],
        -1.4,
        -1.25,
        [(NEW, _("computed at this step"), None), (KEPT, _("read from the cache, computed at earlier steps"), None)],
    )
    return fig


def _heads(ax, queries: int, kv: int, title: str) -> None:
    """Query heads over the key-value heads they read: a key over a value for each."""
    frame(ax, -0.6, 8.6, -3.6, 4.0, title)
    group = queries // kv
    for q in range(queries):
        box(ax, q, 2.6, 0.85, 0.85, KEPT, "Q")
    width = queries / kv
    for h in range(kv):
        x = h * width + (width - 0.85) / 2
        box(ax, x, 0.4, 0.85, 0.85, NEW, "K")
        box(ax, x, -0.5, 0.85, 0.85, NEW, "V")
        for q in range(h * group, (h + 1) * group):
            arrow(ax, (q + 0.42, 2.55), (x + 0.42, 1.3), FAINT, style="-", width=1.0)
    note(ax, queries / 2, -1.5, _("{count} of 8 in the cache").format(count=kv), ha="center")


@figure("concepts.cache_size")
def cache_size(data):
    """Eight query heads sharing key-value heads: each one (MHA), in groups (GQA), all one (MQA)."""
    fig, axes = panels(3, 10.5, 2.9)
    for ax, (kv, name) in zip(axes, ((8, "MHA"), (2, "GQA"), (1, "MQA")), strict=True):
        _heads(ax, 8, kv, name)
    note(axes[0], -0.5, -2.8, _("query heads (Q) above, key-value heads (K, V) below"), color=FAINT)
    return fig


@figure("concepts.memory_budget")
def memory_budget(data, narrow: bool = False):
    """A card's memory: a reserve, the weights, and what is left, cut into users' contexts;
    on a phone, the same bar standing upright."""
    fig, axes = panels(1, *((4.6, 5.2) if narrow else (10.0, 2.9)))
    ax = axes[0]
    users = (OTHER, "#58d68d", OTHER, "#58d68d", OTHER)
    parts = [(2.2, WASTE, _("reserve")), (6.3, KEPT, _("weights"))]
    parts += [(2.2, color, _("user {index}").format(index=i + 1)) for i, color in enumerate(users)]
    parts.append((20.0 - sum(p[0] for p in parts), "white", ""))
    at = 0.0
    for size, color, text in parts:
        if narrow:  # bottom to top, its words beside it where the box is too narrow for them
            box(ax, 0, at, 4.6, size, color, text, edge=FAINT)
        else:
            box(ax, at, 0, size, 1.6, color, text, edge=FAINT if color in (WASTE, "white") else "white")
        at += size
    cache = _("KV cache: resident tokens × bytes per token")
    if narrow:
        frame(ax, -0.3, 15.0, -1.2, 21.4)
        note(ax, 0, 20.7, _("the card's memory"), weight="bold")
        arrow(ax, (5.0, 8.5), (5.0, 20.0), INK, style="<|-|>")
        note(ax, 5.4, 16.5, cache, wrap=24)
        note(ax, 5.4, 11.8, _("each user holds a whole context of tokens"), color=FAINT, wrap=24)
        note(ax, 5.4, 5.35, _("paid once"), color=FAINT)
        return fig
    frame(ax, -0.2, 20.4, -3.4, 3.2)
    note(ax, 0, 2.35, _("the card's memory"), weight="bold")
    arrow(ax, (8.5, -0.45), (20.0, -0.45), INK, style="<|-|>")
    note(ax, 14.25, -1.1, cache, ha="center")
    note(ax, 14.25, -2.2, _("each user holds a whole context of tokens"), ha="center", color=FAINT)
    note(ax, 5.35, -1.1, _("paid once"), ha="center", color=FAINT)
    return fig
