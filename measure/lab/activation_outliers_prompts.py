"""The residual stream's outliers over several prompts (§6, ``measure.experiments.activation_outliers``,
tables ``prompts`` and ``prompt_layers``): does the same dimension lead whatever the text?

The prompts are ordinary passages of the committed book, taken at evenly spaced places
and cut to the same number of tokens, plus two that are not book prose: a question
through the tokenizer's chat template, and a list of numbers. The statistics of one
prompt are computed from its residual stream alone (``prompt_stats``), so they can be
tested on a planted tensor.
"""

from __future__ import annotations

from collections import Counter

import torch

CHAT_QUESTION = "What is the capital of France, and why is it built on a river?"


def book_passages(text: str, *, first: str, count: int) -> list[tuple[str, str]]:
    """``count`` passages of ``text``: the one that starts at ``first``, then one at the
    start of the first paragraph after each of ``count - 1`` evenly spaced places further
    on. Returns (label, passage) pairs; the label says where the passage starts."""
    start = text.index(first)
    body = len(text) - start
    passages = [("book 0%", text[start:])]
    for k in range(1, count):
        at = start + body * k // count
        para = text.find("\n\n", at)
        if para < 0:
            break
        para += 2
        while para < len(text) and text[para].isspace():
            para += 1
        passages.append((f"book {100 * k // count}%", text[para:]))
    return passages


def numbers_text(count: int) -> str:
    """A plain list of numbers: text with no prose in it at all."""
    return ", ".join(str(3 * i + 7) for i in range(count))


def abs_percentile(h: torch.Tensor, q: float) -> float:
    """The ``q``-th percentile (0-100) of |h| over all its elements, by linear
    interpolation between the order statistics (numpy's default method)."""
    return float(torch.quantile(h.abs().flatten().double(), q / 100))


def _lead(dim_max: torch.Tensor) -> tuple[int, int, float]:
    """(layer, dimension, value) of the largest per-dimension max over all layers."""
    hidden = dim_max.shape[1]
    layer, dim = divmod(int(dim_max.argmax()), hidden)
    return layer, dim, float(dim_max[layer, dim])


def prompt_stats(hs: torch.Tensor, *, mid: int) -> dict:
    """Statistics of one prompt's residual stream ``hs`` (layers, tokens, hidden), over
    all tokens and over all but the first (``rest_`` prefix):

    * the leading dimension (largest max |h| at any layer), its value and layer, and in
      how many layers it is the largest;
    * the dimension that is the largest in the most layers, and in how many (one
      layer's extreme can lead overall while another dimension leads layer after layer);
    * the median dimension's max |h|, at the layer where it is highest;
    * the median and 99th percentile of |h| over every element of layer ``mid``.
    """
    row = {}
    for prefix, part in (("", hs), ("rest_", hs[:, 1:])):
        dim_max = part.abs().amax(dim=1)  # (L, D)
        layer, dim, value = _lead(dim_max)
        row[f"{prefix}lead_dim"] = dim
        row[f"{prefix}lead_max"] = value
        row[f"{prefix}lead_layer"] = layer
        per_layer = dim_max.argmax(dim=1).tolist()
        row[f"{prefix}lead_layers"] = per_layer.count(dim)
        row[f"{prefix}most_dim"], row[f"{prefix}most_layers"] = agreement(per_layer)
        row[f"{prefix}median_dim_max"] = float(dim_max.median(dim=1).values.max())
        row[f"{prefix}mid_abs_median"] = abs_percentile(part[mid], 50)
        row[f"{prefix}mid_abs_p99"] = abs_percentile(part[mid], 99)
    return row


def agreement(dims: list[int]) -> tuple[int, int]:
    """The dimension that leads most often among ``dims``, and how many times it does
    (on a tie, the one that came first)."""
    dim, count = Counter(dims).most_common(1)[0]
    return dim, count
