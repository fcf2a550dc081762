"""§2 prefill and decode: one cached generation with a clock around the prefill and
around each decode step, repeated. Its table is built in the package's ``__init__``."""

from __future__ import annotations

import torch

from measure.lab.generation import decode_step, prefill
from measure.lab.timing import timed


def split_runs(
    model, ids: torch.Tensor, *, steps: int, repeats: int, device: torch.device
) -> list[tuple[float, list[float]]]:
    """``repeats`` generations of ``steps`` decode steps after the prefill of ``ids``, after
    one discarded warm-up: per run, the prefill's seconds and each step's seconds."""

    def once() -> tuple[float, list[float]]:
        (token, cache), t_prefill = timed(lambda: prefill(model, ids), device=device)
        per_step = []
        for _ in range(steps):
            (token, cache), seconds = timed(lambda: decode_step(model, token, cache), device=device)
            per_step.append(seconds)
        return t_prefill, per_step

    with torch.inference_mode():
        once()  # warm-up, discarded
        return [once() for _ in range(repeats)]
