"""The residual stream's outliers over several prompts (§6's tables ``prompts`` and
``prompt_layers``): does the same dimension lead whatever the text, and does the same
projection input keep the fewest INT8 codes?

The prompts are ordinary passages of the committed book, taken at evenly spaced places
and cut to the same number of tokens, plus two that are not book prose: a question
through the tokenizer's chat template, and a list of numbers. The statistics of one
prompt are computed from its residual stream alone (``prompt_stats``), so they can be
tested on a planted tensor.
"""

from __future__ import annotations

from collections import Counter

import torch

from measure.experiments.activation_outliers.capture import capture
from measure.experiments.activation_outliers.inputs import fewest_input
from sitedata import wording

CHAT_QUESTION = "What is the capital of France, and why is it built on a river?"


def book_passages(text: str, *, first: str, count: int) -> list[tuple[str, str]]:
    """``count`` passages of ``text``: the one that starts at ``first``, then one at the
    start of the first paragraph after each of ``count - 1`` evenly spaced places further
    on. Returns (label, passage) pairs; the label says where the passage starts."""
    start = text.index(first)
    body = len(text) - start
    passages = [(wording.PROMPT_BOOK.format(percent=0), text[start:])]
    for k in range(1, count):
        at = start + body * k // count
        para = text.find("\n\n", at)
        if para < 0:
            break
        para += 2
        while para < len(text) and text[para].isspace():
            para += 1
        passages.append((wording.PROMPT_BOOK.format(percent=100 * k // count), text[para:]))
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


def agreement(dims: list) -> tuple:
    """What comes most often among ``dims`` (a leading dimension, a tensor's label), and
    how many times it does (on a tie, the one that came first)."""
    dim, count = Counter(dims).most_common(1)[0]
    return dim, count


def prompt_tables(
    model, prompts: list[tuple[str, torch.Tensor, str]], *, mid: int, biggest_dim: int
) -> tuple[list, list, dict]:
    """The ``prompts`` and ``prompt_layers`` tables of ``prompts`` (label, token ids,
    text), and the values that sum them up."""
    rows, layer_rows = [], []
    for label, ids, text in prompts:
        cap = capture(model, ids)
        hs = cap.residual
        stats = prompt_stats(hs, mid=mid)
        worst = fewest_input(cap)
        first_line = " ".join(text.split())
        rows.append(
            {
                "prompt": label,
                "tokens": int(ids.shape[1]),
                **stats,
                "fewest_tensor": worst["tensor"],
                "fewest_layer": worst["layer"],
                "fewest_levels": worst["levels"],
                "fewest_token": worst["top_token"],
                "text_start": first_line[:40],
            }
        )
        dim_max, rest_max = hs.abs().amax(dim=1), hs[:, 1:].abs().amax(dim=1)
        layer_rows += [
            {
                "prompt": label,
                "layer": layer,
                "dim_max": float(dim_max[layer, biggest_dim]),
                "rest_dim_max": float(rest_max[layer, biggest_dim]),
                "median_dim_max": float(dim_max[layer].median()),
                "rest_median_dim_max": float(rest_max[layer].median()),
            }
            for layer in range(hs.shape[0])
        ]
        # which token holds the prompt's biggest value: the first, or another
        rows[-1]["lead_token"] = int(hs[stats["lead_layer"], :, stats["lead_dim"]].abs().argmax())
    lead_dim, sharing = agreement([r["lead_dim"] for r in rows])
    rest_lead_dim, rest_sharing = agreement([r["rest_lead_dim"] for r in rows])
    rest_most_dim, rest_most_sharing = agreement([r["rest_most_dim"] for r in rows])
    values = {
        "prompts_count": len(rows),
        "book_prompts": sum(r["prompt"].startswith("book") for r in rows),
        "prompts_lead_dim": lead_dim,
        "prompts_sharing_lead": sharing,
        "rest_prompts_lead_dim": rest_lead_dim,
        "rest_prompts_sharing_lead": rest_sharing,
        "rest_prompts_most_dim": rest_most_dim,
        "rest_prompts_sharing_most": rest_most_sharing,
        "rest_prompts_most_layers_min": min(r["rest_most_layers"] for r in rows if r["rest_most_dim"] == rest_most_dim),
        "prompts_lead_min": min(r["lead_max"] for r in rows),
        "prompts_lead_max": max(r["lead_max"] for r in rows),
        "prompts_lead_layers_min": min(r["lead_layers"] for r in rows),
        "prompts_median_dim_max": max(r["median_dim_max"] for r in rows),
        "prompts_lead_token0": sum(r["lead_token"] == 0 for r in rows),
        "prompts_fewest_levels_max": max(r["fewest_levels"] for r in rows),
        "prompts_fewest_token0": sum(r["fewest_token"] == 0 for r in rows),
        "prompts_fewest_tensor": agreement([r["fewest_tensor"] for r in rows])[0],
        "prompts_sharing_fewest_tensor": agreement([r["fewest_tensor"] for r in rows])[1],
    }
    return rows, layer_rows, values
