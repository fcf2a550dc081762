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
  get; then the same with the top dimensions left out of the scale.

Needs trained weights: outlier dimensions are learned, random weights have none.

Writes ``site_data/outliers/``. Alone: ``python -m measure run --only outliers``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure.context import Context, book_text
from measure.schema import Column, Result, Table, Value

TITLE = "Activation outliers"
NEEDS_TRAINED = True
PASSAGE_START = "Alice was beginning to get very tired"  # the book's first paragraph of prose


@dataclass(frozen=True, kw_only=True)
class Config:
    prompt_tokens: int = 84  # spec §6.1
    top_per_layer: int = 3
    excluded_dims: int = 4  # spec §6.3
    ordinary_dims: int = 3

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "smoke":
            return cls(prompt_tokens=16)
        return cls()  # one forward pass: the full sizes fit any profile


def _prompt(cfg: Config, ctx: Context) -> tuple[torch.Tensor, str]:
    text = book_text()
    passage = text[text.index(PASSAGE_START) :]
    ids = ctx.model.tokenizer(passage, add_special_tokens=False)["input_ids"][: cfg.prompt_tokens]
    return torch.tensor([ids], device=ctx.device), ctx.model.tokenizer.decode(ids)


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


def _int8_levels(h: torch.Tensor, dims: list[int], scale: float) -> tuple[int, dict[int, int]]:
    codes = torch.clamp(torch.round(h / scale), -128, 127).to(torch.int16)
    return int(torch.unique(codes).numel()), {d: int(torch.unique(codes[:, d]).numel()) for d in dims}


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
    cols = [
        Column(name="layer", label="layer"),
        Column(name="median_dim_max", kind="numeric", label="median dimension's max |h|"),
    ]
    for r in range(1, cfg.top_per_layer + 1):
        cols += [
            Column(name=f"top{r}_dim", kind="numeric", label=f"#{r} dim"),
            Column(name=f"top{r}_max", kind="numeric", label=f"#{r} max |h|"),
        ]
    cols += [
        Column(name="top1_token", kind="numeric", label="token of #1"),
        Column(name="top1_over_median", unit="x", kind="numeric", label="#1 / median"),
        Column(name="rest_median_dim_max", kind="numeric", label="without the first token: median"),
        Column(name="rest_top1_dim", kind="numeric", label="#1 dim"),
        Column(name="rest_top1_max", kind="numeric", label="#1 max |h|"),
    ]
    layers_t = Table(
        name="layers",
        title="Per layer: the largest hidden dimensions (max |h| over tokens)",
        columns=tuple(cols),
        rows=layer_rows,
    )

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
    tracked_t = Table(
        name="tracked",
        title="Max |h| of every dimension that is ever among a layer's largest, at every layer",
        columns=(
            Column(name="dim", label="dimension"),
            Column(name="layer", label="layer"),
            Column(name="max_abs", kind="numeric", label="max |h|"),
            Column(name="rank", kind="numeric", label="rank in its layer"),
            Column(name="rest_max_abs", kind="numeric", label="max |h| without the first token"),
        ),
        rows=tracked_rows,
    )

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
    hist_t = Table(
        name="histogram",
        title=f"Layer {mid}: hidden dimensions by their max |h|, in power-of-two bins",
        columns=(
            Column(name="bin_low", label="from"),
            Column(name="bin_high", label="below"),
            Column(name="dims", unit="dimensions", kind="numeric", label="dimensions"),
            Column(name="dims_rest", unit="dimensions", kind="numeric", label="without the first token"),
        ),
        rows=hist_rows,
    )

    # INT8 with one tensor-wide scale (spec §6.3), then without the top dimensions.
    h = hs[mid]
    order = m.argsort()
    quantiles = [(i + 1) / (cfg.ordinary_dims + 1) for i in range(cfg.ordinary_dims)]
    ordinary = [int(order[int(qq * (hidden - 1))]) for qq in quantiles]  # quartiles of the maxima
    excluded = m.topk(cfg.excluded_dims).indices.tolist()
    keep = torch.ones(hidden, dtype=torch.bool)
    keep[excluded] = False
    scale_all = float(h.abs().max()) / 127
    scale_kept = float(h[:, keep].abs().max()) / 127
    used_all, per_all = _int8_levels(h, ordinary, scale_all)
    scale_rest = float(h[1:].abs().max()) / 127
    used_rest, per_rest = _int8_levels(h[1:], ordinary, scale_rest)
    used_kept, per_kept = _int8_levels(h[:, keep], [], scale_kept)
    kept_index = {int(d): i for i, d in enumerate(keep.nonzero().view(-1).tolist())}
    _, per_kept = _int8_levels(h[:, keep], [kept_index[d] for d in ordinary], scale_kept)
    per_kept = {d: per_kept[kept_index[d]] for d in ordinary}
    int8_rows = []
    for setting, scale, used, per in (
        ("all dimensions", scale_all, used_all, per_all),
        (f"top {cfg.excluded_dims} dimensions excluded", scale_kept, used_kept, per_kept),
        ("first token excluded", scale_rest, used_rest, per_rest),
    ):
        int8_rows.append({"setting": setting, "scope": "whole tensor", "scale": scale, "levels_used": used})
        for d in ordinary:
            int8_rows.append(
                {
                    "setting": setting,
                    "scope": f"dim {d} (max |h| {float(m[d]):.3g})",
                    "scale": scale,
                    "levels_used": per[d],
                }
            )
    int8_t = Table(
        name="int8",
        title=f"Layer {mid} hidden states as INT8 with one absmax scale: distinct levels used (of 256)",
        columns=(
            Column(name="setting", label="scale computed over"),
            Column(name="scope", label="levels counted in", kind="numeric"),
            Column(name="scale", kind="numeric", label="scale"),
            Column(name="levels_used", unit="levels", kind="numeric", label="levels used"),
        ),
        rows=int8_rows,
    )
    values = [
        Value(name="prompt_tokens", value=n_tokens, unit="tokens"),
        Value(name="prompt_text", value=text),
        Value(name="hidden", value=hidden, unit="dimensions"),
        Value(name="layers", value=n_layers, unit="layers"),
        Value(name="biggest_dim", value=big_dim, kind="numeric"),
        Value(name="biggest_value", value=float(dim_max[big_layer, big_dim]), kind="numeric"),
        Value(name="biggest_layer", value=big_layer, kind="numeric"),
        Value(name="biggest_token", value=int(where[big_layer, big_dim]), kind="numeric"),
        Value(name="biggest_layer_median", value=float(dim_max[big_layer].median()), kind="numeric"),
        Value(name="biggest_at_mid", value=float(dim_max[n_layers // 2, big_dim]), kind="numeric"),
        Value(name="biggest_leads_layers", value=len(leads), unit="layers", kind="numeric"),
        Value(name="biggest_first_lead", value=leads[0] if leads else -1, kind="numeric"),
        Value(name="biggest_in_top_layers", value=len(in_top), unit="layers", kind="numeric"),
        Value(name="median_dim_max_overall", value=float(dim_max.median()), kind="numeric"),
        Value(name="mid_layer", value=mid),
        Value(name="mid_median_dim_max", value=float(m.median()), kind="numeric"),
        Value(name="mid_top_dim", value=int(m.argmax()), kind="numeric"),
        Value(name="mid_top_value", value=float(m.max()), kind="numeric"),
        Value(name="mid_below_8", value=int((m < 8).sum()), unit="dimensions", kind="numeric"),
        Value(name="mid_empty_bins", value=sum(r["dims"] == 0 for r in hist_rows), unit="bins", kind="numeric"),
        Value(name="int8_levels_all", value=used_all, unit="levels", kind="numeric"),
        Value(name="int8_levels_excluded", value=used_kept, unit="levels", kind="numeric"),
        Value(name="int8_scale_all", value=scale_all, kind="numeric"),
        Value(name="int8_scale_excluded", value=scale_kept, kind="numeric"),
        Value(name="int8_scale_ratio", value=scale_all / scale_kept, unit="x", kind="numeric"),
        Value(name="int8_levels_rest", value=used_rest, unit="levels", kind="numeric"),
        Value(name="int8_ordinary_max_levels_all", value=max(per_all.values()), unit="levels", kind="numeric"),
        Value(name="int8_ordinary_min_levels_excluded", value=min(per_kept.values()), unit="levels", kind="numeric"),
        Value(name="ordinary_dims", value=", ".join(map(str, ordinary)), kind="numeric"),
        Value(name="int8_scale_rest", value=scale_rest, kind="numeric"),
        Value(name="rest_mid_top_dim", value=int(rest_max[mid].argmax()), kind="numeric"),
        Value(name="rest_mid_top_value", value=float(rest_max[mid].max()), kind="numeric"),
        Value(name="rest_mid_median", value=float(rest_max[mid].median()), kind="numeric"),
        Value(
            name="rest_biggest_leads_layers",
            value=sum(r["rest_top1_dim"] == big_dim for r in layer_rows),
            unit="layers",
            kind="numeric",
        ),
        Value(name="excluded_dims", value=", ".join(map(str, excluded)), kind="numeric"),
        Value(name="excluded_count", value=cfg.excluded_dims),
        Value(name="octaves_spanned", value=math.log2(float(m.max()) / float(m.median())), kind="numeric"),
    ]
    return Result(tables=[layers_t, tracked_t, hist_t, int8_t], values=values)
