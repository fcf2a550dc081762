"""The decode step with the framework's overhead compiled away, the way the fastest
PyTorch decoders run it.

* A static cache: every layer's keys and values allocated once, at full length, and
  written in place, so a step has the same tensors and shapes every time (the dynamic
  cache concatenates a new tensor per step).
* The step compiled by ``torch.compile`` (inductor): the model's small operations fused
  into fewer kernels, and no Python between them.
* On a GPU, CUDA graphs (``mode="reduce-overhead"``): a step's kernels are captured once
  and replayed with one launch, instead of a thousand launches from the host.

The step is compiled once per model and kept for the run, with PyTorch's automatic
dynamic shapes: the first shape compiles for itself, and a size that changes (the
cache's length, then the batch) is made symbolic by one more compilation that every
later size reuses. A fixed-shape compilation would cost about a minute per new shape
on two CPU cores; marking every size dynamic up front compiled far more slowly here,
and transformers reads the static cache's length as a plain number, which cannot be
marked dynamic in advance. Where the compiler cannot run (no C++ compiler for the CPU
backend, an unsupported platform), ``compiler_unavailable`` says why and the pages say so.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache

import torch


@dataclass(frozen=True)
class CompiledDecoder:
    step: Callable  # (token, cache) -> logits of the new position
    method: str  # what was compiled and how, for the pages


_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STAND_IN = ContextVar("eager_stand_in", default=False)


@contextmanager
def eager_stand_in() -> Iterator[None]:
    """Within it ``compiled_decoder`` compiles nothing and gives the eager step in the
    compiled step's place: for a regeneration whose timings nobody compares (the drift
    gate without ``timing``, beside ``medians.minimal_rounds``). The compiled step's only
    products are timings, and its compilations are minutes of such a regeneration; what
    the gate compares (its rows, and whether the compiler runs here, still tried for
    real by ``compiler_unavailable``) is the same either way."""
    token = _STAND_IN.set(True)
    try:
        yield
    finally:
        _STAND_IN.reset(token)


def method(device: torch.device) -> str:
    graphs = ", CUDA graphs" if device.type == "cuda" else ""
    return f"static cache, torch.compile (inductor, dynamic shapes{graphs})"


@cache
def compiler_unavailable(device_type: str) -> str | None:
    """Why ``torch.compile`` cannot compile for this device type, in one line, or None.
    Compiles one small function for real: the CPU backend needs a working C++ compiler,
    which only an attempt reveals."""
    try:
        fn = torch.compile(lambda x: torch.relu(x) * 2 + 1, dynamic=True)
        fn(torch.ones(4, device=device_type))
    except Exception as e:  # any failure of the compiler stack means: not available here
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return f"torch.compile is not available on this {device_type}: {first[:160]}"
    return None


def compiled_decoder(model, device: torch.device) -> CompiledDecoder:
    """The compiled step for ``model``, compiled on its first call and kept for the
    model's lifetime, so every experiment of a run shares one compilation."""
    if _STAND_IN.get():
        return CompiledDecoder(_step_of(model), method(device))
    if model not in _COMPILED:
        mode = "reduce-overhead" if device.type == "cuda" else None
        _COMPILED[model] = CompiledDecoder(torch.compile(_step_of(model), mode=mode), method(device))
    return _COMPILED[model]


def _step_of(model) -> Callable:
    """The decode step of ``model``: (token, cache) -> the logits of the new position."""

    def step(token: torch.Tensor, cache) -> torch.Tensor:
        return model(input_ids=token, past_key_values=cache, use_cache=True).logits

    return step


def static_cache(model, *, batch: int, tokens: int, seed: int = 0):
    """A static cache one position longer than ``tokens``, its first ``tokens`` positions
    holding random keys and values (as ``generation.random_cache``): the cache a compiled
    step at that context reads, with room for the position the step writes."""
    from transformers import StaticCache

    from measure.lab.models import architecture_shape

    shape = architecture_shape(model.config)
    p = next(model.parameters())
    cache = StaticCache(config=model.config, max_cache_len=tokens + 1)
    g = torch.Generator(device=p.device).manual_seed(seed)
    size = (batch, shape["kv_heads"], tokens, shape["head_dim"])
    # Outside inference mode: the compiled step writes into these tensors, and tensors
    # made in inference mode cannot be written outside it.
    with torch.inference_mode(False), torch.no_grad():
        for layer in range(shape["layers"]):
            k = torch.randn(size, generator=g, device=p.device, dtype=p.dtype)
            v = torch.randn(size, generator=g, device=p.device, dtype=p.dtype)
            cache.update(k, v, layer)
    return cache


def compiled_step_at(decoder: CompiledDecoder, token: torch.Tensor, cache, tokens: int) -> torch.Tensor:
    """One compiled decode step against ``cache`` held at ``tokens`` positions: each
    layer's length is set back first (the previous step advanced it by one), so repeated
    steps all see the same context and write the same slot."""
    with torch.inference_mode(False), torch.no_grad():
        for layer in cache.layers:
            layer.cumulative_length.fill_(tokens)
        return decoder.step(token, cache)
