"""§4's steps set against the run's roofline (``measure/lab/roofline.py``), and the one
comparison the roofline alone cannot settle, profiled.

* Every timed step (each batch's eager and compiled decode step, each prefill) is
  predicted from what it does, counted while it runs (``measure/lab/step_counts.py``):
  the weights' and the caches' bytes over the run's bandwidth, its FLOPs over the
  compute ceiling of a multiply of as many rows (B requests decoding, P prompt tokens),
  its operators times the cost of one. The compiled step does the eager step's
  arithmetic and reads its weights and its cache once (a static cache is written in
  place, not copied); compilation fuses its operators, whose count is not seen from
  Python, so its fixed term is left at zero and its ratio holds what compiling left.
* ``breakdown``: the eager step at B = 1 and at ``profiled_batch``, and a prefill of
  ``profiled_batch`` tokens (the same weight arithmetic as that batch's step: as many
  rows through every matrix), profiled side by side in one interleaved sweep
  (``measure/lab/profiled.py``), so that the difference between the step and the
  prefill is split by group of operators, round by round.
"""

from __future__ import annotations

import statistics
from functools import partial

import torch

from measure.lab.context import Context
from measure.lab.generation import crop_cache, decode_step, prefill, random_cache
from measure.lab.medians import Estimate, median_interval, ratio_cells
from measure.lab.prediction import prediction_cells, prediction_columns
from measure.lab.profiled import GROUPS, group_estimates, profiled
from measure.lab.roofline import Prediction, Roofline
from measure.lab.step_counts import StepCounts
from sitedata.schema import Column

# the words the breakdown's passes are shown with
DECODE, PREFILL = "decode step", "prefill"
# where a decode step at a larger batch spends more than a prefill of as many tokens:
# each request's attention, and the appends that copy each request's cache
PER_REQUEST = ("attention", "concat")


def predict(
    roofline: Roofline, counts: StepCounts, *, rows: int, dtype: str, fused_bytes: int | None = None
) -> Prediction:
    """The roofline's prediction of a step (see the module's docstring); ``fused_bytes``:
    the compiled step, which moves that many bytes (its weights and its cache, once) and
    whose operators are not counted."""
    if fused_bytes is not None:
        return roofline.predict(moved_bytes=fused_bytes, flops=counts.flops, rows=rows, dtype=dtype)
    return roofline.predict(moved_bytes=counts.moved_bytes, flops=counts.flops, rows=rows, dtype=dtype, ops=counts.ops)


def arithmetic_cells(counts: StepCounts, est: Estimate, roofline: Roofline, *, rows: int, dtype: str) -> dict:
    """The FLOP/s a step reached and the ceiling of a multiply of as many rows."""
    return {
        "achieved_gflop_s": counts.flops / est.median_s / 1e9,
        "ceiling_gflop_s": roofline.ceiling(dtype, rows).value / 1e9,
    }


def step_cells(stem: str, est: Estimate, counts: StepCounts, roofline: Roofline, *, rows: int, dtype: str, **kw):
    """A row's prediction cells for the step ``stem`` (``prediction_columns(stem)``)."""
    return prediction_cells(stem, est, predict(roofline, counts, rows=rows, dtype=dtype, **kw))


def breakdown(cfg, ctx: Context, prefill_est: Estimate, decode_est: Estimate) -> tuple[list[dict], dict, dict]:
    """The ``breakdown`` rows, their values and the sweep's notes (see the module's
    docstring); ``prefill_est`` and ``decode_est`` are the plain (unprofiled) prefill of
    ``profiled_batch`` tokens and step of that batch, which the values set side by side."""
    model, b = ctx.model.model, cfg.profiled_batch
    vocab = ctx.model.config.vocab_size
    g = torch.Generator().manual_seed(b)
    ids = torch.randint(0, vocab, (1, b), generator=g).to(ctx.device)
    caches = {n: random_cache(model, batch=n, tokens=cfg.cache_tokens) for n in (1, b)}
    tokens = {n: torch.randint(0, vocab, (n, 1), generator=g).to(ctx.device) for n in (1, b)}
    points = {(DECODE, n): partial(decode_step, model, tokens[n], caches[n]) for n in (1, b)}
    points[(PREFILL, b)] = partial(prefill, model, ids)

    def before(key) -> None:
        if key[0] == DECODE:
            crop_cache(caches[key[1]], cfg.cache_tokens)

    ctx.log(f"  profiling the decode step at B = 1 and {b}, and a prefill of {b} tokens, interleaved")
    sweep, records = profiled(
        points, device=ctx.device, seed=cfg.profile_seed, budget_s=cfg.profile_budget_s, target=cfg.target,
        before=before,
    )  # fmt: skip
    groups = {key: group_estimates(records[key], cfg.target) for key in points}
    rows = []
    for (kind, n), parts in groups.items():
        step = parts["step"][0]
        for group, (est, calls) in parts.items():
            rows.append(
                {
                    "pass": kind,
                    "batch": 1 if kind == PREFILL else n,
                    "tokens": n if kind == PREFILL else 1,
                    "part": GROUPS[group],
                    "calls": calls,
                    **est.columns("self_ms"),
                    "share": est.median_s / step.median_s,
                }
            )
    values = {
        "profiled_batch": b,
        **ratio_cells("decode_over_prefill", decode_est, prefill_est),
        **_paired("matmul_decode_over_prefill", records[(DECODE, b)], records[(PREFILL, b)], ("matmul",)),
        **_gap_share("gap_per_request_share", records[(DECODE, b)], records[(PREFILL, b)]),
    }
    return rows, values, {"breakdown_sweep": sweep.describe()}


def _self_s(record, groups: tuple[str, ...]) -> float:
    return sum(record[1][g] for g in groups)


def _paired(name: str, num: list, den: list, groups: tuple[str, ...]) -> dict:
    """The median of the per-round ratios of two points' self time in ``groups`` (the
    same round of one interleaved sweep, moments apart), with its 95 % interval."""
    ratios = [_self_s(a, groups) / _self_s(b, groups) for a, b in zip(num, den, strict=False)]
    return _with_interval(name, ratios)


def _gap_share(name: str, decode: list, prefill_: list) -> dict:
    """Round by round, the share of the profiled step's excess over the profiled prefill
    that lies in the groups of ``PER_REQUEST``: how much of what a decode step of B
    requests costs beyond a prefill of B tokens is each request's attention and appends
    (over the rounds in which the step took longer than the prefill: elsewhere there is
    no excess to share)."""
    shares = [
        (_self_s(d, PER_REQUEST) - _self_s(p, PER_REQUEST)) / (d[0] - p[0])
        for d, p in zip(decode, prefill_, strict=False)
        if d[0] > p[0]
    ]
    return _with_interval(name, shares)


def _with_interval(name: str, xs: list[float]) -> dict:
    """``name`` (the median of ``xs``), ``name_low`` and ``name_high`` (its 95 % interval;
    empty where fewer than six give none)."""
    if not xs:
        return dict.fromkeys((name, f"{name}_low", f"{name}_high"))
    low, high = median_interval(xs)
    nan = low != low or high != high  # noqa: PLR0124 (NaN: too few to bound the median)
    return {name: statistics.median(xs), f"{name}_low": None if nan else low, f"{name}_high": None if nan else high}


def predicted_sweep(rows: list[dict], results: dict, roofline: Roofline, *, dtype: str, fused_bytes) -> dict:
    """Adds to each measured row of the sweep its counted cache bytes, the FLOP/s it
    reached, and the eager and the compiled step's predictions (``fused_bytes(b)``: the
    bytes the compiled step moves at batch ``b``); the values the page reads from them."""
    bound_from = None
    for row in rows:
        r, b = results[row["batch"]], row["batch"]
        if isinstance(r, str):
            row |= dict.fromkeys(_PREDICTED_COLUMNS)
            continue
        eager = predict(roofline, r.counts, rows=b, dtype=dtype)
        row["cache_bytes"] = r.counts.cache_bytes
        row |= arithmetic_cells(r.counts, r.eager, roofline, rows=b, dtype=dtype)
        row |= prediction_cells("step", r.eager, eager)
        if r.compiled is None:
            row |= {c: None for c in _PREDICTED_COLUMNS if c.startswith("compiled_step_")}
        else:
            fused = predict(roofline, r.counts, rows=b, dtype=dtype, fused_bytes=fused_bytes(b))
            row |= prediction_cells("compiled_step", r.compiled, fused)
        if bound_from is None and eager.bound == "compute":
            bound_from = b
    first = next(r for r in results.values() if not isinstance(r, str))
    return {
        "ops_per_step": first.counts.ops,
        "cache_bytes_per_request": max(r.counts.cache_bytes / b for b, r in results.items() if not isinstance(r, str)),
        "compute_bound_from": bound_from,
    }


def cost_rows(costs: dict, roofline: Roofline, *, dtype: str) -> list[dict]:
    """Rows of ``step_costs``: each occupancy's step, against the step with one request
    fewer (paired round by round), and its prediction."""
    rows = []
    for k, r in costs.items():
        before = ratio_cells("vs_previous", r.eager, costs[k - 1].eager) if k - 1 in costs else {}
        rows.append(
            {
                "occupancy": k,
                **r.eager.columns("step_ms"),
                **(before or dict.fromkeys(("vs_previous", "vs_previous_low", "vs_previous_high"))),
                **step_cells("step", r.eager, r.counts, roofline, rows=k, dtype=dtype),
            }
        )
    return rows


_PREDICTED_COLUMNS = tuple(
    c.name
    for c in (
        Column("cache_bytes"), Column("achieved_gflop_s"), Column("ceiling_gflop_s"),
        *prediction_columns("step"), *prediction_columns("compiled_step"),
    )
)  # fmt: skip
