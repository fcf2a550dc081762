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
  (``lowbit_decode`` over ``lowbit_kernels``: int8 and int4 weight-only, dynamic int8),
  against the fp32 and bf16 steps, every variant's step interleaved in one sweep
  (``measure/lab/sampling.py``: a median with its 95 % interval and sample count): bits
  per weight, weight bytes read per step, step time, speed against fp32, and the floor
  (weight bytes over the run's one bandwidth, ``ctx.calibration``) with the fraction of
  it reached (floor / step); the speed-up paired round by
  round, the fraction with the range its intervals give. Each kernel
  is checked against its dequantized weight first; a variant this machine cannot run is
  a row that says why.

Valid on random weights too (the error of a scheme on Gaussian matrices is a fact about
the scheme; the grid check then correctly finds no grid), so it does not refuse them.

The package: ``tables`` declares what is written; ``outliers``, ``grid`` and
``lowbit_decode`` build their tables; the rest is here.

Writes ``site_data/weight_quantization/``. Alone: ``python -m measure run --only weight_quantization``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure.experiments.weight_quantization.grid import grid_check
from measure.experiments.weight_quantization.lowbit_decode import REFERENCE, VARIANTS, prepare_variant
from measure.experiments.weight_quantization.outliers import outlier_matrix
from measure.experiments.weight_quantization.tables import FRACTION, RATIO_PAIRS, SPEEDUP, TABLES, VALUES
from measure.lab import quantizers as q
from measure.lab.context import Context
from measure.lab.medians import fraction_cells, ratio_cells
from measure.lab.sampling import interleaved
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

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        # The error tables are a few seconds of arithmetic: no reason to cut anything, and
        # they declare one column and the values one mean and worst per scheme, in every
        # profile. Only the timed decode steps' budget shrinks.
        if profile == "full":
            return cls()
        if profile == "cpu":
            return cls(kernel_budget_s=5.0)
        return cls(kernel_cache_tokens=8, kernel_budget_s=0.1)


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


def _described(row: dict | None) -> str | None:
    """A variant as a sentence names it: its label, and its activations' dtype where the
    label does not already say what the activations are (int8 weights × int8 activations
    take float32 in and quantize it themselves)."""
    if row is None:
        return None
    return row["label"] if "activations" in row["label"] else f"{row['label']}, {row['activations']} activations"


def _decode_kernels(cfg: Config, ctx: Context) -> tuple[list, dict, dict]:
    token = ctx.prompt_ids(1)
    rows, steps, resets = [], {}, {}
    for name in ctx.progress(cfg.kernel_variants, "building and checking each low-bit variant"):
        row, step, reset = prepare_variant(
            ctx.model.model, VARIANTS[name], token=token, cache_tokens=cfg.kernel_cache_tokens
        )
        rows.append(row)
        if step is not None:
            steps[name], resets[name] = step, reset
    notes = {}
    if steps:
        ctx.log(f"  the decode step of {len(steps)} variants, interleaved (budget {cfg.kernel_budget_s:.0f} s)")
        sweep = interleaved(
            steps,
            device=ctx.device,
            seed=cfg.kernel_seed,
            budget_s=cfg.kernel_budget_s,
            target=cfg.target,
            warmup=2,
            before=lambda name: resets[name](),
        )
        notes = {"kernel_sweep": sweep.describe()}
    points = sweep.points if steps else {}
    # A row that stopped early (not built, wrong, failed) has the columns it reached, the rest empty.
    columns = next(t for t in TABLES if t.name == "decode_kernels").column_names
    rows = [dict.fromkeys(columns) | r for r in rows]
    cal = ctx.calibration
    reference = points.get(REFERENCE)
    for r in rows:
        est = points.get(r["variant"])
        if est is None:
            continue
        floor = cal.floor_s(r["weight_bytes"])
        r |= est.columns("step_ms")
        r["floor_ms"] = floor[0] * 1e3
        r |= fraction_cells(FRACTION[0], floor, est)
        if reference is not None:
            r |= ratio_cells(SPEEDUP[0], reference, est)
    timed = [r for r in rows if r["step_ms"] is not None]
    fastest = min(timed, key=lambda r: r["step_ms"]) if timed else None
    lowbit = [r for r in timed if VARIANTS[r["variant"]].kind != "dense"]
    fastest_lowbit = min(lowbit, key=lambda r: r["step_ms"]) if lowbit else None
    closest = max(lowbit, key=lambda r: r["fraction_of_floor"]) if lowbit else None
    fp32 = next((r for r in rows if r["variant"] == REFERENCE), None)
    values = {
        "kernel_cache_tokens": cfg.kernel_cache_tokens,
        "kernel_bandwidth_gb_s": cal.bandwidth_bytes_per_s / 1e9,
        "kernel_bandwidth_low_gb_s": cal.bandwidth_low_bytes_per_s / 1e9,
        "kernel_bandwidth_high_gb_s": cal.bandwidth_high_bytes_per_s / 1e9,
        "kernel_fp32_step_ms": fp32["step_ms"] if fp32 else None,
        "kernel_fastest": _described(fastest),
        **_triple("kernel_fastest_speedup", fastest, SPEEDUP),
        "kernel_timed": len(timed),
        "kernel_not_run": len(rows) - len(timed),
        "kernel_wrong": sum(r["status"].startswith("wrong") for r in rows),
        **_triple("kernel_fp32_fraction_of_floor", fp32 if fp32 and fp32["step_ms"] is not None else None, FRACTION),
        "kernel_lowbit_fastest": _described(fastest_lowbit),
        "kernel_lowbit_fastest_variant": fastest_lowbit["variant"] if fastest_lowbit else None,
        **_triple("kernel_lowbit_fastest_speedup", fastest_lowbit, SPEEDUP),
        "kernel_lowbit_fastest_bytes_saving": (
            fp32["weight_bytes"] / fastest_lowbit["weight_bytes"]
            if fastest_lowbit and fp32 and fp32["weight_bytes"]
            else None
        ),
        "kernel_lowbit_closest": _described(closest),
        "kernel_lowbit_closest_variant": closest["variant"] if closest else None,
        **_triple("kernel_lowbit_best_fraction_of_floor", closest, FRACTION),
        "kernel_samples_ms": {name: est.samples_ms() for name, est in points.items()},
    }
    return rows, values, notes


def _triple(name: str, row: dict | None, columns: tuple[str, str, str]) -> dict:
    """A value with the two bounds of its interval, from a row's three columns."""
    cells = (row[c] for c in columns) if row else (None, None, None)
    return dict(zip((name, f"{name}_low", f"{name}_high"), cells, strict=True))


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
    kernels, v5, notes = _decode_kernels(cfg, ctx)
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
