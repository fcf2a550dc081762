"""One layer's hidden states as INT8 with one tensor-wide absmax scale (spec §6.3).

For §6's table ``int8``: distinct levels used out of 256, the scale, and the levels a
few ordinary dimensions get; then the same with the top dimensions left out of the
scale, and with the first token left out. The rounding is simulated in float32 (round
and clamp), not done by an integer kernel.
"""

from __future__ import annotations

import torch


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
        (f"top {excluded_dims} dimensions excluded", scale_kept, used_kept, per_kept),
        ("first token excluded", scale_rest, used_rest, per_rest),
    ):
        rows.append({"setting": setting, "scope": "whole tensor", "scale": scale, "levels_used": used})
        for d in ordinary:
            rows.append(
                {
                    "setting": setting,
                    "scope": f"dim {d} (max |h| {float(m[d]):.3g})",
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
