"""The experiments, in the order the chapter presents them. Module name = data folder
= page marker prefix."""

from __future__ import annotations

import importlib
from types import ModuleType

from measure.errors import UserError

EXPERIMENTS: tuple[str, ...] = (
    "kv_cache",
    "cache_size",
    "prefill_decode",
    "batching",
    "weight_quantization",
    "activation_outliers",
    "quality",
    "speculative_decoding",
    "distillation",
    "memory_budget",
    "chapter",
)


def load(name: str) -> ModuleType:
    if name not in EXPERIMENTS:
        raise UserError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"measure.experiments.{name}")


def select(only: str | None) -> list[str]:
    """``only`` is a comma-separated subset, e.g. ``kv_cache,cache_size``."""
    if not only:
        return list(EXPERIMENTS)
    names = [n.strip() for n in only.split(",") if n.strip()]
    if not names:
        raise UserError(f"--only {only!r} names no experiment; known: {', '.join(EXPERIMENTS)}")
    for n in names:
        load(n)  # raises a UserError naming the known ones
    return names
