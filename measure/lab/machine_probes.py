"""The probes of the machine's roofline (``measure/lab/roofline.py``): callables that run
no model code, sampled by the run's calibration in the same interleaved rounds as its
copy and its reference step (``measure/lab/calibration.py``).

* ``matmuls``: for each dtype and row count, ``x @ w`` with ``w`` of the model's largest
  per-layer projection shape (hidden x intermediate) in that dtype, ``x`` of ``rows`` rows;
  its weights are one matrix, read again at every call, so they stay in cache and the
  FLOP/s measured is the arithmetic's ceiling at that row count, not memory's;
* ``reader``: a streaming sum of the calibration's copy buffer, viewed as float32 (one
  read of every byte, nothing written): the read bandwidth;
* ``dispatcher``: ``calls`` trivial operators in a row (``torch.add`` of two one-element
  tensors), the fixed cost of an operator that does no work.
"""

from __future__ import annotations

from functools import partial

import torch

# The row counts probed: one (a decode step of one request, a matrix-vector product) up to
# the longest prompt a CPU run prefills in one pass; doublings, so that the log-log line
# between two of them (``Roofline.ceiling``) spans a factor of two at most.
ROWS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
ROWS_SMOKE = (1, 16)
DISPATCH_CALLS = 1000  # trivial operators per sample: the clock's own cost spread over them
DISPATCH_CALLS_SMOKE = 20
# Below this a call is timed as a block of calls (``sampling.interleaved``'s min_sample_s):
# a one-row multiply of a 135M-parameter model's projection takes tens of microseconds.
MIN_SAMPLE_S = 0.002


def projection_shape(config) -> tuple[int, int]:
    """(hidden, intermediate) of a transformers config: the MLP's up projection, each
    layer's largest matrix (a config without an MLP width takes four times the hidden)."""
    hidden = int(config.hidden_size)
    return hidden, int(getattr(config, "intermediate_size", None) or 4 * hidden)


def matmul_flops(rows: int, shape: tuple[int, int]) -> int:
    """2 x rows x hidden x intermediate: a multiply-accumulate is two FLOPs."""
    return 2 * rows * shape[0] * shape[1]


def matmuls(*, shape: tuple[int, int], dtypes: tuple[torch.dtype, ...], rows: tuple[int, ...], device, seed: int = 0):
    """{(dtype name, rows): call}: one multiply each, its operands made once (seeded)."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    points = {}
    for dtype in dtypes:
        w = torch.randn(shape, generator=g).to(device=device, dtype=dtype)
        for r in rows:
            x = torch.randn((r, shape[0]), generator=g).to(device=device, dtype=dtype)
            points[(str(dtype).removeprefix("torch."), r)] = partial(torch.mm, x, w)
    return points


def reader(buffer: torch.Tensor):
    """A call that reads every byte of ``buffer`` once (a float32 sum of it)."""
    view = buffer.view(torch.float32)
    return partial(torch.sum, view)


def dispatcher(*, calls: int, device):
    x, y = torch.ones(1, device=device), torch.ones(1, device=device)

    def dispatch() -> None:
        for _ in range(calls):
            torch.add(x, y)

    return dispatch
