"""A long prompt prefilled in one pass or in chunks, timed beside a running batch's
decode step, and what admitting it does to that batch (``measure/sim/chunked_prefill.py``
fed with the measured costs)."""

from __future__ import annotations

import torch

from measure.lab.generation import crop_cache, decode_step, prefill, random_cache
from measure.lab.medians import Estimate, ratio_cells
from measure.lab.sampling import Sweep, interleaved
from measure.sim.chunked_prefill import admit, chunks
from sitedata.schema import interval_names


def _chunked(model, ids: torch.Tensor, parts: list[tuple[int, int]]):
    """Every chunk in order, each against the cache the earlier ones wrote; the last
    chunk's next token."""
    token, cache = prefill(model, ids[:, : parts[0][1]])
    for offset, n in parts[1:]:
        token, cache = decode_step(model, ids[:, offset : offset + n], cache)
    return token, cache


def chunk_sweep(cfg, ctx) -> tuple[Sweep, bool]:
    """One sweep: ``"whole"`` (one pass over the prompt), ``"chunked"`` (every chunk in
    order), ``("chunk", offset)`` (one chunk against a cache of the chunks before it, cut
    back before every call) and ``"decode"`` (one step of the running batch at its
    context). And whether chunked and whole give the same first token."""
    model = ctx.model.model
    ids = ctx.prompt_ids(cfg.prompt_tokens)
    parts = chunks(cfg.prompt_tokens, cfg.chunk_tokens)
    caches = {o: prefill(model, ids[:, :o])[1] for o, _ in parts if o}
    running = random_cache(model, batch=cfg.running_batch, tokens=cfg.running_context)
    step_ids = ctx.prompt_ids(1, cfg.running_batch)
    same = bool(torch.equal(prefill(model, ids)[0], _chunked(model, ids, parts)[0]))
    points = {"whole": lambda: prefill(model, ids), "chunked": lambda: _chunked(model, ids, parts)}
    for o, n in parts:
        chunk = ids[:, o : o + n]
        points["chunk", o] = (
            (lambda c=chunk: prefill(model, c)) if not o else (lambda c=chunk, o=o: decode_step(model, c, caches[o]))
        )
    points["decode"] = lambda: decode_step(model, step_ids, running)
    ctx.log(
        f"  a prompt of {cfg.prompt_tokens} tokens whole and in chunks of {cfg.chunk_tokens}, beside a decode step of "
        f"{cfg.running_batch} requests, interleaved (budget {cfg.chunk_budget_s:.0f} s)"
    )

    def before(key) -> None:
        if key == "decode":
            crop_cache(running, cfg.running_context)
        elif isinstance(key, tuple) and key[1]:
            crop_cache(caches[key[1]], key[1])

    sweep = interleaved(
        points, device=ctx.device, seed=cfg.seed + 1, budget_s=cfg.chunk_budget_s, target=cfg.target, before=before
    )
    return sweep, same


def pass_rows(cfg, sweep: Sweep) -> list[dict]:
    return [
        {"chunk_offset": o, "chunk_tokens": n, **sweep.points["chunk", o].columns("pass_ms")}
        for o, n in chunks(cfg.prompt_tokens, cfg.chunk_tokens)
    ]


def _simulated(name: str, passes: list[Estimate], decode: Estimate, field: str) -> dict[str, float]:
    """``field`` of the admission (ms) at the medians, and at the low and the high bounds
    of every cost: the range the costs' intervals give."""
    low, high, _ = interval_names(name)
    return {
        key: getattr(admit([getattr(e, bound) for e in passes], getattr(decode, bound)), field)
        for key, bound in ((name, "median_ms"), (low, "low_ms"), (high, "high_ms"))
    }


def admission_rows(cfg, sweep: Sweep, same: bool) -> list[dict]:
    """The whole prompt and its chunks, each as admitted beside the running batch."""
    decode = sweep.points["decode"]
    rows = []
    for way, size in (("whole", None), ("chunked", cfg.chunk_tokens)):
        parts = chunks(cfg.prompt_tokens, size)
        passes = [sweep.points["whole"]] if size is None else [sweep.points["chunk", o] for o, _ in parts]
        rows.append(
            {
                "chunk_tokens": size or cfg.prompt_tokens,
                "passes": len(parts),
                **sweep.points[way].columns("prefill_ms"),
                **ratio_cells("prefill_ratio", sweep.points[way], sweep.points["whole"]),
                **_simulated("first_token_ms", passes, decode, "first_token_ms"),
                **_simulated("longest_gap_ms", passes, decode, "longest_gap_ms"),
                "tokens_meanwhile": admit([e.median_ms for e in passes], decode.median_ms).tokens_meanwhile,
                "same_first_token": True if size is None else same,
            }
        )
    return rows
