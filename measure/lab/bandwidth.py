"""The device's memory bandwidth, measured once per run by a large copy.

A copy of ``n`` bytes reads ``n`` and writes ``n``, so it moves ``2 n`` bytes: the rate
is ``2 n / time``, the figure a decode step's floor is set against (the same
accounting as gpt-fast's achieved-bandwidth report and STREAM's "Copy" kernel). The
buffers are far larger than any cache level of the machines this runs on, warmed up
(first touch allocates the pages), and the copy is repeated; the median is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from measure.lab.timing import Timing, time_call


@dataclass(frozen=True)
class Bandwidth:
    copy_bytes: int  # size of the buffer copied
    timing: Timing

    @property
    def moved_bytes(self) -> int:
        return 2 * self.copy_bytes  # read once, written once

    @property
    def bytes_per_s(self) -> float:
        return self.moved_bytes / self.timing.median_s


def copy_bandwidth(*, copy_bytes: int, device: torch.device, warmup: int = 2, repeats: int = 10) -> Bandwidth:
    src = torch.empty(copy_bytes, dtype=torch.uint8, device=device)
    src.fill_(1)  # touch every page before timing
    dst = torch.empty_like(src)
    t = time_call(lambda: dst.copy_(src), device=device, warmup=warmup, repeats=repeats)
    return Bandwidth(copy_bytes, t)  # the buffers are freed on return


def weight_bytes(model: torch.nn.Module) -> int:
    """Bytes of the model's parameters, each stored tensor once (tied embeddings are one
    tensor): what a decode step must read from memory at least once."""
    return sum(p.numel() * p.element_size() for p in model.parameters())
