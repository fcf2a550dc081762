"""Timing written once: warm up and discard, synchronise, repeat, keep raw samples.

``timed`` and ``synchronize`` are the clock every measurement reads. ``time_call`` and
``Timing`` are the old method, one point's repeats back to back: a machine that slows
for a while draws a shape on the points it was timing then, and the IQR they report is
no interval of the median. New code times through ``measure/lab/sampling.py``
(``interleaved``; its docstring shows how a ``time_call`` loop becomes one sweep); the
experiments still calling ``time_call`` move to it, and then these two go.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import torch

T = TypeVar("T")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass(frozen=True)
class Timing:
    samples_s: tuple[float, ...]

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)

    @property
    def median_ms(self) -> float:
        return self.median_s * 1e3

    @property
    def spread_ms(self) -> float:
        """Interquartile range (max - min under four samples): the noise a drift check respects."""
        s = sorted(self.samples_s)
        if len(s) < 4:
            return (s[-1] - s[0]) * 1e3
        q = statistics.quantiles(s, n=4)
        return (q[2] - q[0]) * 1e3

    def samples_ms(self) -> list[float]:
        return [round(x * 1e3, 4) for x in self.samples_s]


def timed(fn: Callable[[], T], *, device: torch.device) -> tuple[T, float]:
    """``fn()`` and its wall time in seconds, with a device synchronise on both sides: on
    a GPU, kernels are queued asynchronously and an unsynchronised clock measures only
    the launch."""
    synchronize(device)
    t0 = time.perf_counter()
    out = fn()
    synchronize(device)
    return out, time.perf_counter() - t0


def time_call(fn: Callable[[], object], *, device: torch.device, warmup: int = 1, repeats: int = 5) -> Timing:
    """Run ``fn`` ``warmup`` times untimed, then ``repeats`` times, each timed alone.

    Each repeat is clocked by ``timed``.
    """
    with torch.inference_mode():
        for _ in range(warmup):
            fn()
        samples = tuple(timed(fn, device=device)[1] for _ in range(repeats))
    return Timing(samples)
