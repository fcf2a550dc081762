"""What a timed step does, counted: the bytes it moves, the FLOPs it computes on how many
rows of input, in which dtype, and the operators it dispatches. The run's roofline
(``measure/lab/roofline.py``) turns a ``Work`` into a predicted time; every experiment
counts its steps here, so that two pages never count one step two ways.

A FLOP is half a multiply-add (one MAC is two FLOPs). Every ``Linear`` layer runs once
per row of input (the output head included: a forward pass here computes the logits of
every position it is given); embedding lookups, norms, rotary and softmax are not
counted: they are a few operations per activation, not per weight.

Bytes are those the program moves as it is written, each counted once per pass over
them: the weights read once per forward pass (a one-row step cannot reuse a weight), the
logits written, the keys and values of every new position written, and the cache read as
the step's attention and its cache class pass over it (``DYNAMIC_CACHE_PASSES``,
``STATIC_CACHE_PASSES``). Activations between the layers are left out: a few kilobytes
per row against hundreds of megabytes of weights.
"""

from __future__ import annotations

from dataclasses import dataclass

from measure.lab.formulas import attention_macs, kv_bytes_per_token
from measure.lab.roofline import Prediction, Roofline

# Passes over the cached keys and values in one decode step. transformers' DynamicCache
# appends a position by concatenation (``torch.cat([keys, new])``, cache_utils.py), which
# reads the whole cache and writes it again, and attention then reads it: three passes.
# A static cache is written in place, one position, and only attention reads it: one.
DYNAMIC_CACHE_PASSES = 3
STATIC_CACHE_PASSES = 1


@dataclass(frozen=True)
class ModelCounts:
    """A model's numbers every step's count starts from."""

    weight_bytes: int  # every parameter's storage once (a tied head is the embedding's)
    weight_macs: int  # multiply-adds of every Linear layer for one row
    kv_bytes_per_token: int  # keys and values of one position, every layer
    logit_bytes: int  # one position's logits
    layers: int
    heads: int
    head_dim: int
    dtype: str  # "float32", "bfloat16", "float16"

    def attention_macs(self, queries: int, keys: int) -> int:
        return attention_macs(layers=self.layers, heads=self.heads, head_dim=self.head_dim, queries=queries, keys=keys)


@dataclass(frozen=True)
class Work:
    """One timed step, counted (see the module's docstring)."""

    moved_bytes: float
    flops: float
    rows: int  # rows of input each weight matrix multiplies: the compute ceiling's row count
    dtype: str
    ops: int = 0  # operators dispatched (0: not counted, e.g. a compiled step's)

    def predict(self, roofline: Roofline) -> Prediction:
        return roofline.predict(
            moved_bytes=self.moved_bytes, flops=self.flops, rows=self.rows, dtype=self.dtype, ops=self.ops
        )


def model_counts(model) -> ModelCounts:
    """The counts of a transformers model as loaded (its dtype, its shapes)."""
    import torch

    from measure.lab.bandwidth import weight_bytes
    from measure.lab.models import architecture_shape

    shape = architecture_shape(model.config)
    param = next(model.parameters())
    element = param.element_size()
    return ModelCounts(
        weight_bytes=weight_bytes(model),
        weight_macs=linear_macs(model),
        kv_bytes_per_token=kv_bytes_per_token(
            layers=shape["layers"], kv_heads=shape["kv_heads"], head_dim=shape["head_dim"], bytes_per_element=element
        ),
        logit_bytes=shape["vocab"] * element,
        layers=shape["layers"],
        heads=shape["heads"],
        head_dim=shape["head_dim"],
        dtype=str(param.dtype).removeprefix("torch.") if isinstance(param.dtype, torch.dtype) else str(param.dtype),
    )


def linear_macs(model) -> int:
    """Multiply-adds of every ``Linear`` layer for one token: the product of its two
    dimensions (a tied output head is a ``Linear`` too, and counted)."""
    import torch

    return sum(m.in_features * m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear))


def linear_weight_bytes(model) -> int:
    """Bytes of the ``Linear`` layers' weights and biases, each storage once (a tied head
    shares the embedding's): what the step's matrix multiplies must read."""
    import torch

    seen: dict[int, int] = {}
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            for p in (m.weight, m.bias):
                if p is not None:
                    seen[p.untyped_storage().data_ptr()] = p.untyped_storage().nbytes()
    return sum(seen.values())


def decode_work(
    m: ModelCounts,
    *,
    context: int,
    batch: int = 1,
    queries: int = 1,
    cache_passes: int = DYNAMIC_CACHE_PASSES,
    ops: int = 0,
) -> Work:
    """One decode step of ``batch`` requests, each against ``context`` cached positions
    with ``queries`` new positions (one; more where a target verifies drafted tokens):
    the weights read once, each request's cache passed over ``cache_passes`` times, its
    new positions' keys and values and logits written; every weight multiplied by
    ``batch x queries`` rows, and each query scored against the context and the new
    positions (all of them: the unfused count)."""
    per_request = cache_passes * context * m.kv_bytes_per_token + queries * (m.kv_bytes_per_token + m.logit_bytes)
    return Work(
        moved_bytes=m.weight_bytes + batch * per_request,
        flops=2 * batch * (queries * m.weight_macs + m.attention_macs(queries, context + queries)),
        rows=batch * queries,
        dtype=m.dtype,
        ops=ops,
    )


def prefill_work(m: ModelCounts, *, prompt: int, ops: int = 0, writes_cache: bool = True) -> Work:
    """One forward pass over ``prompt`` tokens (a prefill, or a step that recomputes the
    whole sequence): the weights read once, every position's logits written (and its keys
    and values, where it fills a cache); every weight multiplied by ``prompt`` rows and the
    prompt x prompt scores in full (a causal kernel may skip the masked half; the count is
    what unfused attention computes)."""
    written = prompt * (m.logit_bytes + (m.kv_bytes_per_token if writes_cache else 0))
    return Work(
        moved_bytes=m.weight_bytes + written,
        flops=2 * (m.weight_macs * prompt + m.attention_macs(prompt, prompt)),
        rows=prompt,
        dtype=m.dtype,
        ops=ops,
    )


def config_counts(cfg: dict, *, bytes_per_element: int, dtype: str) -> ModelCounts:
    """The counts of a model of the Llama and Qwen2 layout from its config.json alone (a
    model no run loads, such as the chapter's on a GPU): per layer the q, k, v and o
    projections and the gated MLP's three, and the output head (tied or not, a Linear);
    its bytes every parameter's (``model_config.parameter_count``) at ``bytes_per_element``."""
    from measure.lab.model_config import shape_from_config

    shape = shape_from_config(cfg)
    if shape.params is None:
        raise ValueError(f"no parameter count for this config: {'; '.join(shape.problems)}")
    hidden, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    per_layer = hidden * q + 2 * hidden * kv + q * hidden + 3 * hidden * inter
    return ModelCounts(
        weight_bytes=shape.params * bytes_per_element,
        weight_macs=shape.layers * per_layer + hidden * vocab,
        kv_bytes_per_token=kv_bytes_per_token(
            layers=shape.layers, kv_heads=shape.kv_heads, head_dim=shape.head_dim, bytes_per_element=bytes_per_element
        ),
        logit_bytes=vocab * bytes_per_element,
        layers=shape.layers,
        heads=shape.heads,
        head_dim=shape.head_dim,
        dtype=dtype,
    )
