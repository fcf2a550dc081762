"""Weight quantizers: symmetric absmax (per tensor, per output row, per group) and NF4.

Pure functions of a tensor, torch only, no model loading. Used by §5 (error of every
projection matrix), §7 (quality with the weights quantized in place) and §8 (a
quantized draft model for speculative decoding).

The stable API::

    SCHEMES["int4_g128"]                      # a Scheme: name, label, bits, granularity, group
    quantize(w, scheme) -> Quantized          # integer codes + one scale per tensor, row or group
    dequantize(q) -> Tensor                   # back to w's shape and dtype
    fake_quantize(w, scheme) -> Tensor        # dequantize(quantize(w, scheme))
    bits_per_weight(scheme, shape) -> float   # payload bits + 16-bit scales, per weight
    relative_error(w, w_hat) -> float         # ||w - w_hat||_F / ||w||_F
    projection_layers(model)                  # [(name, nn.Linear)] of the decoder layers
    quantize_model_(model, scheme) -> int     # in place; returns matrices quantized
    quantized_copy(model, scheme) -> model    # a deep copy, quantized; the original untouched

Symmetric absmax (spec §5.2): qmax = 2^(bits-1) - 1, scale = max|W| / qmax over the
scale's scope, codes = clamp(round(W / scale), -qmax - 1, qmax), W_hat = codes * scale.
The code -qmax - 1 is never produced by absmax rounding, so 2 * qmax + 1 levels are used;
except in a scope whose max|W| is subnormal (under 1.2e-38, far below any weight), where
max|W| / qmax keeps too few bits to be the scale it stands for, and codes may reach
-qmax - 1 or be clamped (each such weight then errs by at most its scope's max|W|).

Groups are k consecutive weights in row-major order (the layout of the stored matrix),
so a group never spans rows when k divides the row length, and the scale overhead is
exactly 16 / k bits per weight for any shape whose size k divides.

NF4 (Dettmers et al., "QLoRA: Efficient Finetuning of Quantized LLMs", 2023,
arXiv:2305.14314, §3 and the reference implementation ``create_normal_map`` in
bitsandbytes): 16 levels at quantiles of the standard normal, rescaled to [-1, 1], with
an exact zero; each block of 64 consecutive weights is scaled by its absmax and every
weight is mapped to the nearest level. Double quantization of the scales (a QLoRA
option) is not used: the scales are counted as 16-bit, 4 + 16/64 = 4.25 bits per weight.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch

# Scales are counted as fp16, as the spec's 4 + 16/128 = 4.125 counts them. They are kept
# in float32 here: fp16 storage would move a scale by at most 2^-11 relatively, far below
# the errors measured, and float32 cannot overflow on an extreme outlier.
SCALE_BITS = 16


@dataclass(frozen=True, kw_only=True)
class Scheme:
    """One way of quantizing a weight matrix.

    ``granularity`` is what one scale covers: ``tensor`` (the whole matrix), ``row`` (one
    output row, dim 0 of an ``nn.Linear`` weight) or ``group`` (``group`` consecutive
    weights). ``levels`` is ``uniform`` (absmax integer grid) or ``nf4``.
    """

    name: str
    label: str
    bits: int
    granularity: str
    group: int | None = None
    levels: str = "uniform"

    def __post_init__(self) -> None:
        if self.granularity not in ("tensor", "row", "group"):
            raise ValueError(f"scheme {self.name}: unknown granularity {self.granularity!r}")
        if (self.granularity == "group") != (self.group is not None):
            raise ValueError(f"scheme {self.name}: a group size goes with granularity 'group' only")
        if self.levels not in ("uniform", "nf4") or (self.levels == "nf4" and self.bits != 4):
            raise ValueError(f"scheme {self.name}: bad levels {self.levels!r} for {self.bits} bits")

    @property
    def qmax(self) -> int:
        return 2 ** (self.bits - 1) - 1


def _schemes(*schemes: Scheme) -> dict[str, Scheme]:
    return {s.name: s for s in schemes}


# The chapter's schemes (spec §5.3) plus int4 group-64, which has NF4's 4.25 bits per
# weight and so separates "a smaller block" from "better-placed levels".
SCHEMES: dict[str, Scheme] = _schemes(
    Scheme(name="int8_tensor", label="int8 per-tensor", bits=8, granularity="tensor"),
    Scheme(name="int8_row", label="int8 per-row", bits=8, granularity="row"),
    Scheme(name="int4_tensor", label="int4 per-tensor", bits=4, granularity="tensor"),
    Scheme(name="int4_row", label="int4 per-row", bits=4, granularity="row"),
    Scheme(name="int4_g128", label="int4 group-128", bits=4, granularity="group", group=128),
    Scheme(name="int4_g64", label="int4 group-64", bits=4, granularity="group", group=64),
    Scheme(name="nf4_b64", label="NF4 block-64", bits=4, granularity="group", group=64, levels="nf4"),
)


def nf4_levels() -> torch.Tensor:
    """The 16 NF4 levels, derived as in QLoRA (arXiv:2305.14314, eq. 4 and bitsandbytes'
    ``create_normal_map(offset=0.9677083, use_extra_value=True)``).

    An asymmetric construction gives an exact zero: 8 quantiles for the positive half
    (9 points from the offset down to 0.5, the last dropped) and 7 for the negative half,
    zero added, all divided by the largest so the levels span [-1, 1]. The offset is the
    mean of 1 - 1/(2*15) and 1 - 1/(2*16), which keeps the extreme quantile finite.
    """
    offset = 0.5 * ((1 - 1 / (2 * 15)) + (1 - 1 / (2 * 16)))
    p_pos = torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1]
    p_neg = torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1]
    pos = torch.special.ndtri(p_pos)
    neg = -torch.special.ndtri(p_neg)
    levels = torch.cat([pos, torch.zeros(1, dtype=torch.float64), neg]).sort().values
    return (levels / levels.max()).to(torch.float32)


@dataclass(frozen=True, kw_only=True)
class Quantized:
    """Integer codes (int8; NF4 codes are indices 0..15 into ``nf4_levels()``) and one scale
    per scope, shaped so that ``codes.view(n_scopes, -1) * scales`` broadcasts."""

    scheme: Scheme
    shape: tuple[int, ...]
    dtype: torch.dtype
    codes: torch.Tensor  # (n_scopes, weights per scope), padding included for groups
    scales: torch.Tensor  # (n_scopes, 1), float32 (counted as 16-bit, see SCALE_BITS)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _scopes(w: torch.Tensor, scheme: Scheme) -> torch.Tensor:
    """The weights laid out one scope per row (groups zero-padded at the very end; zeros
    change no absmax and are dropped again on dequantize)."""
    x = w.detach().to(torch.float32)
    if scheme.granularity == "tensor":
        return x.reshape(1, -1)
    if scheme.granularity == "row":
        return x.reshape(x.shape[0], -1) if x.dim() > 1 else x.reshape(1, -1)
    flat = x.reshape(-1)
    pad = (-flat.numel()) % scheme.group
    if pad:
        flat = torch.cat([flat, flat.new_zeros(pad)])
    return flat.view(-1, scheme.group)


# --8<-- [start:quantize] (shown on the weight-quantization page)
def quantize(w: torch.Tensor, scheme: Scheme | str) -> Quantized:
    """Quantize ``w`` with ``scheme`` (a Scheme or a key of SCHEMES)."""
    scheme = SCHEMES[scheme] if isinstance(scheme, str) else scheme
    x = _scopes(w, scheme)
    absmax = x.abs().amax(dim=1, keepdim=True)
    if scheme.levels == "nf4":
        scales = absmax
        safe = torch.where(scales > 0, scales, torch.ones_like(scales))
        levels = nf4_levels().to(x.device)  # on the weights' device: a GPU run quantizes there
        mids = (levels[1:] + levels[:-1]) / 2  # nearest level = which midpoints it passes
        codes = torch.bucketize((x / safe).clamp(-1, 1), mids).to(torch.int8)
    else:
        scales = absmax / scheme.qmax
        # An all-zero scope has scale 0: any scale reconstructs it; 1 avoids 0/0.
        safe = torch.where(scales > 0, scales, torch.ones_like(scales))
        codes = torch.clamp(torch.round(x / safe), -scheme.qmax - 1, scheme.qmax).to(torch.int8)
        scales = safe * (absmax > 0)
    return Quantized(scheme=scheme, shape=tuple(w.shape), dtype=w.dtype, codes=codes, scales=scales)
    # --8<-- [end:quantize]


def dequantize(q: Quantized) -> torch.Tensor:
    if q.scheme.levels == "nf4":
        values = nf4_levels().to(q.codes.device)[q.codes.long()] * q.scales
    else:
        values = q.codes.to(torch.float32) * q.scales
    return values.reshape(-1)[: q.numel].view(q.shape).to(q.dtype)


def fake_quantize(w: torch.Tensor, scheme: Scheme | str) -> torch.Tensor:
    """``w`` as the quantized model sees it: same shape and dtype, values on the grid."""
    return dequantize(quantize(w, scheme)).to(w.device)


def bits_per_weight(scheme: Scheme | str, shape: tuple[int, ...]) -> float:
    """Payload bits plus the 16-bit scales spread over the weights they cover."""
    scheme = SCHEMES[scheme] if isinstance(scheme, str) else scheme
    n = math.prod(shape)
    if scheme.granularity == "tensor":
        scopes = 1
    elif scheme.granularity == "row":
        scopes = shape[0]
    else:
        scopes = math.ceil(n / scheme.group)
    return scheme.bits + SCALE_BITS * scopes / n


def relative_error(w: torch.Tensor, w_hat: torch.Tensor) -> float:
    """||w - w_hat||_F / ||w||_F; the sums of squares accumulate in float64."""
    w32, h32 = w.detach().float(), w_hat.detach().float()
    num = (w32 - h32).square().sum(dtype=torch.float64)
    den = w32.square().sum(dtype=torch.float64)
    return float((num / den).sqrt())


def levels_used(q: Quantized) -> int:
    """Distinct codes actually present in the real (unpadded) weights."""
    return int(torch.unique(q.codes.reshape(-1)[: q.numel]).numel())


def projection_layers(model: torch.nn.Module) -> list[tuple[str, torch.nn.Linear]]:
    """Every ``nn.Linear`` inside the decoder layers (q, k, v, o, gate, up, down for a
    Llama or Qwen2 model), in module order. Embeddings, the (tied) output head and the
    norms are not projection matrices and stay in full precision."""
    out = []
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and ".layers." in f".{name}":
            out.append((name, module))
    return out


@torch.no_grad()
def quantize_model_(model: torch.nn.Module, scheme: Scheme | str) -> int:
    """Replace every projection matrix's weight by its quantized reconstruction, in place.
    Returns how many matrices were quantized. Compute stays in the model's dtype: this
    measures what the grid costs in quality, not the speed of integer kernels."""
    layers = projection_layers(model)
    for _, lin in layers:
        lin.weight.copy_(fake_quantize(lin.weight, scheme))
    return len(layers)


def quantized_copy(model: torch.nn.Module, scheme: Scheme | str) -> torch.nn.Module:
    """A deep copy of ``model`` with its projection matrices quantized; ``model`` is untouched."""
    clone = copy.deepcopy(model)
    quantize_model_(clone, scheme)
    return clone.eval()
