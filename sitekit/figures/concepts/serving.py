"""Pictures that explain serving: the two phases of a generation (prefill and decode), the
two schedules of batching (static and continuous), and paged cache memory."""

from __future__ import annotations

from sitekit.figures import figure
from sitekit.figures.concepts.drawing import FAINT, INK, KEPT, NEW, WASTE, WORK, arrow, box, frame, key, note, panels
from sitekit.language.i18n import _

PROMPT, GENERATED = 6, 4  # tokens drawn: a prompt, then the tokens generated one by one


@figure("concepts.prefill_decode")
def prefill_decode(data):
    """Prefill: one pass through the weights for the whole prompt. Decode: one pass per token."""
    fig, (left, right) = panels(2, 10.0, 3.4, ratios=(1.0, 1.25))
    frame(left, -0.4, 8.4, -3.0, 4.6, _("prefill: the whole prompt in one pass"))
    for i in range(PROMPT):
        box(left, i * 1.15, 2.4, 1.0, 1.0, KEPT, _("p{index}").format(index=i + 1))
        arrow(left, (i * 1.15 + 0.5, 2.35), (i * 1.15 + 0.5, 1.25), FAINT)
    box(left, 0, 0, PROMPT * 1.15 - 0.15, 1.2, INK, _("model"))
    arrow(left, (3.4, -0.05), (3.4, -0.8), FAINT)
    note(
        left,
        0,
        -1.0,
        _("every weight read once for the whole prompt; out come the first new token and the prompt's cache"),
        va="top",
        wrap=40,
    )
    frame(right, -0.4, 10.6, -3.0, 4.6, _("decode: one pass for each new token"))
    for i in range(GENERATED):
        x = i * 2.6
        box(right, x + 0.45, 2.4, 1.0, 1.0, NEW, _("g{index}").format(index=i + 1))
        arrow(right, (x + 0.95, 2.35), (x + 0.95, 1.25), FAINT)
        box(right, x, 0, 1.9, 1.2, INK, _("model"))
        if i + 1 < GENERATED:
            arrow(right, (x + 1.95, 0.6), (x + 2.55, 2.9), NEW, bend=0.25)
    note(right, 0, -1.5, _("every weight read again for each token; each step adds one token to the cache"), wrap=44)
    return fig


# An illustration of uneven requests on three slots: how long each wants to generate.
LENGTHS = (6, 2, 3, 2, 5, 1, 3)
SLOTS = 3


def _static(lengths: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """(request, slot, start, end of its slot's hold): groups of SLOTS, each held until its longest ends."""
    out, start = [], 0
    for first in range(0, len(lengths), SLOTS):
        group = lengths[first : first + SLOTS]
        for slot in range(len(group)):
            out.append((first + slot, slot, start, start + max(group)))
        start += max(group)
    return out


def _continuous(lengths: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """(request, slot, start, end): a freed slot takes the next request at the next step."""
    free, out = [0] * SLOTS, []
    for request, n in enumerate(lengths):
        slot = min(range(SLOTS), key=lambda s: (free[s], s))
        out.append((request, slot, free[slot], free[slot] + n))
        free[slot] += n
    return out


ROW = 1.5  # a slot's row, in the picture's units (a step is one)


def _schedule(ax, rows, title: str, end: int) -> None:
    frame(ax, -2.2, end + 0.6, -3.0, SLOTS * ROW + 0.3, title)
    for request, slot, start, stop in rows:
        y = (SLOTS - 1 - slot) * ROW
        work = LENGTHS[request]
        box(ax, start, y, work, ROW - 0.2, WORK[request % len(WORK)], _("r{index}").format(index=request + 1))
        if stop > start + work:
            box(ax, start + work, y, stop - start - work, ROW - 0.2, WASTE, hatch="///", edge=FAINT)
    for slot in range(SLOTS):
        note(ax, -0.3, (SLOTS - 1 - slot) * ROW + 0.65, _("slot {index}").format(index=slot + 1), ha="right")
    arrow(ax, (0, -0.5), (end + 0.4, -0.5), FAINT)
    note(ax, end + 0.4, -1.2, _("steps"), ha="right", color=FAINT)


@figure("concepts.batching")
def batching(data):
    """The same seven uneven requests on three slots, static and continuous."""
    static, continuous = _static(LENGTHS), _continuous(LENGTHS)
    end = max(r[3] for r in static)
    fig, (left, right) = panels(2, 10.0, 3.2)
    _schedule(left, static, _("static: a group holds its slots until its longest ends"), end)
    _schedule(right, continuous, _("continuous: a freed slot takes the next request"), end)
    key(left, 0, -2.4, [(WASTE, _("finished, its slot still held (padding)"), "///")])
    return fig


BLOCK = 4  # tokens per block in the illustration


@figure("concepts.paged")
def paged(data):
    """Contiguous reservation against blocks with a block table, a shared prompt stored once."""
    fig, (left, right) = panels(2, 10.0, 3.4, ratios=(1.0, 1.1))
    frame(left, -2.2, 12.4, -2.6, 4.4, _("contiguous: the longest context, reserved up front"))
    for row, (name, held) in enumerate((("A", 7), ("B", 3))):
        y = 2.2 - row * 1.6
        note(left, -0.3, y + 0.45, name, ha="right", weight="bold")
        box(left, 0, y, held, 0.9, WORK[row * 2], edge="white")
        box(left, held, y, 12 - held, 0.9, WASTE, hatch="///", edge=FAINT)
    key(left, 0, -1.3, [(WASTE, _("reserved, holding no token"), "///")])
    frame(right, -2.6, 12.6, -2.6, 4.4, _("paged: blocks of {tokens} tokens, taken as needed").format(tokens=BLOCK))
    memory = ["P", "A", "B", "A", "", ""]  # what each physical block holds: the shared prompt, A's, B's
    colors = {"P": NEW, "A": WORK[0], "B": WORK[2], "": "white"}
    for i, owner in enumerate(memory):
        box(right, 5.6 + (i % 3) * 2.2, 2.0 - (i // 3) * 1.5, 2.0, 1.2, colors[owner], owner, edge=FAINT)
    note(right, 5.6, 3.75, _("memory, in blocks"), weight="bold")
    for row, (name, table) in enumerate((("A", (0, 1, 3)), ("B", (0, 2)))):
        y = 2.2 - row * 1.8
        note(right, -0.3, y + 0.4, name, ha="right", weight="bold")
        for j, block in enumerate(table):
            box(right, j * 0.95, y, 0.85, 0.85, "white", str(block), edge=FAINT)
            target = (5.6 + (block % 3) * 2.2 + 1.0, 2.0 - (block // 3) * 1.5 + 0.6)
            arrow(right, (j * 0.95 + 0.42, y + 0.42), target, colors[memory[block]], width=0.9, bend=0.15)
    note(right, -1.8, 3.75, _("block tables"), weight="bold")
    note(right, -1.8, -1.4, _("P: the system prompt, stored once, in both tables"), color=FAINT, wrap=48)
    return fig
