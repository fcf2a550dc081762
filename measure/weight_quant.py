"""§5 Quantizing weights: what each scheme costs in bits and in error, matrix by matrix.

Measures, on the run's model:

* ``sizes``: the model's parameters at 4, 2, 1 and 0.5 bytes each, and as each scheme
  would store it (projection matrices quantized, everything else fp16).
* ``errors``: every projection matrix quantized with every scheme of
  ``measure.quantizers.SCHEMES`` (the chapter's six plus int4 group-64, which has NF4's
  4.25 bits per weight): relative Frobenius error, mean over matrices and the worst one,
  named. ``matrix_errors`` holds every matrix.
* ``outlier_matrix`` / ``outlier_levels`` / ``outlier_codes``: the matrix with the
  largest max|w| / std: its statistics, and which int4 levels its ordinary weights
  (within 3 standard deviations) land on under each scale granularity.
* ``distributed_grid``: whether the weights were already quantized before this run saw
  them, read from the weights alone: distinct values per block of 32 consecutive weights
  (a GGUF Q4_1 block holds at most 16), and the error of re-quantizing with Q4_1's own
  rule (asymmetric 4-bit, min and step per 32 weights), which is ~0 for Q4_1 weights.

Valid on random weights too (the error of a scheme on Gaussian matrices is a fact about
the scheme; the grid check then correctly finds no grid), so it does not refuse them.

Writes ``site_data/weight_quant/``. Alone: ``python -m measure run --only weight_quant``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure import quantizers as q
from measure.context import Context
from measure.schema import Column, Result, Table, Value

TITLE = "Quantizing weights"

Q4_1_BLOCK = 32  # GGUF Q4_1: 32 weights share an fp16 step and an fp16 minimum (ggml-common.h)
Q4_1_LEVELS = 16
# GGUF Q8_0: int8 codes, one fp16 absmax scale per 32 weights (ggml-common.h): symmetric
# absmax with groups of 32, i.e. this module's own quantizer.
Q8_0 = q.Scheme(name="q8_0", label="Q8_0", bits=8, granularity="group", group=Q4_1_BLOCK)
ORDINARY_SIGMAS = 3.0  # "ordinary" weights: within 3 std of the mean (99.7% of a normal)
OUTLIER_SIGMAS = 6.0  # spec §5.4 counts weights beyond 6 sigma


@dataclass(frozen=True, kw_only=True)
class Config:
    schemes: tuple[str, ...] = tuple(q.SCHEMES)
    max_matrices: int | None = None  # None: every projection matrix

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile in ("full", "cpu"):
            return cls()  # a few seconds of arithmetic: no reason to cut anything
        return cls(schemes=("int8_tensor", "int8_row", "int4_tensor", "int4_row", "nf4_b64"))


def _kind(name: str) -> str:
    return name.rsplit(".", 1)[-1].removesuffix("_proj")


def _sizes(cfg: Config, ctx: Context, layers) -> tuple[Table, list[Value]]:
    model = ctx.model.model
    params = sum(p.numel() for p in model.parameters())  # tied weights counted once
    proj = sum(lin.weight.numel() for _, lin in layers)
    rows = [
        {"storage": label, "bits_per_parameter": float(bits), "bytes": params * bits // 8}
        for label, bits in (("fp32", 32), ("fp16 / bf16", 16), ("int8", 8), ("int4", 4))
    ]
    for name in cfg.schemes:
        s = q.SCHEMES[name]
        proj_bits = sum(q.bits_per_weight(s, tuple(lin.weight.shape)) * lin.weight.numel() for _, lin in layers)
        total_bits = proj_bits + (params - proj) * 16
        rows.append(
            {
                "storage": f"{s.label} projections, rest fp16",
                "bits_per_parameter": total_bits / params,
                "bytes": math.ceil(total_bits / 8),
            }
        )
    if ctx.model.source == "embedded":
        from measure.models import embedded_gguf_path

        size = embedded_gguf_path().stat().st_size
        rows.append({"storage": "the GGUF file as distributed", "bits_per_parameter": size * 8 / params, "bytes": size})
    table = Table(
        name="sizes",
        title="The model's parameters stored at each precision",
        columns=(
            Column(name="storage", label="storage"),
            Column(name="bits_per_parameter", unit="bits", kind="numeric", label="bits per parameter"),
            Column(name="bytes", unit="bytes", label="size"),
        ),
        rows=rows,
    )
    values = [
        Value(name="parameters", value=params, unit="parameters", description="tied embeddings counted once"),
        Value(name="projection_parameters", value=proj, unit="parameters"),
        Value(name="projection_matrices", value=len(layers), unit="matrices"),
        Value(name="projection_share", value=proj / params, unit="fraction", kind="numeric"),
    ]
    return table, values


def _errors(cfg: Config, ctx: Context, layers) -> tuple[Table, Table, list[Value]]:
    per_matrix = []
    for name, lin in ctx.progress(layers, "quantizing every projection matrix"):
        w = lin.weight.detach()
        row = {"matrix": f"{name}.weight", "kind": _kind(name), "rows": w.shape[0], "cols": w.shape[1]}
        for s in cfg.schemes:
            row[s] = q.relative_error(w, q.fake_quantize(w, s))
        per_matrix.append(row)
    rows = []
    n_weights = sum(r["rows"] * r["cols"] for r in per_matrix)
    for s in cfg.schemes:
        errs = [r[s] for r in per_matrix]
        worst = max(range(len(errs)), key=errs.__getitem__)
        bits = sum(q.bits_per_weight(s, (r["rows"], r["cols"])) * r["rows"] * r["cols"] for r in per_matrix)
        rows.append(
            {
                "scheme": s,
                "label": q.SCHEMES[s].label,
                "bits_per_weight": bits / n_weights,
                "mean_rel_error": sum(errs) / len(errs),
                "worst_rel_error": errs[worst],
                "worst_matrix": per_matrix[worst]["matrix"],
            }
        )
    table = Table(
        name="errors",
        title=f"Relative error ||W − Ŵ|| / ||W|| over all {len(per_matrix)} projection matrices",
        columns=(
            Column(name="scheme", label="key"),
            Column(name="label", label="scheme"),
            Column(name="bits_per_weight", unit="bits", kind="numeric", label="bits per weight"),
            Column(name="mean_rel_error", kind="numeric", label="mean error"),
            Column(name="worst_rel_error", kind="numeric", label="worst error"),
            Column(name="worst_matrix", label="worst matrix", kind="numeric"),
        ),
        rows=rows,
    )
    matrix = Table(
        name="matrix_errors",
        title="Relative error of every projection matrix under every scheme",
        columns=(
            Column(name="matrix", label="matrix"),
            Column(name="kind", label="kind"),
            Column(name="rows", unit="", label="rows"),
            Column(name="cols", unit="", label="columns"),
            *(Column(name=s, kind="numeric", label=q.SCHEMES[s].label) for s in cfg.schemes),
        ),
        rows=per_matrix,
    )
    by = {r["scheme"]: r for r in rows}
    values = []
    for s, r in by.items():
        values.append(Value(name=f"mean_{s}", value=r["mean_rel_error"], kind="numeric"))
        values.append(Value(name=f"worst_{s}", value=r["worst_rel_error"], kind="numeric"))
    pairs = (("int4_tensor", "int4_row"), ("int4_row", "int4_g128"), ("int4_g128", "nf4_b64"), ("int4_g64", "nf4_b64"))
    for a, b in pairs:
        if a in by and b in by:
            values.append(
                Value(
                    name=f"ratio_{a}_over_{b}",
                    value=by[a]["mean_rel_error"] / by[b]["mean_rel_error"],
                    unit="x",
                    kind="numeric",
                    description=f"mean error of {a} divided by that of {b}",
                )
            )
    return table, matrix, values


def _outlier_matrix(cfg: Config, layers) -> tuple[Table, Table, Table, list[Value]]:
    def heaviness(lin) -> float:
        w = lin.weight.detach().float()
        return float(w.abs().max() / w.std())

    name, lin = max(layers, key=lambda nl: heaviness(nl[1]))
    w = lin.weight.detach().float()
    mean, std = float(w.mean()), float(w.std())
    absmax = float(w.abs().max())
    beyond = int(((w - mean).abs() > OUTLIER_SIGMAS * std).sum())
    ordinary = (w - mean).abs() <= ORDINARY_SIGMAS * std
    stats = Table(
        name="outlier_matrix",
        title="The most outlier-heavy projection matrix (largest max|w| / std)",
        columns=(
            Column(name="matrix", label="matrix", kind="numeric"),
            Column(name="rows", label="rows"),
            Column(name="cols", label="columns"),
            Column(name="mean_abs", kind="numeric", label="mean |w|"),
            Column(name="std", kind="numeric", label="std"),
            Column(name="max_abs", kind="numeric", label="max |w|"),
            Column(name="max_over_std", unit="x", kind="numeric", label="max / std"),
            Column(name="beyond_6_sigma", unit="weights", kind="numeric", label="beyond 6σ"),
            Column(name="beyond_6_sigma_share", unit="fraction", kind="numeric", label="share beyond 6σ"),
        ),
        rows=[
            {
                "matrix": f"{name}.weight",
                "rows": w.shape[0],
                "cols": w.shape[1],
                "mean_abs": float(w.abs().mean()),
                "std": std,
                "max_abs": absmax,
                "max_over_std": absmax / std,
                "beyond_6_sigma": beyond,
                "beyond_6_sigma_share": beyond / w.numel(),
            }
        ],
    )
    level_rows, code_rows = [], []
    for s in ("int4_tensor", "int4_row", "int4_g128", "int4_g64", "nf4_b64"):
        qt = q.quantize(w, s)
        codes = qt.codes.reshape(-1)[: w.numel()].view(w.shape)
        zero_code = 7 if q.SCHEMES[s].levels == "nf4" else 0
        ord_codes = codes[ordinary]
        level_rows.append(
            {
                "scheme": q.SCHEMES[s].label,
                "levels_available": 16 if q.SCHEMES[s].levels == "nf4" else 2 * q.SCHEMES[s].qmax + 1,
                "ordinary_levels_used": int(torch.unique(ord_codes).numel()),
                "ordinary_to_zero_share": float((ord_codes == zero_code).float().mean()),
                "rel_error": q.relative_error(w, q.dequantize(qt)),
            }
        )
        if s == "int4_tensor":
            scale = float(qt.scales.view(-1)[0])
            for c in range(-8, 8):
                code_rows.append(
                    {
                        "code": c,
                        "value": c * scale,
                        "all_weights": int((codes == c).sum()),
                        "ordinary_weights": int((ord_codes == c).sum()),
                    }
                )
    levels = Table(
        name="outlier_levels",
        title=f"Where that matrix's ordinary weights (within {ORDINARY_SIGMAS:g}σ) land, by scale granularity",
        columns=(
            Column(name="scheme", label="scheme"),
            Column(name="levels_available", unit="levels", label="levels available"),
            Column(name="ordinary_levels_used", unit="levels", kind="numeric", label="levels the ordinary weights use"),
            Column(name="ordinary_to_zero_share", unit="fraction", kind="numeric", label="ordinary weights set to 0"),
            Column(name="rel_error", kind="numeric", label="error on this matrix"),
        ),
        rows=level_rows,
    )
    codes_t = Table(
        name="outlier_codes",
        title="Int4 per-tensor: how many of that matrix's weights fall on each level",
        columns=(
            Column(name="code", label="code"),
            Column(name="value", kind="numeric", label="level value"),
            Column(name="all_weights", unit="weights", kind="numeric", label="all weights"),
            Column(name="ordinary_weights", unit="weights", kind="numeric", label="ordinary weights"),
        ),
        rows=code_rows,
    )
    values = [
        Value(name="outlier_matrix", value=f"{name}.weight", kind="numeric"),
        Value(name="outlier_tensor_scale", value=code_rows[0]["value"] / -8, kind="numeric"),
        Value(name="ordinary_sigmas", value=ORDINARY_SIGMAS),
        Value(name="ordinary_share", value=float(ordinary.float().mean()), unit="fraction", kind="numeric"),
    ]
    return stats, levels, codes_t, values


def _q4_1_requantize(w: torch.Tensor) -> torch.Tensor:
    """Q4_1's rule (ggml ``quantize_row_q4_1_ref``): per block of 32, step = (max - min)/15,
    code = round((w - min) / step), w_hat = min + code * step."""
    x = w.detach().float().reshape(-1, Q4_1_BLOCK)
    lo, hi = x.amin(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)
    step = (hi - lo) / (Q4_1_LEVELS - 1)
    safe = torch.where(step > 0, step, torch.ones_like(step))
    codes = torch.clamp(torch.round((x - lo) / safe), 0, Q4_1_LEVELS - 1)
    return (lo + codes * step).view(w.shape)


def _distributed_grid(ctx: Context, layers) -> tuple[Table, list[Value]]:
    groups: dict[str, list[torch.Tensor]] = {}
    for name, lin in layers:
        groups.setdefault(_kind(name), []).append(lin.weight.detach())
    emb = ctx.model.model.get_input_embeddings().weight.detach()
    groups["embed_tokens"] = [emb]
    rows = []
    for kind, mats in groups.items():
        blocks, small, most, err_num, err_q8, err_den = 0, 0, 0, 0.0, 0.0, 0.0
        for w in mats:
            x = w.float().reshape(-1, Q4_1_BLOCK)
            s = x.sort(dim=1).values
            distinct = 1 + (s[:, 1:] != s[:, :-1]).sum(dim=1)
            blocks += x.shape[0]
            small += int((distinct <= Q4_1_LEVELS).sum())
            most = max(most, int(distinct.max()))
            d = (w.double() - _q4_1_requantize(w).double()).pow(2).sum()
            err_num += float(d)
            err_q8 += float((w.double() - q.fake_quantize(w, Q8_0).double()).pow(2).sum())
            err_den += float(w.double().pow(2).sum())
        rows.append(
            {
                "matrices": kind,
                "blocks": blocks,
                "max_distinct_per_block": most,
                "blocks_within_16_share": small / blocks,
                "q4_1_requantize_error": math.sqrt(err_num / err_den),
                "q8_0_requantize_error": math.sqrt(err_q8 / err_den),
            }
        )
    on_grid = all(r["blocks_within_16_share"] == 1.0 for r in rows if r["matrices"] != "embed_tokens")
    table = Table(
        name="distributed_grid",
        title=f"Were the weights already quantized? Distinct values per block of {Q4_1_BLOCK} consecutive weights",
        columns=(
            Column(name="matrices", label="matrices"),
            Column(name="blocks", unit="blocks", label="blocks of 32"),
            Column(name="max_distinct_per_block", unit="values", label="most distinct values in a block"),
            Column(name="blocks_within_16_share", unit="fraction", kind="numeric", label="blocks with ≤ 16 values"),
            Column(name="q4_1_requantize_error", kind="numeric", label="error of re-quantizing as Q4_1"),
            Column(name="q8_0_requantize_error", kind="numeric", label="error of re-quantizing as Q8_0"),
        ),
        rows=rows,
    )
    values = [
        Value(
            name="already_on_q4_1_grid",
            value=on_grid,
            description="every block of 32 projection weights holds at most 16 distinct values",
        ),
        Value(
            name="q4_1_requantize_error_max",
            value=max(r["q4_1_requantize_error"] for r in rows if r["matrices"] != "embed_tokens"),
            kind="numeric",
        ),
    ]
    return table, values


def run(cfg: Config, ctx: Context) -> Result:
    layers = q.projection_layers(ctx.model.model)
    if cfg.max_matrices is not None:
        layers = layers[: cfg.max_matrices]
    sizes, v1 = _sizes(cfg, ctx, layers)
    ctx.log(f"  {len(layers)} projection matrices x {len(cfg.schemes)} schemes")
    errors, matrix, v2 = _errors(cfg, ctx, layers)
    stats, levels, codes, v3 = _outlier_matrix(cfg, layers)
    ctx.log("  checking the weights for a grid they were distributed on")
    grid, v4 = _distributed_grid(ctx, layers)
    return Result(tables=[sizes, errors, matrix, stats, levels, codes, grid], values=v1 + v2 + v3 + v4)
