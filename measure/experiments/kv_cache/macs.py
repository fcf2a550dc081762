"""§1's counted multiply-accumulates: the model's weight MACs counted by hooks on a
real forward pass, and the attention MACs that follow from the shapes."""

from __future__ import annotations

import torch

from measure.lab.context import Context
from measure.lab.formulas import generation_macs, step_macs


def count_weight_macs_per_token(model, ctx: Context, tokens: int = 8) -> int:
    """Count multiply-accumulates of every Linear layer in a real forward pass (hooks see
    the actual input shapes), per input token. Embedding lookups are not MACs."""
    total = 0

    def hook(module, inputs, _output):
        nonlocal total
        x = inputs[0]
        total += (x.numel() // x.shape[-1]) * module.in_features * module.out_features

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    try:
        with torch.inference_mode():
            model(input_ids=ctx.prompt_ids(tokens), use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return total // tokens


def mac_tables(
    ctx: Context, *, head_dim: int, totals: tuple[int, ...], step_contexts: tuple[int, ...]
) -> tuple[list, list, dict]:
    """The ``macs_total`` and ``macs_per_step`` rows, and their values."""
    shape = ctx.model.shape()
    w = count_weight_macs_per_token(ctx.model.model, ctx)
    dims = {"layers": shape["layers"], "heads": shape["heads"], "head_dim": shape["head_dim"]}
    head = {"layers": 1, "heads": 1, "head_dim": head_dim}
    rows = []
    for who, wmacs, dd in (("model", w, dims), ("one head", 0, head)):
        for t in totals:
            unc = generation_macs(weight_macs_per_token=wmacs, new_tokens=t, cached=False, **dd)
            cac = generation_macs(weight_macs_per_token=wmacs, new_tokens=t, cached=True, **dd)
            rows.append({"scope": who, "new_tokens": t, "recompute_macs": unc, "cached_macs": cac, "ratio": unc / cac})
    per_step = [
        {
            "context": n,
            "recompute_macs": step_macs(weight_macs_per_token=w, context=n, cached=False, **dims),
            "cached_macs": step_macs(weight_macs_per_token=w, context=n, cached=True, **dims),
        }
        for n in step_contexts
    ]
    values = {"weight_macs_per_token": w, "macs_ratio_largest": rows[len(totals) - 1]["ratio"]}
    return rows, per_step, values
