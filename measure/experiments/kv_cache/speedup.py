"""§1's speedup: the two generations timed against each other, recomputing every step
and with the cache, the two interleaved in one sweep (``sampling.interleaved``), one
whole generation of ``timed_tokens`` per sample; the speedup is their ratio paired round
by round, with its interval (``medians.ratio``).

The token streams shown (``new_tokens`` long) come from the timed calls when the timed
generation is that long, and otherwise from ``streams``, one untimed generation each way
(a run whose recompute takes too long to repeat at ``new_tokens`` times a shorter one)."""

from __future__ import annotations

from functools import partial

import torch

from measure.lab.context import Context
from measure.lab.generation import greedy_cached, greedy_recompute
from measure.lab.medians import Estimate, ratio_cells
from measure.lab.sampling import interleaved

METHODS = {"recompute": greedy_recompute, "cached": greedy_cached}


def streams(model, ids: torch.Tensor, new_tokens: int) -> dict[str, list[int]]:
    """Each method's token ids, ``new_tokens`` of them, from one untimed generation."""
    return {name: fn(model, ids, new_tokens)[0].tolist() for name, fn in METHODS.items()}


def generation_sweep(cfg, ctx: Context, ids: torch.Tensor) -> tuple[dict, dict[str, list[int]], dict]:
    """The sweep's estimates by method, the token ids of the timed generations (the last
    call's of each method: greedy decoding repeats itself), and the sweep's notes."""
    model = ctx.model.model
    outputs: dict[str, list[int]] = {}

    def generate(name: str) -> None:
        outputs[name] = METHODS[name](model, ids, cfg.timed_tokens)[0].tolist()

    ctx.log(
        f"  generating {cfg.timed_tokens} tokens by recomputing and with the cache, interleaved "
        f"(budget {cfg.generation_budget_s:.0f} s)"
    )
    sweep = interleaved(
        {name: partial(generate, name) for name in METHODS},
        device=ctx.device,
        seed=cfg.generation_seed,
        budget_s=cfg.generation_budget_s,
        target=cfg.target,
    )
    return sweep.points, outputs, {"generation_sweep": sweep.describe()}


def identical_rows(cfg, points: dict[str, Estimate], same: bool) -> tuple[list[dict], dict]:
    """The ``identical_output`` rows and the speedup's values."""
    base = points["recompute"]
    rows, values = [], {}
    for name, est in points.items():
        speedup = (
            dict.fromkeys(("speedup", "speedup_low", "speedup_high"), 1.0)
            if est is base
            else ratio_cells("speedup", base, est)
        )
        rows.append(
            {
                "method": name,
                "new_tokens": cfg.timed_tokens,
                **est.columns("total_ms"),
                **{
                    k: v
                    for k, v in est.scaled(1 / cfg.timed_tokens).columns("ms_per_token").items()
                    if not k.endswith("_samples")
                },
                **speedup,
                "tokens_identical": same if name == "cached" else True,
            }
        )
        if name == "cached":
            values = dict(speedup)
    values |= {
        "timed_tokens": cfg.timed_tokens,
        "recompute_samples_ms": points["recompute"].samples_ms(),
        "cached_samples_ms": points["cached"].samples_ms(),
    }
    return rows, values
