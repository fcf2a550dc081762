"""§5's ``decode_kernels``: one decode step per low-bit variant (``lowbit_decode``), every
variant's step and its kernel's ceiling interleaved in one sweep, with the copy and the
operator probe in the same rounds (``measure/lab/roofline_in_rounds.py``), each step
counted, predicted by the roofline those rounds give and profiled (``decomposition``);
the rows and the values the page reads from them."""

from __future__ import annotations

from measure.experiments.weight_quantization.decomposition import (
    cap_values,
    ceiling_probe,
    counted,
    kernel_roofline,
    parts_cells,
    predicted_cells,
    profiled_matmuls,
)
from measure.experiments.weight_quantization.lowbit_decode import REFERENCE, VARIANTS, prepare_variant
from measure.experiments.weight_quantization.tables import FRACTION, SPEEDUP, TABLES
from measure.lab.context import Context
from measure.lab.machine_probes import MIN_SAMPLE_S
from measure.lab.medians import fraction_cells, ratio_cells
from measure.lab.roofline import Roofline
from measure.lab.roofline_in_rounds import RoundProbes, value_names
from measure.lab.sampling import interleaved

CEILING = "ceiling"  # the first part of a kernel probe's key in the sweep: ("ceiling", variant)


def _described(row: dict | None) -> str | None:
    """A variant as a sentence names it: its label, and its activations' dtype where the
    label does not already say what the activations are (int8 weights × int8 activations
    take float32 in and quantize it themselves)."""
    if row is None:
        return None
    return row["label"] if "activations" in row["label"] else f"{row['label']}, {row['activations']} activations"


def _timed(cfg, ctx: Context, prepared: dict) -> tuple[dict, dict, dict, Roofline, dict]:
    """Every ready variant's step, its kernel's ceiling probe, the copy and the operator
    probe in one interleaved sweep (the quick probes in blocks of calls); the steps'
    estimates, the kernel probes', the notes, the calibration's roofline with the memory
    and operator terms of these rounds, and those terms as values."""
    steps = {name: p.step for name, p in prepared.items()}
    probes, flops = {}, 0
    for name in steps:
        probes[(CEILING, name)], flops = ceiling_probe(ctx.model.model, VARIANTS[name])
    rounds = RoundProbes.of(ctx.model.model, ctx.device)
    ctx.log(
        f"  the decode step of {len(steps)} variants and their kernels, interleaved (budget {cfg.kernel_budget_s:g} s)"
    )
    sweep = interleaved(
        steps | probes | rounds.points,
        device=ctx.device,
        seed=cfg.kernel_seed,
        budget_s=cfg.kernel_budget_s,
        target=cfg.target,
        warmup=2,
        before=lambda key: prepared[key].reset() if key in prepared else None,
        min_sample_s=MIN_SAMPLE_S,
    )
    ceilings = {name: sweep.points[(CEILING, name)] for name in steps}
    return (
        {name: sweep.points[name] for name in steps},
        {"ceilings": ceilings, "flops": flops},
        sweep.describe(),
        rounds.roofline(sweep, ctx.calibration.roofline()),
        rounds.values("kernel_round", sweep),
    )


def decode_kernels(cfg, ctx: Context) -> tuple[list, dict, dict]:
    """The ``decode_kernels`` rows, their values and the sweeps' notes."""
    token = ctx.prompt_ids(1)
    rows, prepared = [], {}
    for name in ctx.progress(cfg.kernel_variants, "building and checking each low-bit variant"):
        p = prepare_variant(ctx.model.model, VARIANTS[name], token=token, cache_tokens=cfg.kernel_cache_tokens)
        rows.append(p.row)
        if p.step is not None:
            prepared[name] = p
    counts = {name: counted(p) for name, p in prepared.items()}
    points, probed, notes = ({}, {}, {})
    matmuls, in_rounds, v_rounds = {}, None, dict.fromkeys(value_names("kernel_round"))
    if prepared:
        points, probed, sweep_notes, in_rounds, v_rounds = _timed(cfg, ctx, prepared)
        ctx.log(f"  profiling the decode step of {len(prepared)} variants, interleaved")
        matmuls, profile_notes = profiled_matmuls(
            {n: p.step for n, p in prepared.items()},
            {n: p.reset for n, p in prepared.items()},
            device=ctx.device,
            seed=cfg.profile_seed,
            budget_s=cfg.profile_budget_s,
            target=cfg.target,
        )
        notes = {"kernel_sweep": sweep_notes, "profile_sweep": profile_notes}
    roofline = kernel_roofline(in_rounds, probed["ceilings"], probed["flops"]) if prepared else None
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
        r |= predicted_cells(r, est, counts[r["variant"]], roofline)
        r |= parts_cells(est, matmuls[r["variant"]])
    return rows, _values(cfg, cal, rows, points) | v_rounds, notes


def _values(cfg, cal, rows: list[dict], points: dict) -> dict:
    timed = [r for r in rows if r["step_ms"] is not None]
    fastest = min(timed, key=lambda r: r["step_ms"]) if timed else None
    lowbit = [r for r in timed if VARIANTS[r["variant"]].kind != "dense"]
    fastest_lowbit = min(lowbit, key=lambda r: r["step_ms"]) if lowbit else None
    closest = max(lowbit, key=lambda r: r["fraction_of_floor"]) if lowbit else None
    fp32 = next((r for r in rows if r["variant"] == REFERENCE), None)
    int8 = {name: points.get(name) for name in ("int8_fp32", "int8_bf16")}
    return {
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
        # the same int8 codes with fp32 activations against bf16 ones, paired round by round
        **(
            ratio_cells("kernel_int8_fp32_over_bf16", int8["int8_fp32"], int8["int8_bf16"])
            if all(int8.values())
            else dict.fromkeys(
                ("kernel_int8_fp32_over_bf16", "kernel_int8_fp32_over_bf16_low", "kernel_int8_fp32_over_bf16_high")
            )  # fmt: skip
        ),
        **cap_values(rows, REFERENCE),
        "kernel_samples_ms": {name: est.samples_ms() for name, est in points.items()},
    }


def _triple(name: str, row: dict | None, columns: tuple[str, str, str]) -> dict:
    """A value with the two bounds of its interval, from a row's three columns."""
    cells = (row[c] for c in columns) if row else (None, None, None)
    return dict(zip((name, f"{name}_low", f"{name}_high"), cells, strict=True))
