"""Counting the operators a call dispatches: the fixed cost a step pays per operator
(``measure/lab/roofline.py``) times how many it dispatches."""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class _Counting(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def count_ops(fn) -> int:
    """The ATen operators ``fn()`` dispatches: a ``TorchDispatchMode`` sees every one the
    call makes, a composite operator as the operators it decomposes into."""
    with _Counting() as counting, torch.inference_mode():
        fn()
    return counting.calls
