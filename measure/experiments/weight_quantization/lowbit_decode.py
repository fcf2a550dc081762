"""A decode step with its projection matrices computed by low-bit kernels, per variant
(the models: ``measure/lab/lowbit_variants.py``), ready to be timed. A variant above its
tolerance is reported and not timed, since its speed would be that of a wrong
computation. A variant that cannot be built or run here (a kernel this device lacks, a
shape it refuses) becomes a row that says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from measure.lab.generation import crop_cache, decode_step, random_cache
from measure.lab.lowbit_variants import REFERENCE, VARIANTS, Variant, variant_model

__all__ = ["REFERENCE", "VARIANTS", "Prepared", "prepare_variant"]


@dataclass(frozen=True)
class Prepared:
    """A variant ready to be timed: its row (its facts, or the reason it has none) and,
    where its status is "ok", its decode step, what sets the step's cache back before
    each call (``before``), its model and its cache; None for each where it is not."""

    row: dict
    step: Callable[[], object] | None = None
    reset: Callable[[], None] | None = None
    model: torch.nn.Module | None = None
    cache: object = None


def _reason(e: Exception) -> str:
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {first}"[:160]


def prepare_variant(model: torch.nn.Module, v: Variant, *, token: torch.Tensor, cache_tokens: int) -> Prepared:
    """The variant, built and checked, and its decode step called once untimed (see
    ``Prepared``); the row's status is "ok" where the step is ready to be timed."""
    row = {"variant": v.name, "label": v.label, "activations": v.activations, "tolerance": v.tolerance}
    try:
        built, facts = variant_model(model, v)
    except Exception as e:  # a kernel or shape this device refuses: the row says which
        return Prepared(row | {"status": f"not built: {_reason(e)}"})
    row |= facts
    if not math.isfinite(facts["max_rel_error"]):
        return Prepared(row | {"max_rel_error": None, "status": "wrong: output not finite, not timed"})
    if facts["max_rel_error"] > v.tolerance:
        return Prepared(row | {"status": "wrong: above tolerance, not timed"})
    try:
        cache = random_cache(built, batch=1, tokens=cache_tokens)
        step = partial(decode_step, built, token, cache)
        reset = partial(crop_cache, cache, cache_tokens)  # the previous step grew it by one
        with torch.inference_mode():
            step()
            reset()
    except Exception as e:
        return Prepared(row | {"status": f"step failed: {_reason(e)}"})
    return Prepared(row | {"status": "ok"}, step, reset, built, cache)
