"""The time to a prompt's first token with and without a cached shared prefix: one sweep
of interleaved rounds over every prefix length, both ways."""

from __future__ import annotations

import torch

from measure.lab.generation import crop_cache, decode_step, prefill
from measure.lab.medians import ratio_cells
from measure.lab.sampling import Sweep, interleaved


def prefix_sweep(cfg, ctx) -> tuple[Sweep, dict[int, bool]]:
    """Each prefix length P, both ways: ``("whole", P)`` prefills the prefix and the
    question in one pass; ``("cached", P)`` reads the question alone against the
    prefix's cache, cut back to the prefix before every call (the call grows it). And
    whether the two ways give the same first token, at each P."""
    model, q = ctx.model.model, cfg.question_tokens
    prompts = {p: ctx.prompt_ids(p + q) for p in cfg.prefix_tokens}
    caches = {p: prefill(model, prompts[p][:, :p])[1] for p in cfg.prefix_tokens}
    same = {}
    for p, ids in prompts.items():
        whole_token, _ = prefill(model, ids)
        crop_cache(caches[p], p)
        cached_token, _ = decode_step(model, ids[:, p:], caches[p])
        same[p] = bool(torch.equal(whole_token, cached_token))
    points = {}
    for p, ids in prompts.items():
        points["whole", p] = lambda ids=ids: prefill(model, ids)
        points["cached", p] = lambda ids=ids, p=p: decode_step(model, ids[:, p:], caches[p])
    ctx.log(
        f"  first token after a prefix of {', '.join(map(str, cfg.prefix_tokens))} tokens and {q} of its own, "
        f"whole and cached, interleaved (budget {cfg.prefix_budget_s:.0f} s)"
    )

    def before(key) -> None:
        way, p = key
        if way == "cached":
            crop_cache(caches[p], p)

    sweep = interleaved(
        points, device=ctx.device, seed=cfg.seed, budget_s=cfg.prefix_budget_s, target=cfg.target, before=before
    )
    return sweep, same


def first_token_rows(cfg, sweep: Sweep, same: dict[int, bool]) -> list[dict]:
    rows = []
    for p in cfg.prefix_tokens:
        whole, cached = sweep.points["whole", p], sweep.points["cached", p]
        rows.append(
            {
                "prefix_tokens": p,
                "prompt_tokens": p + cfg.question_tokens,
                **whole.columns("whole_ms"),
                **cached.columns("cached_ms"),
                **ratio_cells("prefix_speedup", whole, cached),
                "same_first_token": same[p],
            }
        )
    return rows
