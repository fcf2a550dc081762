"""§6 Activation outliers: a few hidden dimensions of the residual stream are huge.

Measures, on the run's model, for one ordinary prompt of book prose:

* ``layers``: the residual stream after every decoder layer (forward hooks), and for
  each hidden dimension its max |h| over the prompt's tokens: per layer the median
  dimension, the largest three and the token where the largest sits.
* ``tracked``: those maxima, layer by layer, for every dimension that is among the
  top few of any layer (enough to see whether the same ones persist).
* ``histogram``: the per-dimension maxima at the middle layer in power-of-two bins.
* ``int8``: that layer's hidden states quantized to INT8 with one tensor-wide absmax
  scale: levels used out of 256, the scale, and the levels a few ordinary dimensions
  get; then the same with the top dimensions left out of the scale
  (``measure.lab.activation_outliers_int8``).
* ``prompts``: the same capture for several prompts (passages from different places of
  the book, a chat-formatted question, a list of numbers): per prompt the leading
  dimension, its value, layer and how many layers it leads, the median dimension, and the
  median and 99th percentile of |h| at the middle layer; all with and without the first
  token (``measure.lab.activation_outliers_prompts``).
* ``prompt_layers``: per prompt and layer, the max |h| of the main prompt's biggest
  dimension and of the median dimension.

Needs trained weights: outlier dimensions are learned, random weights have none.

Writes ``site_data/activation_outliers/``. Alone: ``python -m measure run --only activation_outliers``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure.lab.activation_outliers_int8 import int8_table
from measure.lab.activation_outliers_prompts import (
    CHAT_QUESTION,
    abs_percentile,
    agreement,
    book_passages,
    numbers_text,
    prompt_stats,
)
from measure.lab.context import Context, book_text
from sitedata.schema import Column, Result, Table, Value

TITLE = "Activation outliers"
NEEDS_TRAINED = True
PASSAGE_START = "Alice was beginning to get very tired"  # the book's first paragraph of prose
TOP_PER_LAYER = 3  # the layers table has a column pair per rank

# Everything here is read from the model's hidden states, so it reproduces on the same
# device type and dtype only; that includes which dimensions, tokens and layers come out
# on top and the counts of levels and dimensions (INT8 is rounded here in float32, not by
# an integer kernel). The prompt, the model's shape and the configuration hold anywhere.
_ACT = dict(compare="numeric")
_PICKED = dict(compare="exact", scope="device")

TABLES = (
    Table(
        "layers",
        "Per layer: the largest hidden dimensions (max |h| over tokens)",
        (
            Column("layer", label="layer"),
            Column("median_dim_max", label="median dimension's max |h|", **_ACT),
            *(
                c
                for r in range(1, TOP_PER_LAYER + 1)
                for c in (
                    Column(f"top{r}_dim", label=f"#{r} dim", **_PICKED),
                    Column(f"top{r}_max", label=f"#{r} max |h|", **_ACT),
                )
            ),
            Column("top1_token", label="token of #1", **_PICKED),
            Column("top1_over_median", "x", "#1 / median", **_ACT),
            Column("rest_median_dim_max", label="without the first token: median", **_ACT),
            Column("rest_top1_dim", label="#1 dim", **_PICKED),
            Column("rest_top1_max", label="#1 max |h|", **_ACT),
        ),
    ),
    Table(
        "tracked",
        "Max |h| of every dimension that is ever among a layer's largest, at every layer",
        (
            Column("dim", label="dimension", **_PICKED),
            Column("layer", label="layer"),
            Column("max_abs", label="max |h|", **_ACT),
            Column("rank", label="rank in its layer", **_PICKED),
            Column("rest_max_abs", label="max |h| without the first token", **_ACT),
        ),
    ),
    Table(
        "histogram",
        "Layer {mid_layer}: hidden dimensions by their max |h|, in power-of-two bins",
        (
            Column("bin_low", label="from"),
            Column("bin_high", label="below"),
            Column("dims", "dimensions", "dimensions", **_PICKED),
            Column("dims_rest", "dimensions", "without the first token", **_PICKED),
        ),
    ),
    Table(
        "int8",
        "Layer {mid_layer} hidden states as INT8 with one absmax scale: distinct levels used (of 256)",
        (
            Column("setting", label="scale computed over"),
            Column("scope", label="levels counted in", **_PICKED),
            Column("scale", label="scale", **_ACT),
            Column("levels_used", "levels", "levels used", **_PICKED),
        ),
    ),
    Table(
        "prompts",
        "Every prompt: the leading dimension (largest max |h| at any layer) and the bulk of |h|",
        (
            Column("prompt", label="prompt"),
            Column("tokens", "tokens", "tokens"),
            Column("lead_dim", label="leading dim", **_PICKED),
            Column("lead_max", label="its max |h|", **_ACT),
            Column("lead_layer", label="at layer", **_PICKED),
            Column("lead_layers", "layers", "layers it leads", **_PICKED),
            Column("lead_token", label="on token", **_PICKED),
            Column("most_dim", label="dim largest in most layers", **_PICKED),
            Column("most_layers", "layers", "in layers", **_PICKED),
            Column("median_dim_max", label="median dim's max |h| (highest layer)", **_ACT),
            Column("mid_abs_median", label="median |h|, middle layer", **_ACT),
            Column("mid_abs_p99", label="99th pct |h|, middle layer", **_ACT),
            Column("rest_lead_dim", label="without the first token: leading dim", **_PICKED),
            Column("rest_lead_max", label="its max |h|", **_ACT),
            Column("rest_lead_layer", label="at layer", **_PICKED),
            Column("rest_lead_layers", "layers", "layers it leads", **_PICKED),
            Column("rest_most_dim", label="dim largest in most layers", **_PICKED),
            Column("rest_most_layers", "layers", "in layers", **_PICKED),
            Column("rest_median_dim_max", label="median dim's max |h|", **_ACT),
            Column("rest_mid_abs_median", label="median |h|", **_ACT),
            Column("rest_mid_abs_p99", label="99th pct |h|", **_ACT),
            Column("text_start", label="starts with"),
        ),
    ),
    Table(
        "prompt_layers",
        "Every prompt, every layer: max |h| of dimension {biggest_dim} and of the median dimension",
        (
            Column("prompt", label="prompt"),
            Column("layer", label="layer"),
            Column("dim_max", label="max |h|", **_ACT),
            Column("rest_dim_max", label="without the first token", **_ACT),
            Column("median_dim_max", label="median dimension", **_ACT),
            Column("rest_median_dim_max", label="median, without the first token", **_ACT),
        ),
    ),
)
VALUES = (
    Value("prompt_tokens", "tokens"),
    Value("prompt_text"),
    Value("hidden", "dimensions"),
    Value("layers", "layers"),
    Value("biggest_dim", **_PICKED),
    Value("biggest_value", **_ACT),
    Value("biggest_layer", **_PICKED),
    Value("biggest_token", **_PICKED),
    Value("biggest_layer_median", **_ACT),
    Value("biggest_at_mid", **_ACT),
    Value("biggest_leads_layers", "layers", **_PICKED),
    Value("biggest_first_lead", **_PICKED),
    Value("biggest_in_top_layers", "layers", **_PICKED),
    Value("median_dim_max_overall", **_ACT),
    Value("mid_layer"),
    Value("mid_median_dim_max", **_ACT),
    Value("mid_top_dim", **_PICKED),
    Value("mid_top_value", **_ACT),
    Value("mid_below_8", "dimensions", **_PICKED),
    Value(
        "mid_gap_bins",
        "bins",
        description="empty bins between the largest dimension's bin and the next occupied bin below it",
        **_PICKED,
    ),
    Value("int8_levels_all", "levels", **_PICKED),
    Value("int8_levels_excluded", "levels", **_PICKED),
    Value("int8_scale_all", **_ACT),
    Value("int8_scale_excluded", **_ACT),
    Value("int8_scale_ratio", "x", **_ACT),
    Value("int8_levels_rest", "levels", **_PICKED),
    Value("int8_ordinary_max_levels_all", "levels", **_PICKED),
    Value("int8_ordinary_min_levels_excluded", "levels", **_PICKED),
    Value("ordinary_dims", **_PICKED),
    Value("int8_scale_rest", **_ACT),
    Value("rest_mid_top_dim", **_PICKED),
    Value("rest_mid_top_value", **_ACT),
    Value("rest_mid_median", **_ACT),
    Value("rest_biggest_leads_layers", "layers", **_PICKED),
    Value("excluded_dims", **_PICKED),
    Value("excluded_count"),
    Value("octaves_spanned", **_ACT),
    Value("mid_abs_median", description="median |h| over every element of the middle layer", **_ACT),
    Value("mid_abs_p99", description="99th percentile of |h| over every element of the middle layer", **_ACT),
    Value("rest_mid_abs_median", description="the same without the first token", **_ACT),
    Value("rest_mid_abs_p99", description="the same without the first token", **_ACT),
    Value("prompts_count", "prompts"),
    Value("book_prompts", "prompts"),
    Value("prompts_lead_dim", description="the dimension that leads most often across prompts", **_PICKED),
    Value("prompts_sharing_lead", "prompts", description="prompts whose leading dimension is that one", **_PICKED),
    Value("rest_prompts_lead_dim", description="the same without the first token", **_PICKED),
    Value("rest_prompts_sharing_lead", "prompts", **_PICKED),
    Value(
        "rest_prompts_most_dim",
        description="without the first token, the dimension most often largest in the most layers",
        **_PICKED,
    ),
    Value("rest_prompts_sharing_most", "prompts", **_PICKED),
    Value(
        "rest_prompts_most_layers_min", "layers", description="the fewest layers it leads in those prompts", **_PICKED
    ),
    Value("prompts_lead_min", description="the smallest leading value over the prompts", **_ACT),
    Value("prompts_lead_max", description="the largest leading value over the prompts", **_ACT),
    Value("prompts_lead_layers_min", "layers", description="the fewest layers a prompt's lead leads", **_PICKED),
    Value("prompts_median_dim_max", description="the highest median dimension's max over the prompts", **_ACT),
    Value("prompts_lead_token0", "prompts", description="prompts whose biggest value is on the first token", **_PICKED),
)


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


def _prompt_tables(cfg: Config, ctx: Context, *, mid: int, biggest_dim: int) -> tuple[list, list, dict]:
    """The ``prompts`` and ``prompt_layers`` tables, and the values that sum them up."""
    rows, layer_rows = [], []
    for label, ids, text in _other_prompts(cfg, ctx):
        hs = residual_stream(ctx.model.model, ids)
        stats = prompt_stats(hs, mid=mid)
        first_line = " ".join(text.split())
        rows.append({"prompt": label, "tokens": int(ids.shape[1]), **stats, "text_start": first_line[:40]})
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
    }
    return rows, layer_rows, values


@torch.inference_mode()
def residual_stream(model, ids: torch.Tensor) -> torch.Tensor:
    """The hidden state after every decoder layer: (layers, tokens, hidden), float32."""
    captured: list[torch.Tensor] = []

    def hook(_module, _inputs, output):
        h = output[0] if isinstance(output, tuple) else output
        captured.append(h[0].detach().float().cpu())

    handles = [layer.register_forward_hook(hook) for layer in model.model.layers]
    try:
        model(input_ids=ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return torch.stack(captured)


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
    ctx.log(f"  capturing the residual stream of {ids.shape[1]} tokens at every layer")
    hs = residual_stream(ctx.model.model, ids)  # (L, T, D)
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

    # INT8 with one tensor-wide scale (spec §6.3), then without the top dimensions.
    int8_rows, int8_values = int8_table(hs[mid], m, ordinary_dims=cfg.ordinary_dims, excluded_dims=cfg.excluded_dims)
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
    }
    ctx.log("  the same capture for several prompts")
    prompt_rows, prompt_layer_rows, prompt_values = _prompt_tables(cfg, ctx, mid=mid, biggest_dim=big_dim)
    values.update(prompt_values)
    tables = {
        "layers": layer_rows,
        "tracked": tracked_rows,
        "histogram": hist_rows,
        "int8": int8_rows,
        "prompts": prompt_rows,
        "prompt_layers": prompt_layer_rows,
    }
    return Result(tables=tables, values=values)
