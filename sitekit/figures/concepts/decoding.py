"""Pictures that explain decoding with a second model or a second view of one: a round
of speculative decoding, the agreement the quality page counts, and the soft labels of
distillation."""

from __future__ import annotations

import math

from sitekit.figures import figure
from sitekit.figures.concepts.drawing import BAD, FAINT, GOOD, INK, KEPT, NEW, WASTE, arrow, box, frame, note, panels
from sitekit.language.i18n import _

DRAFTED, ACCEPTED = 4, 2  # the round drawn: four guesses, the first two right


def _row_label(ax, narrow: bool, y: float, text: str, height: float = 0.9) -> None:
    """A row's name: left of it on a desktop, above it on a phone (its boxes ``height`` tall)."""
    if narrow:
        note(ax, 0, y + height + 0.2, text, va="bottom", color=FAINT, wrap=40)
    else:
        note(ax, -0.3, y + 0.45, text, ha="right", wrap=34)


@figure("concepts.speculative_decoding")
def speculative_decoding(data, narrow: bool = False):
    """One round: the draft guesses, the target checks every guess in one pass, the guesses
    up to the first wrong one are kept, and the target's own token replaces that one."""
    fig, axes = panels(1, *((4.8, 5.2) if narrow else (9.0, 3.9)))
    ax = axes[0]
    top, middle, bottom = (7.2, 3.6, 0.0) if narrow else (3.5, 1.3, -1.2)
    frame(ax, -0.2 if narrow else -4.4, 7.4 if narrow else 9.4, bottom - (3.6 if narrow else 2.4), top + 2.0)
    _row_label(ax, narrow, top, _("draft: one cheap step per guess"))
    _row_label(ax, narrow, middle, _("target: one pass checks them all"), 1.1)
    _row_label(ax, narrow, bottom, _("kept this round"))
    for i in range(DRAFTED):
        x = i * 1.9
        box(ax, x, top, 1.5, 0.9, NEW, _("d{index}").format(index=i + 1))
        if i:
            arrow(ax, (x - 0.38, top + 0.45), (x - 0.02, top + 0.45), FAINT)
        arrow(ax, (x + 0.75, top - 0.05), (x + 0.75, middle + (1.9 if narrow else 1.15)), FAINT)
    box(ax, 0, middle, DRAFTED * 1.9 - 0.4, 1.1, INK, _("target model"))
    for i in range(DRAFTED):
        x, sign_y = i * 1.9, (middle + bottom + 0.9) / 2
        if i < ACCEPTED:
            box(ax, x, bottom, 1.5, 0.9, NEW, _("d{index}").format(index=i + 1))
            note(ax, x + 0.75, sign_y, "✓", ha="center", color=GOOD, size=13, weight="bold")
        elif i == ACCEPTED:
            box(ax, x, bottom, 1.5, 0.9, KEPT, _("t{index}").format(index=i + 1))
            note(ax, x + 0.75, sign_y, "✗", ha="center", color=BAD, size=13, weight="bold")
        else:
            box(ax, x, bottom, 1.5, 0.9, WASTE, hatch="///", edge=FAINT)
    text = _(
        "orange: the draft's guesses; blue: the target's own token, which replaces the first wrong guess; "
        "grey: the guesses after it, thrown away unchecked"
    )
    note(ax, 0 if narrow else -4.2, bottom - 0.4, text, va="top", color=FAINT, wrap=44 if narrow else 90)
    return fig


REFERENCE = ("The", "sky", "is", "so", "blue")  # what the reference wrote, position by position
QUANTIZED = ("The", "sky", "looks", "so", "blue")  # each quantized choice, given the reference's prefix


@figure("concepts.quality")
def quality(data, narrow: bool = False):
    """Agreement: at every position the quantized model sees the reference's own prefix and
    its first choice is compared with the reference's token."""
    fig, axes = panels(1, *((4.8, 4.2) if narrow else (9.0, 2.8)))
    ax = axes[0]
    frame(ax, -0.2 if narrow else -4.6, 10.2, -2.8 if narrow else -1.8, 4.2 if narrow else 3.2)
    _row_label(ax, narrow, 1.65, _("reference model wrote"))
    _row_label(
        ax, narrow, -0.35 - (0.6 if narrow else 0), _("quantized model's first choice, given the same words before it")
    )
    for i, (ref, mine) in enumerate(zip(REFERENCE, QUANTIZED, strict=True)):
        x = i * 2.0
        box(ax, x, 1.65, 1.8, 0.9, KEPT, ref)
        same = ref == mine
        box(ax, x, -0.35 - (0.6 if narrow else 0), 1.8, 0.9, GOOD if same else BAD, mine)
        if not narrow:  # on a phone the row's name stands where the sign would
            note(ax, x + 0.9, 1.1, "=" if same else "≠", ha="center", color=GOOD if same else BAD, size=13)
        if i:
            arrow(ax, (x - 1.1, 1.6), (x + 0.2, 0.6), FAINT, width=0.8)
    text = _("agreement: the share of positions where the two choices are the same")
    note(ax, 0, -1.3 - (0.6 if narrow else 0), text, va="top", color=FAINT, wrap=48 if narrow else 0)
    return fig


WORDS = ("glass", "cup", "bowl", "jug", "pot")  # a teacher's candidates after "She poured the milk into the"
LOGITS = (2.0, 1.6, 1.2, 0.5, 0.1)  # an illustration: any decreasing logits show the same


def _bars(ax, heights: list[float], title: str) -> None:
    frame(ax, -0.6, len(WORDS) * 1.2 + 0.2, -1.2, 4.6, title)
    for i, (word, h) in enumerate(zip(WORDS, heights, strict=True)):
        box(ax, i * 1.2, 0, 0.9, max(h * 4.0, 0.04), NEW if i == 0 else KEPT)
        note(ax, i * 1.2 + 0.45, -0.45, word, ha="center", size=9.5)
    ax.plot([-0.3, len(WORDS) * 1.2], [0, 0], color=FAINT, lw=1)


def _softmax(temperature: float) -> list[float]:
    e = [math.exp(z / temperature) for z in LOGITS]
    return [x / sum(e) for x in e]


@figure("concepts.distillation")
def distillation(data):
    """A hard label is one word; a soft label, the teacher's whole distribution, flatter at T = 2."""
    fig, axes = panels(3, 10.5, 2.8)
    _bars(axes[0], [1.0, 0, 0, 0, 0], _("hard label: one word"))
    _bars(axes[1], _softmax(1.0), _("soft label at T = 1"))
    _bars(axes[2], _softmax(2.0), _("soft label at T = 2: flatter"))
    return fig
