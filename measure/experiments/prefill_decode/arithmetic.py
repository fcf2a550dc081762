"""§2's counted arithmetic: the multiply-adds of a prefill and of a decode step from the
model's shape, and their FLOPs per byte read (arithmetic intensity), set beside the
machine's ridge point (its measured matmul FLOP/s over its bandwidth) on the page.

A FLOP here is half a multiply-add (the usual convention: one MAC is two FLOPs). Every
``Linear`` layer runs once per token (the output head included, which a prefill applies
at every position); embedding lookups, norms, rotary and softmax are not counted: they
are a few operations per activation, not per weight.
"""

from __future__ import annotations

import torch

from measure.lab.formulas import attention_macs


def linear_macs(model) -> int:
    """Multiply-adds of every ``Linear`` layer for one token: the product of its two
    dimensions (a tied output head is a ``Linear`` too, and counted)."""
    return sum(m.in_features * m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear))


def linear_weight_bytes(model) -> int:
    """Bytes of the ``Linear`` layers' weights and biases, each storage once (a tied head
    shares the embedding's): what the step's matrix multiplies must read."""
    seen: dict[int, int] = {}
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            for p in (m.weight, m.bias):
                if p is not None:
                    seen[p.untyped_storage().data_ptr()] = p.untyped_storage().nbytes()
    return sum(seen.values())


def _attention(shape: dict, queries: int, keys: int) -> int:
    return attention_macs(
        layers=shape["layers"], heads=shape["heads"], head_dim=shape["head_dim"], queries=queries, keys=keys
    )


def decode_attention_macs(shape: dict, context: int) -> int:
    """q.K and p.V of one new token against ``context`` cached positions and itself."""
    return _attention(shape, 1, context + 1)


def decode_flops(weight_macs: int, shape: dict, context: int) -> int:
    return 2 * (weight_macs + decode_attention_macs(shape, context))


def prefill_flops(weight_macs: int, shape: dict, prompt: int) -> int:
    """Every weight once per prompt token, and the P x P scores in full (a causal kernel
    may skip the masked half; the count is what the unfused attention computes)."""
    return 2 * (weight_macs * prompt + _attention(shape, prompt, prompt))
