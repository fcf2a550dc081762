"""The device's memory bandwidth, measured by a large copy: once per run, by the run's
calibration (``measure/lab/calibration.py``, which samples ``copier`` in interleaved
rounds and gives every experiment ``ctx.calibration.bandwidth_bytes_per_s``);
``copy_bandwidth``, one block of samples, stays for the experiments that still measure
their own until they take the calibration's.

A copy of ``n`` bytes reads ``n`` and writes ``n``, so it moves ``2 n`` bytes: the rate
is ``2 n / time``, the figure a decode step's floor is set against (the same
accounting as gpt-fast's achieved-bandwidth report and STREAM's "Copy" kernel). The
buffers are far larger than any cache level of the machines this runs on, warmed up
(first touch allocates the pages). Each sample times several copies in a row, so the
clock's own cost and the synchronisation around it are spread over them (on a GPU the
interval is read from CUDA events, the device's own clock); the median sample is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from measure.lab.timing import Timing, timed


@dataclass(frozen=True)
class Bandwidth:
    copy_bytes: int  # size of the buffer copied
    timing: Timing  # seconds per copy
    copies_per_sample: int

    @property
    def moved_bytes(self) -> int:
        return 2 * self.copy_bytes  # read once, written once

    @property
    def bytes_per_s(self) -> float:
        return self.moved_bytes / self.timing.median_s

    def row(self) -> dict:
        """The ``bandwidth`` table's row (prefill_decode)."""
        return {
            "copy_bytes": self.copy_bytes,
            "moved_bytes": self.moved_bytes,
            "copies_per_sample": self.copies_per_sample,
            "time_ms": self.timing.median_ms,
            "spread_ms": self.timing.spread_ms,
            "bandwidth_gb_s": self.bytes_per_s / 1e9,
        }


def clocked(fn, device: torch.device) -> float:
    """Seconds ``fn()`` takes: CUDA events on a GPU, a synchronised host clock otherwise."""
    if device.type != "cuda":
        return timed(fn, device=device)[1]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3  # elapsed_time is in milliseconds


def copier(*, copy_bytes: int, device: torch.device, copies_per_sample: int = 4):
    """A function that copies one ``copy_bytes`` buffer into another ``copies_per_sample``
    times: one sample of the probe. Both buffers are touched first (first touch
    allocates the pages) and live as long as the function does."""
    src = torch.empty(copy_bytes, dtype=torch.uint8, device=device)
    src.fill_(1)  # touch every page before timing
    dst = torch.empty_like(src)  # touched by the warm-up's first copy

    def copies() -> None:
        for _ in range(copies_per_sample):
            dst.copy_(src)

    copies.source = src  # the read-bandwidth probe reads the same buffer (machine_probes.reader)
    return copies


def copy_bandwidth(
    *, copy_bytes: int, device: torch.device, warmup: int = 2, repeats: int = 10, copies_per_sample: int = 4
) -> Bandwidth:
    copies = copier(copy_bytes=copy_bytes, device=device, copies_per_sample=copies_per_sample)
    with torch.inference_mode():
        for _ in range(warmup):
            copies()
        samples = tuple(clocked(copies, device) / copies_per_sample for _ in range(repeats))
    return Bandwidth(copy_bytes, Timing(samples), copies_per_sample)  # the buffers are freed on return


def weight_bytes(model: torch.nn.Module) -> int:
    """Bytes of the model's parameters, each stored tensor once (tied embeddings are one
    tensor): what a decode step must read from memory at least once."""
    return sum(p.numel() * p.element_size() for p in model.parameters())
