"""Were a model's weights already quantized before it was loaded? Read from the weights alone.

For §5's table ``distributed_grid``: per block of 32 consecutive weights, how many
distinct values it holds (a GGUF Q4_1 block holds at most 16), and the error of
re-quantizing with Q4_1's own rule (asymmetric 4-bit, min and step per 32 weights),
which is ~0 for weights that are already Q4_1, and with Q8_0's.
"""

from __future__ import annotations

import math

import torch

from measure.lab import quantizers as q

Q4_1_BLOCK = 32  # GGUF Q4_1: 32 weights share an fp16 step and an fp16 minimum (ggml-common.h)
Q4_1_LEVELS = 16
# GGUF Q8_0: int8 codes, one fp16 absmax scale per 32 weights (ggml-common.h): symmetric
# absmax with groups of 32, i.e. this module's own quantizer.
Q8_0 = q.Scheme(name="q8_0", label="Q8_0", bits=8, granularity="group", group=Q4_1_BLOCK)


def q4_1_requantize(w: torch.Tensor) -> torch.Tensor:
    """Q4_1's rule (ggml ``quantize_row_q4_1_ref``): per block of 32, step = (max - min)/15,
    code = round((w - min) / step), w_hat = min + code * step."""
    x = w.detach().float().reshape(-1, Q4_1_BLOCK)
    lo, hi = x.amin(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)
    step = (hi - lo) / (Q4_1_LEVELS - 1)
    safe = torch.where(step > 0, step, torch.ones_like(step))
    codes = torch.clamp(torch.round((x - lo) / safe), 0, Q4_1_LEVELS - 1)
    return (lo + codes * step).view(w.shape)


def grid_check(mats: list[torch.Tensor]) -> dict[str, int | float]:
    """Over a group of matrices: blocks of 32, the most distinct values in one block, the
    share of blocks with at most 16, and the relative error of re-quantizing as Q4_1 and
    as Q8_0 (sums of squares in float64)."""
    blocks, small, most, err_num, err_q8, err_den = 0, 0, 0, 0.0, 0.0, 0.0
    for w in mats:
        x = w.float().reshape(-1, Q4_1_BLOCK)
        s = x.sort(dim=1).values
        distinct = 1 + (s[:, 1:] != s[:, :-1]).sum(dim=1)
        blocks += x.shape[0]
        small += int((distinct <= Q4_1_LEVELS).sum())
        most = max(most, int(distinct.max()))
        d = (w.double() - q4_1_requantize(w).double()).pow(2).sum()
        err_num += float(d)
        err_q8 += float((w.double() - q.fake_quantize(w, Q8_0).double()).pow(2).sum())
        err_den += float(w.double().pow(2).sum())
    return {
        "blocks": blocks,
        "max_distinct_per_block": most,
        "blocks_within_16_share": small / blocks,
        "q4_1_requantize_error": math.sqrt(err_num / err_den),
        "q8_0_requantize_error": math.sqrt(err_q8 / err_den),
    }
