"""What a step does, counted while it runs: the ATen operators it dispatches, the FLOPs of
its matrix products and attention, and the bytes its operators read and write. These are
the three quantities the roofline (``measure/lab/roofline.py``) turns into a predicted
time: bytes over bandwidth, FLOPs over the compute ceiling, operators times the cost of
one.

Counted, not assumed, so that the count follows whatever the library does at this
version (a cache that grows by concatenation copies itself every step; attention that
repeats its grouped keys and values reads them several times): a ``TorchDispatchMode``
sees every ATen operator the step calls and its tensors.

* operators: every call the mode sees, views included (each is dispatched, and costs
  about what a trivial operator costs);
* bytes: each operator reads its tensor inputs and writes its tensor outputs once, from
  and to memory (no reuse between operators: an upper bound where a small activation
  stays in cache, exact for the weights and the cache, which do not fit). A view
  (an output that aliases an input without writing it) moves nothing; a broadcast input
  (stride 0) is read once; a lookup (``embedding``, ``index_select``) reads the rows it
  returns, not its whole table. Three kinds are kept apart: the weights (reads from the
  model's parameters), the cache (reads from the cache's tensors, and the tensor a
  concatenation makes of the cache and the step's new keys or values, which becomes
  the cache) and the activations (everything else). ``StepCounts.moved_bytes``, the
  roofline's memory term, is the first two;
* FLOPs: two per multiply-add of every matrix product (``mm``, ``addmm``, ``bmm``,
  ``baddbmm``, the low-bit kernels) and of attention's two products (``q·kᵀ`` and
  ``p·v``); elementwise work is not counted (a few operations per activation, not per
  weight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


@dataclass(frozen=True)
class StepCounts:
    ops: int
    flops: int
    weight_bytes: int  # read from the model's parameters
    cache_bytes: int  # read from the cache, and written by its concatenations
    activation_bytes: int  # every other byte read or written

    @property
    def moved_bytes(self) -> int:
        """What must cross the memory bus: the weights and the cache (each larger than any
        cache of the processor). The activations are left out: an operator's are at most a
        few megabytes here and stay in the processor's caches between operators."""
        return self.weight_bytes + self.cache_bytes


def tensor_bytes(t: torch.Tensor) -> int:
    """The bytes a tensor's elements occupy, a broadcast dimension (stride 0) once."""
    extent = math.prod(n for n, s in zip(t.shape, t.stride(), strict=True) if s != 0)
    return extent * t.element_size()


# ops whose first tensor input is a table of which they read only the rows they return
_LOOKUPS = {"embedding", "index_select"}
# ops that make a grown cache from the cache and the step's new keys or values
_APPENDS = {"cat"}


def _name(func) -> str:
    """``aten::mm`` -> ``mm``; ``quantized::linear_dynamic`` -> ``linear_dynamic``."""
    return func._schema.name.split("::")[-1]


def _is_view(func) -> bool:
    """An operator whose outputs alias an input without writing it (view, t, slice...)."""
    returns = func._schema.returns
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


def flops_of(name: str, args: tuple, out) -> int:
    """Two FLOPs per multiply-add of a matrix product or of attention's two products; 0
    for any other operator."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    outs = [o for o in tree_leaves(out) if isinstance(o, torch.Tensor)]
    if not outs or not tensors:
        return 0
    if name in ("mm", "bmm", "linear", "matmul"):
        return 2 * outs[0].numel() * tensors[0].shape[-1]
    if name in ("addmm", "baddbmm"):
        return 2 * outs[0].numel() * tensors[1].shape[-1]
    if name in ("_weight_int8pack_mm", "_weight_int4pack_mm_for_cpu", "linear_dynamic"):
        return 2 * outs[0].numel() * tensors[0].shape[-1]  # x (rows, k) times the stored weight
    if name.startswith("_scaled_dot_product") or name == "scaled_dot_product_attention":
        q, k = tensors[0], tensors[1]  # (batch, heads, queries, dim), (batch, kv heads, keys, dim)
        return 2 * 2 * q.numel() // q.shape[-1] * k.shape[-2] * q.shape[-1]
    return 0


class _Counting(TorchDispatchMode):
    def __init__(self, weights: set[int], cache: set[int]) -> None:
        super().__init__()
        self.weights, self.cache = weights, cache
        # every cache tensor the step read or made, kept alive while it is counted: the
        # cache a concatenation replaces is freed, and an activation the allocator then
        # placed at its address would be counted as the cache's
        self.held: list[torch.Tensor] = []
        self.ops = self.flops = self.weight_bytes = self.cache_bytes = self.activation_bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.ops += 1
        if _is_view(func):
            return out
        name = _name(func)
        inputs = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        outputs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        written = sum(tensor_bytes(t) for t in outputs)
        grows_cache = False
        for i, t in enumerate(inputs):
            read = written if (name in _LOOKUPS and i == 0) else tensor_bytes(t)
            where = _storage(t)
            if where in self.weights:
                self.weight_bytes += read
            elif where in self.cache:
                self.cache_bytes += read
                self.held.append(t)
                grows_cache = grows_cache or name in _APPENDS
            else:
                self.activation_bytes += read
        if grows_cache:  # the cache grown by one position: a new tensor that is the cache now
            self.cache |= {_storage(t) for t in outputs}
            self.held += outputs
            self.cache_bytes += written
        else:
            self.activation_bytes += written
        self.flops += flops_of(name, tuple(args), out)
        return out


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def weight_storages(model: torch.nn.Module) -> set[int]:
    """The storages of the model's parameters and buffers (a tied weight once)."""
    return {t.untyped_storage().data_ptr() for t in (*model.parameters(), *model.buffers())}


def cache_storages(tensors) -> set[int]:
    """The storages of a cache's tensors (``generation.cache_tensors(cache)``)."""
    return {_storage(t) for t in tensors}


def count_step(fn, *, weights: set[int] = frozenset(), cache: set[int] = frozenset()) -> StepCounts:
    """Runs ``fn()`` once, counting (see the module's docstring): reads from ``weights``
    (``weight_storages(model)``) count as the weights', reads from ``cache``
    (``cache_storages(...)`` of the cache the step is given) and the concatenations that
    grow it as the cache's, everything else as the activations'."""
    counting = _Counting(set(weights), set(cache))
    with counting, torch.inference_mode():
        fn()
    return StepCounts(
        counting.ops, counting.flops, counting.weight_bytes, counting.cache_bytes, counting.activation_bytes
    )
