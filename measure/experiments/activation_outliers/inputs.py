"""Every tensor a projection multiplies, at every layer, beside the residual stream
(§6's tables ``tensors`` and ``tensors_summary``, and the values that name the tensor
that INT8 with one scale serves worst).

A row per tensor and layer (``tensor_stats``); a summary row per tensor over its layers;
the worst projection input is the one whose tensor-wide INT8 scale leaves it the fewest
codes (on a tie, the one whose largest dimension stands furthest above the median one).
"""

from __future__ import annotations

from statistics import median, median_low

import torch

from measure.experiments.activation_outliers.capture import INPUTS, NORMALISED, RESIDUAL, Capture
from measure.experiments.activation_outliers.int8 import levels_per_layer, tensor_stats
from sitedata import wording

QUARTER = 64  # a quarter of INT8's 256 codes: a tensor that uses fewer has lost most of its resolution


def input_label(projections: str) -> str:
    return wording.ACTIVATION_INPUT.format(projections=projections)


LABELS = {label: input_label(label) for label, _ in INPUTS}
PROJECTIONS = {v: k for k, v in LABELS.items()}  # a row's tensor label -> the projections that read it


def tensor_rows(cap: Capture) -> list[dict]:
    """The ``tensors`` table: the residual stream first (the tensor the outliers are known
    from, and the chapter's), then each projection input, every layer of each."""
    tensors = {RESIDUAL: cap.residual, **{LABELS[k]: v for k, v in cap.inputs.items()}}
    return [
        {"tensor": name, "layer": layer, **tensor_stats(x[layer])}
        for name, x in tensors.items()
        for layer in range(len(x))
    ]


def fewest_input(cap: Capture) -> dict:
    """The projection input one tensor-wide scale leaves the fewest codes, counting only
    what that needs (the prompts table asks it of every prompt): its label, layer, codes
    and the token its largest value sits on; ties as ``fewest``."""
    rows = []
    for label, x in cap.inputs.items():
        dim_max = x.abs().amax(dim=1)  # (layers, width)
        top_dim = dim_max.argmax(dim=1)
        ratio = dim_max.amax(dim=1) / dim_max.median(dim=1).values.clamp(min=torch.finfo(x.dtype).tiny)
        for layer, levels in enumerate(levels_per_layer(x).tolist()):
            token = int(x[layer, :, top_dim[layer]].abs().argmax())
            rows.append(
                {
                    "tensor": LABELS[label],
                    "layer": layer,
                    "levels": levels,
                    "top_over_median": float(ratio[layer]),
                    "top_token": token,
                }
            )
    return fewest(rows)


def fewest(rows: list[dict]) -> dict:
    """The row whose tensor keeps the fewest INT8 codes under one scale."""
    return min(rows, key=lambda r: (r["levels"], -r["top_over_median"]))


def summary_rows(rows: list[dict]) -> list[dict]:
    """The ``tensors_summary`` table: per tensor, over its layers, its largest value and
    where, the median layer's ratio of largest to median dimension, the fewest codes and
    where, the median layer's codes, and the median layer's token error with each scale."""
    out = []
    for name in dict.fromkeys(r["tensor"] for r in rows):
        mine = [r for r in rows if r["tensor"] == name]
        top, worst = max(mine, key=lambda r: r["max_abs"]), fewest(mine)
        out.append(
            {
                "tensor": name,
                "layers": len(mine),
                "max_abs": top["max_abs"],
                "max_layer": top["layer"],
                "max_token": top["top_token"],
                "top_over_median": median(r["top_over_median"] for r in mine),
                "fewest_levels": worst["levels"],
                "fewest_layer": worst["layer"],
                "median_levels": median_low(r["levels"] for r in mine),
                "under_quarter": sum(r["levels"] < QUARTER for r in mine),
                **{f"error_{g}": median(r[f"error_{g}"] for r in mine) for g in ("tensor", "dimension", "token")},
                "worst_error_tensor": max(r["error_tensor"] for r in mine),
            }
        )
    return out


def input_values(rows: list[dict]) -> dict:
    """The values the page names: the worst projection input, the normalised inputs
    (q/k/v's and gate/up's), and how many projection inputs keep under a quarter of the
    codes, and of those how many have their largest value on the first token."""
    inputs = [r for r in rows if r["tensor"] != RESIDUAL]
    normalised = [r for r in rows if r["tensor"] in {LABELS[k] for k in NORMALISED}]
    residual = [r for r in rows if r["tensor"] == RESIDUAL]
    worst = fewest(inputs)
    under = [r for r in inputs if r["levels"] < QUARTER]
    return {
        "inputs_tensors": len(inputs),
        "inputs_fewest_tensor": worst["tensor"],
        "inputs_fewest_layer": worst["layer"],
        "inputs_fewest_levels": worst["levels"],
        "inputs_fewest_dim": worst["top_dim"],
        "inputs_fewest_token": worst["top_token"],
        "inputs_fewest_max": worst["max_abs"],
        "inputs_fewest_median_dim_max": worst["median_dim_max"],
        "inputs_fewest_ratio": worst["top_over_median"],
        "inputs_under_quarter": len(under),
        "inputs_under_quarter_token0": sum(r["top_token"] == 0 for r in under),
        "inputs_median_levels": median_low(r["levels"] for r in inputs),
        "normalised_fewest_levels": fewest(normalised)["levels"],
        "normalised_median_levels": median_low(r["levels"] for r in normalised),
        "normalised_max_abs": max(r["max_abs"] for r in normalised),
        "residual_over_normalised": max(r["max_abs"] for r in residual) / max(r["max_abs"] for r in normalised),
        "residual_median_levels": median_low(r["levels"] for r in residual),
        "quarter_levels": QUARTER,
    }
