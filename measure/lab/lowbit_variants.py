"""A model whose projection matrices are computed by the low-bit kernels PyTorch ships
(``lowbit_kernels``), per variant: what the weight-quantization page times, and what the
speculative-decoding page drafts with.

Each variant is a copy of the model whose 7 projection matrices per layer are replaced
by a layer of ``lowbit_kernels`` and whose other weights (the tied embedding and output
head, the norms) are cast to the variant's activation dtype, not quantized: weight-only
schemes usually leave them so, and the weight-quantization page's size table counts
them the same way. Every replaced layer is checked against the weight it should be
computing with (a seeded Gaussian input, the worst relative error over layers).

The bytes a step reads are the weights as stored: the projections' codes and scales
plus every other parameter once (the output head reads the whole tied embedding matrix;
the embedding lookup's single row is inside it).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from measure.lab import lowbit_kernels as lk
from measure.lab.bandwidth import weight_bytes
from measure.lab.quantizers import projection_layers

# Worst relative error a correct kernel may show against its dequantized reference.
# fp32 activations: only the order of fp32 additions differs (~1e-7 seen on rows of up
# to 1,536 weights). bf16 activations: the kernels round their output to bf16, 2^-9
# relative per element. Dynamic int8 also rounds its input to 8 bits with one scale per
# call (7 bits on fbgemm/x86, which reserve one against overflow), ~1e-2 on Gaussian inputs.
TOL_FP32 = 1e-5
TOL_BF16 = 1e-2
TOL_DYNAMIC = 5e-2


@dataclass(frozen=True, kw_only=True)
class Variant:
    name: str
    label: str
    kind: str  # a lowbit_kernels kind for the projections
    dtype: torch.dtype  # activations, scales and every weight not quantized
    tolerance: float
    group: int | None = None

    @property
    def activations(self) -> str:
        return str(self.dtype).removeprefix("torch.")


VARIANTS = {
    v.name: v
    for v in (
        Variant(name="fp32", label="fp32", kind="dense", dtype=torch.float32, tolerance=TOL_FP32),
        Variant(name="bf16", label="bf16", kind="dense", dtype=torch.bfloat16, tolerance=TOL_BF16),
        Variant(
            name="int8_fp32", label="int8 weight-only", kind="int8_weight_only", dtype=torch.float32, tolerance=TOL_FP32
        ),
        Variant(
            name="int8_bf16",
            label="int8 weight-only",
            kind="int8_weight_only",
            dtype=torch.bfloat16,
            tolerance=TOL_BF16,
        ),
        *(
            Variant(
                name=f"int4_g{g}_bf16",
                label=f"int4 weight-only, group {g}",
                kind="int4_weight_only",
                dtype=torch.bfloat16,
                tolerance=TOL_BF16,
                group=g,
            )
            for g in (32, 64, 128)
        ),
        Variant(
            name="dynamic_int8",
            label="int8 weights × int8 activations",
            kind="dynamic_int8",
            dtype=torch.float32,
            tolerance=TOL_DYNAMIC,
        ),
    )
}
REFERENCE = "fp32"  # the variant every speed is compared with


def _set_module(model: torch.nn.Module, name: str, module: torch.nn.Module) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent), child, module)


@torch.no_grad()
def variant_model(model: torch.nn.Module, v: Variant, *, seed: int = 0) -> tuple[torch.nn.Module, dict]:
    """A copy of ``model`` in ``v``'s form, and what the step will read and how far its
    layers are from their references. ``model`` is not touched."""
    originals = projection_layers(model)
    device = next(model.parameters()).device
    # Copy everything but the projections, which the copy gets as empty slots: their
    # weights would be copied only to be replaced.
    out = copy.deepcopy(model, memo={id(lin): torch.nn.Identity() for _, lin in originals}).to(v.dtype)
    other_bytes = weight_bytes(out)
    g = torch.Generator(device=device).manual_seed(seed)
    proj_bytes, weights, worst = 0, 0, 0.0
    for name, lin in originals:
        layer, reference = lk.build(v.kind, lin, dtype=v.dtype, group=v.group)
        x = torch.randn(1, lin.in_features, generator=g, device=device).to(v.dtype)
        worst = max(worst, lk.relative_error(layer, reference, x))
        _set_module(out, name, layer)
        proj_bytes += layer.storage_bytes()
        weights += lin.weight.numel()
    facts = {
        "kernel": type(layer).kernel if originals else None,
        "bits_per_weight": 8 * proj_bytes / weights,
        "weight_bytes": other_bytes + proj_bytes,
        "max_rel_error": worst,
    }
    return out, facts
