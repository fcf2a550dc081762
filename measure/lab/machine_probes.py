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
  tensors), the fixed cost of an operator that does no work: the floor of what an
  operator costs, paid from Python to the kernel;
* ``operators``: the fixed cost of an operator as an eager step pays it. A decoder layer's
  operators outside its matrix multiplies (an RMS norm, a rotary embedding, a gated
  activation, the residual adds), written as the module code of a transformer is, on one
  token of the model's hidden width: each operator is called from a module's Python,
  allocates its output and runs a kernel over a few hundred numbers, so its time is
  nearly all fixed cost. Counted once (``op_counting.count_ops``), it gives the cost of one
  operator in eager module code, which the roofline multiplies by a step's operators.

Why a second probe: an eager decode step dispatches some two thousand operators, and on
two CPU cores the trivial operator's cost times that count left out most of what the
profiler finds outside the matrix multiplies (Python between the operators, and the
small kernels themselves); the operators of module code carry both, and still no model.
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
# Layers of small operators per call of ``operators``: about 200 operators, a fraction of
# a millisecond, timed in blocks like the one-row multiplies (MIN_SAMPLE_S).
OPERATOR_LAYERS = 8
# Below this a call is timed as a block of calls (``sampling.interleaved``'s min_sample_s):
# a one-row multiply of a 135M-parameter model's projection takes tens of microseconds.
MIN_SAMPLE_S = 0.002


def probed_dtypes(dtype: torch.dtype) -> tuple[torch.dtype, ...]:
    """The run's dtype, and the one the settings of prefill_decode time beside it
    (``settings.other_dtype``): bfloat16 beside float32 (a CPU, where the low-bit kernels
    time bfloat16 activations too), float32 beside a GPU's float16 or bfloat16."""
    return (dtype, torch.bfloat16 if dtype == torch.float32 else torch.float32)


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


class _LayerWithoutMatmuls(torch.nn.Module):
    """A decoder layer's operators outside its matrix multiplies, as module code writes
    them (Llama's and Qwen2's RMS norm, rotary embedding and SiLU gate), on one token."""

    def __init__(self, hidden: int, heads: int, device, dtype) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden, device=device, dtype=dtype), requires_grad=False)
        self.heads = heads

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        y = self.weight * y
        q = y.view(1, 1, self.heads, -1).transpose(1, 2)
        half = q.shape[-1] // 2
        q = q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin
        return x + torch.nn.functional.silu(y) * y + q.transpose(1, 2).reshape(x.shape)


def operators(*, hidden: int, heads: int, device, dtype, layers: int = OPERATOR_LAYERS):
    """A call that runs ``layers`` layers of small operators on one token, and the number
    of ATen operators one call dispatches."""
    from measure.lab.op_counting import count_ops

    stack = [_LayerWithoutMatmuls(hidden, heads, device, dtype) for _ in range(layers)]
    x = torch.ones((1, 1, hidden), device=device, dtype=dtype)
    angle = torch.ones((1, 1, 1, hidden // heads), device=device, dtype=dtype)
    cos, sin = angle.cos(), angle.sin()

    @torch.inference_mode()
    def call() -> None:
        h = x
        for layer in stack:
            h = layer(h, cos, sin)

    return call, count_ops(call)
