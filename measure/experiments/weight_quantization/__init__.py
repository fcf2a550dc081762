"""§5 Quantizing weights: what each scheme costs in bits and in error, matrix by matrix.

Measures, on the run's model:

* ``sizes``: the model's parameters at 4, 2, 1 and 0.5 bytes each, and as each scheme
  would store it (projection matrices quantized, everything else fp16).
* ``errors``: every projection matrix quantized with every scheme of
  ``measure.lab.quantizers.SCHEMES`` (the chapter's six plus int4 group-64, which has NF4's
  4.25 bits per weight): relative Frobenius error, mean over matrices and the worst one,
  named. ``matrix_errors`` holds every matrix.
* ``outlier_matrix`` / ``outlier_levels`` / ``outlier_codes``: the matrix with the
  largest max|w| / std: its statistics, and which int4 levels its ordinary weights
  (within 3 standard deviations) land on under each scale granularity (``outliers``).
* ``distributed_grid``: whether the weights were already quantized before this run saw
  them, read from the weights alone (``grid``): distinct values per block of 32
  consecutive weights (a GGUF Q4_1 block holds at most 16), and the error of
  re-quantizing with Q4_1's own rule, which is ~0 for Q4_1 weights.
* ``decode_kernels``: one decode step (one token, batch 1, a short random cache) with
  the projection matrices computed by the low-bit kernels this PyTorch ships
  (``lowbit_decode`` over measure/lab/lowbit_variants.py: int8 and int4 weight-only,
  dynamic int8), against the fp32 and bf16 steps, every variant's step interleaved in
  one sweep (``measure/lab/sampling.py``: a median with its 95 % interval and sample
  count): bits per weight, weight bytes read per step, step time, speed against fp32,
  and the floor (weight bytes over the run's one bandwidth, ``ctx.calibration``) with
  the fraction of it reached (floor / step); the speed-up paired round by round, the
  fraction with the range its intervals give. Each kernel is checked against its
  dequantized weight first; a variant this machine cannot run is a row that says why.
  Beside each step, its prediction by the run's roofline, with its kernel's own compute
  ceiling, and its matrix multiplies' share of it, profiled (``kernels`` over
  ``decomposition``): the rest of a step is what no weight format can shorten.

Valid on random weights too (the error of a scheme on Gaussian matrices is a fact about
the scheme; the grid check then correctly finds no grid), so it does not refuse them.

The package: ``tables`` declares what is written; ``outliers``, ``grid`` and
``kernels`` build their tables; the rest is here.

Writes ``site_data/weight_quantization/``. Alone: ``python -m measure run --only weight_quantization``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure.experiments.weight_quantization.grid import grid_check
from measure.experiments.weight_quantization.kernels import decode_kernels
from measure.experiments.weight_quantization.lowbit_decode import VARIANTS
from measure.experiments.weight_quantization.outliers import outlier_matrix
from measure.experiments.weight_quantization.tables import RATIO_PAIRS, TABLES
from measure.experiments.weight_quantization.values import VALUES
from measure.lab import quantizers as q
from measure.lab.context import Context
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run"]

TITLE = "Quantizing weights"


@dataclass(frozen=True, kw_only=True)
class Config:
    schemes: tuple[str, ...] = tuple(q.SCHEMES)
    max_matrices: int | None = None  # None: every projection matrix
    kernel_variants: tuple[str, ...] = tuple(VARIANTS)
    kernel_cache_tokens: int = 64  # a short context: the step reads mostly weights
    target: float = 0.03  # the relative half-width of every interval asked for
    kernel_seed: int = 50  # the order of the sweep's rounds
    kernel_budget_s: float = 10.0  # the sweep's time (warm-up included; six rounds always run)
    # every variant's step profiled, interleaved: about 0.3 s a round on two CPU cores
    # with the profiler's records, so its warm-up and six rounds take about 2 s
    profile_seed: int = 51
    profile_budget_s: float = 2.0

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        # The error tables are a few seconds of arithmetic: no reason to cut anything, and
        # they declare one column and the values one mean and worst per scheme, in every
        # profile. Only the timed decode steps' budget shrinks.
        if profile == "full":
            return cls()
        if profile == "cpu":
            return cls(kernel_budget_s=5.0)
        return cls(kernel_cache_tokens=8, kernel_budget_s=0.1, profile_budget_s=0.1)


def _kind(name: str) -> str:
    return name.rsplit(".", 1)[-1].removesuffix("_proj")


def _sizes(cfg: Config, ctx: Context, layers) -> tuple[list, dict]:
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
        from measure.lab.embedded import embedded_gguf_path

        size = embedded_gguf_path().stat().st_size
        rows.append({"storage": "the GGUF file as distributed", "bits_per_parameter": size * 8 / params, "bytes": size})
    values = {
        "parameters": params,
        "projection_parameters": proj,
        "projection_matrices": len(layers),
        "projection_share": proj / params,
    }
    return rows, values


def _errors(cfg: Config, ctx: Context, layers) -> tuple[list, list, dict]:
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
    by = {r["scheme"]: r for r in rows}
    values = {}
    for s, r in by.items():
        values[f"mean_{s}"] = r["mean_rel_error"]
        values[f"worst_{s}"] = r["worst_rel_error"]
    for a, b in RATIO_PAIRS:
        values[f"ratio_{a}_over_{b}"] = by[a]["mean_rel_error"] / by[b]["mean_rel_error"]
    return rows, per_matrix, values


def _distributed_grid(ctx: Context, layers) -> tuple[list, dict]:
    groups: dict[str, list[torch.Tensor]] = {}
    for name, lin in layers:
        groups.setdefault(_kind(name), []).append(lin.weight.detach())
    emb = ctx.model.model.get_input_embeddings().weight.detach()
    groups["embed_tokens"] = [emb]
    rows = [{"matrices": kind, **grid_check(mats)} for kind, mats in groups.items()]
    projections = [r for r in rows if r["matrices"] != "embed_tokens"]
    values = {
        "already_on_q4_1_grid": all(r["blocks_within_16_share"] == 1.0 for r in projections),
        "q4_1_requantize_error_max": max(r["q4_1_requantize_error"] for r in projections),
    }
    return rows, values


def run(cfg: Config, ctx: Context) -> Result:
    if ctx.calibration is None:
        raise ValueError("weight_quantization divides its floors by the run's calibration: run it through the runner")
    layers = q.projection_layers(ctx.model.model)
    if cfg.max_matrices is not None:
        layers = layers[: cfg.max_matrices]
    sizes, v1 = _sizes(cfg, ctx, layers)
    ctx.log(f"  {len(layers)} projection matrices x {len(cfg.schemes)} schemes")
    errors, matrix, v2 = _errors(cfg, ctx, layers)
    stats, levels, codes, v3 = outlier_matrix(layers)
    ctx.log("  checking the weights for a grid they were distributed on")
    grid, v4 = _distributed_grid(ctx, layers)
    kernels, v5, notes = decode_kernels(cfg, ctx)
    tables = {
        "sizes": sizes,
        "errors": errors,
        "matrix_errors": matrix,
        "outlier_matrix": stats,
        "outlier_levels": levels,
        "outlier_codes": codes,
        "distributed_grid": grid,
        "decode_kernels": kernels,
    }
    return Result(tables=tables, values={**v1, **v2, **v3, **v4, **v5}, notes=notes)
