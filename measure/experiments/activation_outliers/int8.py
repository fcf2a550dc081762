"""One layer's hidden states as INT8 with one tensor-wide absmax scale (spec §6.3).

For §6's table ``int8``: distinct levels used out of 256, the scale, and the levels a
few ordinary dimensions get; then the same with the top dimensions left out of the
scale, and with the first token left out. The rounding is simulated in float32 (round
and clamp), not done by an integer kernel.
"""

from __future__ import annotations

import torch

from sitedata import wording


def int8_levels(h: torch.Tensor, dims: list[int], scale: float) -> tuple[int, dict[int, int]]:
    """Distinct INT8 codes in all of ``h`` (tokens, hidden), and in each of ``dims``."""
    codes = torch.clamp(torch.round(h / scale), -128, 127).to(torch.int16)
    return int(torch.unique(codes).numel()), {d: int(torch.unique(codes[:, d]).numel()) for d in dims}


def int8_table(h: torch.Tensor, m: torch.Tensor, *, ordinary_dims: int, excluded_dims: int) -> tuple[list, dict]:
    """Rows of the ``int8`` table for hidden states ``h`` (tokens, hidden) whose per-dimension
    max |h| is ``m``, and the experiment's ``int8_*``, ``ordinary_dims`` and ``excluded_dims``."""
    hidden = h.shape[1]
    order = m.argsort()
    quantiles = [(i + 1) / (ordinary_dims + 1) for i in range(ordinary_dims)]
    ordinary = [int(order[int(qq * (hidden - 1))]) for qq in quantiles]  # quartiles of the maxima
    excluded = m.topk(excluded_dims).indices.tolist()
    keep = torch.ones(hidden, dtype=torch.bool)
    keep[excluded] = False
    scale_all = float(h.abs().max()) / 127
    scale_kept = float(h[:, keep].abs().max()) / 127
    used_all, per_all = int8_levels(h, ordinary, scale_all)
    scale_rest = float(h[1:].abs().max()) / 127
    used_rest, per_rest = int8_levels(h[1:], ordinary, scale_rest)
    used_kept, per_kept = int8_levels(h[:, keep], [], scale_kept)
    kept_index = {int(d): i for i, d in enumerate(keep.nonzero().view(-1).tolist())}
    _, per_kept = int8_levels(h[:, keep], [kept_index[d] for d in ordinary], scale_kept)
    per_kept = {d: per_kept[kept_index[d]] for d in ordinary}
    rows = []
    for setting, scale, used, per in (
        ("all dimensions", scale_all, used_all, per_all),
        (wording.ACTIVATION_TOP_EXCLUDED.format(count=excluded_dims), scale_kept, used_kept, per_kept),
        ("first token excluded", scale_rest, used_rest, per_rest),
    ):
        rows.append({"setting": setting, "scope": "whole tensor", "scale": scale, "levels_used": used})
        for d in ordinary:
            rows.append(
                {
                    "setting": setting,
                    "scope": wording.ACTIVATION_DIM.format(dim=d, max=f"{float(m[d]):,.1f}"),
                    "scale": scale,
                    "levels_used": per[d],
                }
            )
    values = {
        "int8_levels_all": used_all,
        "int8_levels_excluded": used_kept,
        "int8_scale_all": scale_all,
        "int8_scale_excluded": scale_kept,
        "int8_scale_ratio": scale_all / scale_kept,
        "int8_levels_rest": used_rest,
        "int8_ordinary_max_levels_all": max(per_all.values()),
        "int8_ordinary_min_levels_excluded": min(per_kept.values()),
        "ordinary_dims": ", ".join(map(str, ordinary)),
        "int8_scale_rest": scale_rest,
        "excluded_dims": ", ".join(map(str, excluded)),
    }
    return rows, values


# Where each absmax scale is computed: one for the tensor, one per hidden dimension (a
# channel: the column the outlier lives in), one per token (a row: the first token's spike).
GRANULARITIES = ("one per tensor", "one per dimension", "one per token")


def scale_rows(h: torch.Tensor) -> list[dict]:
    """The ``int8_scales`` table: ``h`` (tokens, hidden) as INT8 with absmax scales computed
    per tensor, per hidden dimension and per token, each with the number of scales, the
    relative error ||h - h_hat|| / ||h|| of the round trip, and the median, over hidden
    dimensions, of the distinct codes a dimension's values use."""
    rows = []
    for granularity in GRANULARITIES:
        if granularity == "one per tensor":
            scale = h.abs().amax().reshape(1, 1) / 127
        elif granularity == "one per dimension":
            scale = h.abs().amax(dim=0, keepdim=True) / 127
        else:
            scale = h.abs().amax(dim=1, keepdim=True) / 127
        scale = scale.clamp(min=torch.finfo(h.dtype).tiny)  # an all-zero column keeps code 0
        codes = torch.clamp(torch.round(h / scale), -128, 127)
        levels = torch.tensor([torch.unique(codes[:, d]).numel() for d in range(h.shape[1])], dtype=torch.float32)
        rows.append(
            {
                "granularity": granularity,
                "scales": int(scale.numel()),
                "relative_error": float(torch.linalg.norm(h - codes * scale) / torch.linalg.norm(h)),
                "median_levels": float(levels.median()),
            }
        )
    return rows
