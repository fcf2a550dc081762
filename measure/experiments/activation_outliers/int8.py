"""Tensors as INT8 with absmax scales (spec §6.3), for §6's tables ``tensors``, ``int8``
and ``int8_scales``.

Symmetric absmax: step = max |x| / 127 over whatever the scale covers, codes =
clamp(round(x / step), -128, 127). What a tensor keeps is told three ways: the distinct
codes it uses (of 256), the codes the ordinary dimensions get, and the round trip's
relative error per token, ||x_t - x̂_t|| / ||x_t||, whose median over tokens says what a
typical token keeps (an error over the whole tensor would be the spike's own, which
absmax always represents exactly). The rounding is simulated in float32, not done by an
integer kernel.
"""

from __future__ import annotations

import torch

from sitedata import wording

QMAX = 127

# Where each absmax scale is computed: one for the tensor, one per hidden dimension (a
# channel: the column the outlier lives in), one per token (a row: the first token's spike).
GRANULARITIES = ("one per tensor", "one per dimension", "one per token")


def codes(x: torch.Tensor, step: torch.Tensor | float) -> torch.Tensor:
    return torch.clamp(torch.round(x / step), -QMAX - 1, QMAX)


def levels_used(x: torch.Tensor, step: torch.Tensor | float) -> int:
    """Distinct INT8 codes in ``x`` at ``step`` (counted in one pass: a bincount of the
    256 codes, not a sort)."""
    found = torch.bincount((codes(x, step) + QMAX + 1).long().flatten(), minlength=2 * (QMAX + 1))
    return int((found > 0).sum())


def levels_per_layer(x: torch.Tensor) -> torch.Tensor:
    """``levels_used`` of every layer of ``x`` (layers, tokens, width), each at its own
    tensor-wide absmax step, in one bincount: layer i's codes counted in bins i x 256 on."""
    layers = x.shape[0]
    step = (x.abs().amax(dim=(1, 2), keepdim=True) / QMAX).clamp(min=torch.finfo(x.dtype).tiny)
    bins = (codes(x, step) + QMAX + 1).long() + torch.arange(layers).view(-1, 1, 1) * 2 * (QMAX + 1)
    found = torch.bincount(bins.flatten(), minlength=layers * 2 * (QMAX + 1))
    return (found.view(layers, -1) > 0).sum(dim=1)


def levels_per_dimension(c: torch.Tensor) -> torch.Tensor:
    """The distinct codes in each column of ``c`` (tokens, width): one sort along the
    tokens, then the places where a column's sorted codes change."""
    ordered = c.sort(dim=0).values
    return 1 + (ordered[1:] != ordered[:-1]).sum(dim=0)


def absmax_step(x: torch.Tensor, granularity: str) -> torch.Tensor:
    """The step of each scale of ``x`` (tokens, width), shaped to divide it."""
    if granularity == "one per tensor":
        m = x.abs().amax().reshape(1, 1)
    elif granularity == "one per dimension":
        m = x.abs().amax(dim=0, keepdim=True)
    elif granularity == "one per token":
        m = x.abs().amax(dim=1, keepdim=True)
    else:
        raise ValueError(f"unknown granularity {granularity!r}")
    return (m / QMAX).clamp(min=torch.finfo(x.dtype).tiny)  # an all-zero row or column keeps code 0


def token_error(x: torch.Tensor, step: torch.Tensor | float) -> float:
    """The median over tokens of each token's relative error ||x_t - x̂_t|| / ||x_t||."""
    err = torch.linalg.norm(x - codes(x, step) * step, dim=1)
    norm = torch.linalg.norm(x, dim=1).clamp(min=torch.finfo(x.dtype).tiny)
    return float((err / norm).median())


def top_of(x: torch.Tensor) -> tuple[torch.Tensor, int, int]:
    """The per-dimension maxima of |x| (tokens, width), the largest's dimension and token."""
    dim_max = x.abs().amax(dim=0)
    top_dim = int(dim_max.argmax())
    return dim_max, top_dim, int(x[:, top_dim].abs().argmax())


def tensor_stats(x: torch.Tensor) -> dict:
    """One row of the ``tensors`` table for ``x`` (tokens, width): its largest magnitude and
    where it sits, the median dimension's max |x|, the INT8 codes one tensor-wide scale
    leaves it (with and without the first token), and the median token's error with a
    scale per tensor, per dimension and per token."""
    dim_max, top_dim, top_token = top_of(x)
    median = float(dim_max.median())
    row = {
        "width": int(x.shape[1]),
        "max_abs": float(dim_max[top_dim]),
        "top_dim": top_dim,
        "top_token": top_token,
        "median_dim_max": median,
        "top_over_median": float(dim_max[top_dim]) / median if median > 0 else float("inf"),
        "levels": levels_used(x, absmax_step(x, "one per tensor")),
        "rest_levels": levels_used(x[1:], absmax_step(x[1:], "one per tensor")),
    }
    for granularity in GRANULARITIES:
        row[f"error_{granularity.removeprefix('one per ')}"] = token_error(x, absmax_step(x, granularity))
    return row


def ordinary_dims(dim_max: torch.Tensor, count: int) -> list[int]:
    """The dimensions at the ``count`` evenly spaced quantiles of the per-dimension maxima
    (the quartiles for three): ordinary dimensions, neither the outliers nor the quietest."""
    order = dim_max.argsort()
    width = dim_max.numel()
    return [int(order[int((i + 1) / (count + 1) * (width - 1))]) for i in range(count)]


def int8_table(
    tensor: str, x: torch.Tensor, *, ordinary: int, excluded: int
) -> tuple[list[dict], dict[str, float | int | str]]:
    """The ``int8`` rows of ``x`` (tokens, width), labelled ``tensor``: one tensor-wide
    scale over all of it, with its top ``excluded`` dimensions left out of the scale (and
    of the tensor), and with its first token left out; per row the step, the codes the
    tensor uses and the fewest and most that its ``ordinary`` ordinary dimensions get.
    Also the values the page names (unprefixed: the caller prefixes them)."""
    dim_max = x.abs().amax(dim=0)
    quiet = ordinary_dims(dim_max, ordinary)
    top = dim_max.topk(excluded).indices.tolist()
    keep = torch.ones(x.shape[1], dtype=torch.bool)
    keep[top] = False
    kept_position = {int(d): i for i, d in enumerate(keep.nonzero().view(-1).tolist())}
    rows, values = [], {}
    for setting, part, dims, key in (
        ("all dimensions", x, quiet, "all"),
        (
            wording.ACTIVATION_TOP_EXCLUDED.format(count=excluded),
            x[:, keep],
            [kept_position[d] for d in quiet],
            "excluded",
        ),
        ("first token excluded", x[1:], quiet, "rest"),
    ):
        step = float(part.abs().max()) / QMAX
        per_dim = [levels_used(part[:, d], step) for d in dims]
        rows.append(
            {
                "tensor": tensor,
                "setting": setting,
                "scale": step,
                "levels_used": levels_used(part, step),
                "ordinary_levels_min": min(per_dim),
                "ordinary_levels_max": max(per_dim),
            }
        )
        values[f"levels_{key}"] = rows[-1]["levels_used"]
        values[f"scale_{key}"] = step
        values[f"ordinary_min_{key}"] = min(per_dim)
        values[f"ordinary_max_{key}"] = max(per_dim)
    values["scale_ratio"] = values["scale_all"] / values["scale_excluded"]
    values["ordinary_dims"] = ", ".join(map(str, quiet))
    values["excluded_dims"] = ", ".join(map(str, top))
    return rows, values


def scale_rows(tensor: str, x: torch.Tensor) -> list[dict]:
    """The ``int8_scales`` rows of ``x`` (tokens, width): absmax scales computed per tensor,
    per dimension and per token, each with the number of scales, the median token's
    relative error, and the median, over dimensions, of the distinct codes a dimension's
    values use."""
    rows = []
    for granularity in GRANULARITIES:
        step = absmax_step(x, granularity)
        per_dim = levels_per_dimension(codes(x, step)).float()
        rows.append(
            {
                "tensor": tensor,
                "granularity": granularity,
                "scales": int(step.numel()),
                "token_error": token_error(x, step),
                "median_levels": float(per_dim.median()),
            }
        )
    return rows
