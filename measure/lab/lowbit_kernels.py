"""Linear layers computed by the low-bit kernels PyTorch ships, each built beside the
weight it should be computing with, so that its output is checked before its speed is
believed.

Each layer replaces an ``nn.Linear`` of a decoder layer and keeps only the stored form of
its weight (codes and scales), as a deployment would:

* ``Int8WeightOnly``: int8 codes, one scale per output row (symmetric absmax, qmax 127),
  computed by ``torch._weight_int8pack_mm`` in the activations' dtype.
* ``Int4WeightOnly``: 4-bit codes two to a byte, a scale and a zero per group of ``group``
  consecutive weights of a row (asymmetric min-max, 16 levels), packed by
  ``torch._convert_weight_to_int4pack_for_cpu`` and computed by
  ``torch._weight_int4pack_mm_for_cpu``. The kernel reconstructs ``(code − 8) · scale +
  zero`` (PyTorch's ``aten/src/ATen/native/cpu/int4mm_kernel.cpp``), so the zero stored is
  the group's minimum plus eight steps. The packed layout depends on the CPU's vector
  width (rows interleaved in blocks of 32 or 64), so the codes are never read back from
  it: the tests check the packing by passing the identity matrix through the kernel.
  These ops exist for CPUs only.
* ``DynamicInt8``: int8 weights (one scale per row) and int8 activations, quantized on
  every call with one scale for the whole input (``torch.ao.nn.quantized.dynamic.Linear``
  on the quantized engine PyTorch selects: fbgemm/x86 on x86 CPUs). Its output differs
  from the dequantized weight's by the activations' rounding as well.
* ``DenseLinear``: the unquantized layer, ``F.linear`` in the weight's dtype, for the
  fp32 and bf16 references.

``build(kind, linear, ...)`` returns the layer and its *reference*: the weight rebuilt in
float32 from exactly the codes and (rounded) scales that were stored, which the layer
does not keep. ``relative_error`` sets the layer's output against it. ``storage_bytes``
is what the layer's weight occupies as stored, the bytes a decode step reads for it,
computed from the shapes (the tests hold it equal to the buffers' own sizes).
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F

from measure.lab.quantizers import quantize

INT4_LEVELS = 15  # asymmetric: codes 0..15, the group's minimum on 0 and maximum on 15
INT4_OFFSET = 8  # the CPU int4 kernel subtracts 8 from every code before scaling
INT4_ROW_BLOCK = 16  # _convert_weight_to_int4pack_for_cpu refuses a row count not divisible by 16


def _flatten(x: torch.Tensor) -> torch.Tensor:
    # The kernels take a 2-D, contiguous input; a decode step hands (batch, 1, features).
    return x.reshape(-1, x.shape[-1]).contiguous()


def int8_storage_bytes(rows: int, cols: int, scale_bytes: int) -> int:
    return rows * cols + rows * scale_bytes  # a code per weight, a scale per row


def int4_storage_bytes(rows: int, cols: int, group: int, scale_bytes: int) -> int:
    return rows * cols // 2 + rows * (cols // group) * 2 * scale_bytes  # two codes a byte; scale and zero per group


def int8_row_codes(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric absmax per output row, the quality page's int8 per-row scheme
    (measure.lab.quantizers): int8 codes shaped like ``w`` and one float32 scale a row."""
    q = quantize(w, "int8_row")
    return q.codes.view(w.shape), q.scales.view(-1)


def int4_group_codes(
    w: torch.Tensor, group: int, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Asymmetric min-max per group of ``group`` weights of a row: int32 codes 0..15 in
    ``w``'s shape, and per group (rows, groups) the scale and the kernel's zero in ``dtype``.
    The scale and minimum are rounded to ``dtype`` before the codes are computed, so the
    codes are the nearest levels of the grid actually stored."""
    rows, cols = w.shape
    if cols % group:
        raise ValueError(f"a row of {cols} weights does not divide into groups of {group}")
    if rows % INT4_ROW_BLOCK:
        raise ValueError(f"the int4 packing needs a row count divisible by {INT4_ROW_BLOCK}, not {rows}")
    g = w.detach().float().reshape(rows, cols // group, group)
    low, high = g.amin(dim=-1), g.amax(dim=-1)
    scale = ((high - low) / INT4_LEVELS).clamp(min=1e-8).to(dtype).float()
    low = low.to(dtype).float()
    codes = torch.round((g - low[..., None]) / scale[..., None]).clamp(0, INT4_LEVELS).to(torch.int32)
    zero = (low + INT4_OFFSET * scale).to(dtype)
    return codes.reshape(rows, cols), scale.to(dtype), zero


class _LowBitLinear(torch.nn.Module):
    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        bias = linear.bias
        self.register_buffer("bias", None if bias is None else bias.detach().clone())

    def _finish(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*x.shape[:-1], self.out_features)


class Int8WeightOnly(_LowBitLinear):
    kernel = "torch._weight_int8pack_mm"

    def __init__(self, linear: torch.nn.Linear, codes: torch.Tensor, scales: torch.Tensor) -> None:
        super().__init__(linear)
        self.register_buffer("codes", codes)
        self.register_buffer("scales", scales)  # in the activations' dtype: the kernel requires it

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._finish(torch._weight_int8pack_mm(_flatten(x), self.codes, self.scales), x)

    def storage_bytes(self) -> int:
        return int8_storage_bytes(self.out_features, self.in_features, self.scales.element_size())


class Int4WeightOnly(_LowBitLinear):
    kernel = "torch._weight_int4pack_mm_for_cpu"

    def __init__(self, linear: torch.nn.Linear, packed: torch.Tensor, scales_and_zeros: torch.Tensor, group: int):
        super().__init__(linear)
        self.group = group
        self.register_buffer("packed", packed)
        self.register_buffer("scales_and_zeros", scales_and_zeros)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch._weight_int4pack_mm_for_cpu(_flatten(x), self.packed, self.group, self.scales_and_zeros)
        return self._finish(y, x)

    def storage_bytes(self) -> int:
        n, k = self.out_features, self.in_features
        return int4_storage_bytes(n, k, self.group, self.scales_and_zeros.element_size())


class DynamicInt8(_LowBitLinear):
    kernel = "quantized::linear_dynamic"

    def __init__(self, linear: torch.nn.Linear, codes: torch.Tensor, scales: torch.Tensor) -> None:
        super().__init__(linear)
        from torch.ao.nn.quantized.dynamic import Linear as QuantizedDynamicLinear

        with warnings.catch_warnings():  # quantized tensors are deprecated, still supported
            warnings.simplefilter("ignore")
            zero_points = torch.zeros(self.out_features, dtype=torch.long)
            qweight = torch._make_per_channel_quantized_tensor(codes, scales.double(), zero_points, 0)
            self.inner = QuantizedDynamicLinear(self.in_features, self.out_features, bias_=False, dtype=torch.qint8)
            self.inner.set_weight_bias(qweight, None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._finish(self.inner(_flatten(x).float()).to(x.dtype), x)

    def storage_bytes(self) -> int:
        # The engine's packed form is opaque: counted as its int8 codes and a float32 scale
        # per row, what the weight-only int8 layer stores.
        return int8_storage_bytes(self.out_features, self.in_features, 4)


class DenseLinear(torch.nn.Module):
    """The unquantized layer in the same interface: ``F.linear`` in the weight's dtype."""

    kernel = "torch.nn.functional.linear"

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.linear = linear

    @property
    def bias(self) -> torch.Tensor | None:
        return self.linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.linear.weight, self.linear.bias)

    def storage_bytes(self) -> int:
        w = self.linear.weight
        return w.numel() * w.element_size()


KINDS = ("dense", "int8_weight_only", "int4_weight_only", "dynamic_int8")


@torch.no_grad()
def build(
    kind: str, linear: torch.nn.Linear, *, dtype: torch.dtype, group: int | None = None
) -> tuple[torch.nn.Module, torch.Tensor]:
    """The layer of ``kind`` for ``linear``, its scales in ``dtype`` (the activations'),
    and the float32 weight it should compute with."""
    if kind == "dense":
        w = linear.weight.detach().to(dtype)
        dense = torch.nn.Linear(linear.in_features, linear.out_features, bias=linear.bias is not None, dtype=dtype)
        dense.weight.copy_(w)
        if linear.bias is not None:
            dense.bias.copy_(linear.bias)
        return DenseLinear(dense), w.float()
    if kind == "int8_weight_only":
        codes, scales = int8_row_codes(linear.weight)
        scales = scales.to(dtype)
        return Int8WeightOnly(linear, codes, scales), codes.float() * scales.float()[:, None]
    if kind == "dynamic_int8":
        codes, scales = int8_row_codes(linear.weight)
        return DynamicInt8(linear, codes, scales), codes.float() * scales[:, None]
    if kind == "int4_weight_only":
        if group is None:
            raise ValueError("int4 weight-only needs a group size")
        codes, scale, zero = int4_group_codes(linear.weight, group, dtype)
        # The kernel's layout for scales and zeros: (groups per row, rows, 2), scale first.
        scales_and_zeros = torch.stack([scale.t(), zero.t()], dim=-1).contiguous()
        packed = torch._convert_weight_to_int4pack_for_cpu(codes, 1)
        per_weight = lambda t: t.float().repeat_interleave(group, dim=1)  # noqa: E731
        reference = (codes.float() - INT4_OFFSET) * per_weight(scale) + per_weight(zero)
        return Int4WeightOnly(linear, packed, scales_and_zeros, group), reference
    raise ValueError(f"unknown kind of layer {kind!r}: one of {', '.join(KINDS)}")


@torch.inference_mode()
def relative_error(layer: torch.nn.Module, reference: torch.Tensor, x: torch.Tensor) -> float:
    """``||layer(x) − x Ŵᵀ|| / ||x Ŵᵀ||`` with Ŵ the reference weight, computed in float32
    from the same input (the bias, exact in both, left out). float32 sums differ from
    exact ones by ~1e-7 relatively at these row lengths, far below every tolerance."""
    y = layer(x).float()
    if layer.bias is not None:
        y = y - layer.bias.float()
    ref = _flatten(x).float() @ reference.t()
    return float((y.reshape(ref.shape) - ref).norm() / ref.norm().clamp(min=1e-30))
