"""§6 Activation outliers: a few hidden dimensions of the residual stream are huge, and
what that leaves of the tensors an 8-bit activation scheme quantizes.

Measures, on the run's model, for one ordinary prompt of book prose, in one forward pass
(``capture``): the residual stream after every decoder layer, and the input of every
linear projection, where LLM.int8() and SmoothQuant quantize activations.

* ``layers``: per layer, each hidden dimension's max |h| over the prompt's tokens: the
  median dimension, the largest three and the token where the largest sits.
* ``tracked``: those maxima, layer by layer, for every dimension that is among the
  top few of any layer (enough to see whether the same ones persist).
* ``histogram``: the per-dimension maxima at the middle layer in power-of-two bins.
* ``tensors`` and ``tensors_summary``: every projection input and the residual stream at
  every layer: its largest value and where, the INT8 codes one tensor-wide absmax scale
  leaves it, and the median token's error with a scale per tensor, dimension or token;
  the summary per tensor over its layers (``inputs``).
* ``int8`` and ``int8_scales``: three tensors in detail, the residual stream at the middle
  layer (the chapter's), the attention's normalised input there, and the projection input
  INT8 serves worst: one tensor-wide scale, without the top dimensions, without the first
  token; and where the scale is computed (``int8``).
* ``prompts``: the same capture for several prompts (passages from different places of
  the book, a chat-formatted question, a list of numbers): per prompt the leading
  dimension of the residual stream, its value, layer and how many layers it leads, the
  median dimension, the median and 99th percentile of |h| at the middle layer, all with
  and without the first token, and the projection input with the fewest INT8 codes
  (``prompts``).
* ``prompt_layers``: per prompt and layer, the max |h| of the main prompt's biggest
  dimension and of the median dimension.

The package: ``tables`` and ``values`` declare what is written, ``capture`` records the
stream and the inputs, ``inputs``, ``int8`` and ``prompts`` build their tables; the rest
is here.

Needs trained weights: outlier dimensions are learned, random weights have none.

Writes ``site_data/activation_outliers/``. Alone: ``python -m measure run --only activation_outliers``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure.experiments.activation_outliers.capture import capture
from measure.experiments.activation_outliers.inputs import (
    PROJECTIONS,
    fewest,
    input_values,
    summary_rows,
    tensor_rows,
)
from measure.experiments.activation_outliers.int8 import int8_table, scale_rows
from measure.experiments.activation_outliers.prompts import (
    CHAT_QUESTION,
    abs_percentile,
    book_passages,
    numbers_text,
    prompt_tables,
)
from measure.experiments.activation_outliers.tables import TABLES, TOP_PER_LAYER
from measure.experiments.activation_outliers.values import VALUES
from measure.lab.context import Context, book_text
from sitedata import wording
from sitedata.schema import Result

__all__ = ["NEEDS_TRAINED", "TABLES", "TITLE", "VALUES", "Config", "run"]

TITLE = "Activation outliers"
NEEDS_TRAINED = True
PASSAGE_START = "Alice was beginning to get very tired"  # the book's first paragraph of prose


@dataclass(frozen=True, kw_only=True)
class Config:
    prompt_tokens: int = 84  # spec §6.1
    top_per_layer: int = TOP_PER_LAYER
    excluded_dims: int = 4  # spec §6.3
    ordinary_dims: int = 3
    book_prompts: int = 8  # one forward pass each: cheap enough to look at several places

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "smoke":
            return cls(prompt_tokens=16, book_prompts=2)
        return cls()  # one forward pass: the full sizes fit any profile


def _prompt(cfg: Config, ctx: Context, passage: str | None = None) -> tuple[torch.Tensor, str]:
    if passage is None:
        text = book_text()
        passage = text[text.index(PASSAGE_START) :]
    ids = ctx.model.tokenizer(passage, add_special_tokens=False)["input_ids"][: cfg.prompt_tokens]
    return torch.tensor([ids], device=ctx.device), ctx.model.tokenizer.decode(ids)


def _other_prompts(cfg: Config, ctx: Context) -> list[tuple[str, torch.Tensor, str]]:
    """(label, ids, text) of every prompt of the ``prompts`` table: book passages first
    (the page's main prompt among them), then a chat question and a list of numbers."""
    tok = ctx.model.tokenizer
    prompts = [
        (label, *_prompt(cfg, ctx, passage))
        for label, passage in book_passages(book_text(), first=PASSAGE_START, count=cfg.book_prompts)
    ]
    chat = tok.apply_chat_template(
        [{"role": "user", "content": CHAT_QUESTION}], add_generation_prompt=True, tokenize=False
    )
    chat_ids = tok(chat, add_special_tokens=False)["input_ids"][: cfg.prompt_tokens]
    prompts.append(("chat question", torch.tensor([chat_ids], device=ctx.device), tok.decode(chat_ids)))
    prompts.append(("numbers", *_prompt(cfg, ctx, numbers_text(cfg.prompt_tokens))))
    return prompts


def _octave_bins(top: float) -> list[tuple[float, float]]:
    """[0, 1), [1, 2), [2, 4), ... up to the first power of two above ``top``."""
    edges = [0.0, 1.0]
    while edges[-1] <= top:
        edges.append(edges[-1] * 2)
    return list(zip(edges[:-1], edges[1:], strict=True))


def _gap_below_top(hist_rows: list[dict]) -> int:
    """Empty bins between the highest occupied bin and the next occupied one below it:
    the octaves that separate the outlier from the rest (not the empty bins under the heap)."""
    occupied = [i for i, r in enumerate(hist_rows) if r["dims"]]
    return occupied[-1] - (occupied[-2] if len(occupied) > 1 else -1) - 1


def run(cfg: Config, ctx: Context) -> Result:
    ids, text = _prompt(cfg, ctx)
    ctx.log(f"  capturing the residual stream and every projection's input, {ids.shape[1]} tokens, every layer")
    cap = capture(ctx.model.model, ids)
    hs = cap.residual  # (L, T, D)
    n_layers, n_tokens, hidden = hs.shape
    dim_max = hs.abs().amax(dim=1)  # (L, D)
    # The first position of a sequence is where "massive activations" concentrate (an
    # attention sink; Sun et al., 2024, arXiv:2402.17762), so every statistic is also
    # given over the other tokens, to tell a one-token spike from a systematic dimension.
    rest_max = hs[:, 1:].abs().amax(dim=1)
    where = hs.abs().argmax(dim=1)  # (L, D): token index of each maximum

    layer_rows, tracked_dims = [], set()
    for layer in range(n_layers):
        top = dim_max[layer].topk(cfg.top_per_layer)
        tracked_dims.update(top.indices.tolist())
        row = {"layer": layer, "median_dim_max": float(dim_max[layer].median())}
        for r, (v, d) in enumerate(zip(top.values.tolist(), top.indices.tolist(), strict=True), 1):
            row[f"top{r}_dim"] = d
            row[f"top{r}_max"] = v
        row["top1_token"] = int(where[layer, top.indices[0]])
        row["top1_over_median"] = row["top1_max"] / row["median_dim_max"]
        rest = rest_max[layer]
        row["rest_median_dim_max"] = float(rest.median())
        row["rest_top1_dim"] = int(rest.argmax())
        row["rest_top1_max"] = float(rest.max())
        layer_rows.append(row)

    tracked = sorted(tracked_dims, key=lambda d: -float(dim_max[:, d].max()))
    tracked_rows = [
        {
            "dim": d,
            "layer": layer,
            "max_abs": float(dim_max[layer, d]),
            "rank": int((dim_max[layer] > dim_max[layer, d]).sum()) + 1,
            "rest_max_abs": float(rest_max[layer, d]),
        }
        for d in tracked
        for layer in range(n_layers)
    ]

    # The biggest outlier anywhere, and how many layers it leads.
    flat = int(dim_max.argmax())
    big_layer, big_dim = divmod(flat, hidden)
    leads = [r["layer"] for r in layer_rows if r["top1_dim"] == big_dim]
    in_top = [layer for layer in range(n_layers) if big_dim in dim_max[layer].topk(cfg.top_per_layer).indices.tolist()]

    mid = n_layers // 2
    m = dim_max[mid]
    hist_rows = [
        {
            "bin_low": lo,
            "bin_high": hi,
            "dims": int(((m >= lo) & (m < hi)).sum()),
            "dims_rest": int(((rest_max[mid] >= lo) & (rest_max[mid] < hi)).sum()),
        }
        for lo, hi in _octave_bins(float(m.max()))
    ]

    # Every tensor a projection multiplies, at every layer; then INT8 in detail on three:
    # the chapter's (the residual stream at the middle layer, spec §6.3), the attention's
    # normalised input at that layer, and the projection input one scale serves worst.
    tensors = tensor_rows(cap)
    worst = fewest([r for r in tensors if r["tensor"] in PROJECTIONS])
    detail = (
        ("int8_", wording.ACTIVATION_RESIDUAL_AT.format(layer=mid), hs[mid]),
        (
            "attention_int8_",
            wording.ACTIVATION_INPUT_AT.format(projections="q_proj, k_proj, v_proj", layer=mid),
            cap.inputs["q_proj, k_proj, v_proj"][mid],
        ),
        (
            "inputs_int8_",
            wording.ACTIVATION_INPUT_AT.format(projections=PROJECTIONS[worst["tensor"]], layer=worst["layer"]),
            cap.inputs[PROJECTIONS[worst["tensor"]]][worst["layer"]],
        ),
    )
    int8_rows, scales, int8_values = [], [], {}
    for prefix, label, x in detail:
        rows, found = int8_table(label, x, ordinary=cfg.ordinary_dims, excluded=cfg.excluded_dims)
        int8_rows += rows
        scales += scale_rows(label, x)
        int8_values.update({prefix + k: v for k, v in found.items()})
        int8_values.update(
            {f"{prefix}error_{r['granularity'].removeprefix('one per ')}": r["token_error"] for r in scales[-3:]}
        )
    values = {
        "prompt_tokens": n_tokens,
        "prompt_text": text,
        "hidden": hidden,
        "layers": n_layers,
        "biggest_dim": big_dim,
        "biggest_value": float(dim_max[big_layer, big_dim]),
        "biggest_layer": big_layer,
        "biggest_token": int(where[big_layer, big_dim]),
        "biggest_layer_median": float(dim_max[big_layer].median()),
        "biggest_at_mid": float(dim_max[n_layers // 2, big_dim]),
        "biggest_leads_layers": len(leads),
        "biggest_first_lead": leads[0] if leads else -1,
        "biggest_in_top_layers": len(in_top),
        "median_dim_max_overall": float(dim_max.median()),
        "mid_layer": mid,
        "mid_median_dim_max": float(m.median()),
        "mid_top_dim": int(m.argmax()),
        "mid_top_value": float(m.max()),
        "mid_below_8": int((m < 8).sum()),
        "mid_gap_bins": _gap_below_top(hist_rows),
        "rest_mid_top_dim": int(rest_max[mid].argmax()),
        "rest_mid_top_value": float(rest_max[mid].max()),
        "rest_mid_median": float(rest_max[mid].median()),
        "rest_biggest_leads_layers": sum(r["rest_top1_dim"] == big_dim for r in layer_rows),
        "excluded_count": cfg.excluded_dims,
        "octaves_spanned": math.log2(float(m.max()) / float(m.median())),
        "mid_abs_median": abs_percentile(hs[mid], 50),
        "mid_abs_p99": abs_percentile(hs[mid], 99),
        "rest_mid_abs_median": abs_percentile(hs[mid, 1:], 50),
        "rest_mid_abs_p99": abs_percentile(hs[mid, 1:], 99),
        **int8_values,
        **input_values(tensors),
    }
    ctx.log("  the same capture for several prompts")
    others = _other_prompts(cfg, ctx)
    prompt_rows, prompt_layer_rows, prompt_values = prompt_tables(ctx.model.model, others, mid=mid, biggest_dim=big_dim)
    values.update(prompt_values)
    tables = {
        "layers": layer_rows,
        "tracked": tracked_rows,
        "histogram": hist_rows,
        "tensors": tensors,
        "tensors_summary": summary_rows(tensors),
        "int8": int8_rows,
        "int8_scales": scales,
        "prompts": prompt_rows,
        "prompt_layers": prompt_layer_rows,
    }
    return Result(tables=tables, values=values)
