"""The experiments, in the order the chapter presents them. Module name = data folder
= page marker prefix; a section's page is its name with hyphens (``page``), and the nav
in mkdocs.yml holds the sections' pages in this order (tests/test_registry.py).

An experiment is a module or a package of ``measure.experiments`` whose namespace holds
the members of ``Experiment``: ``load`` reads them once, checks each, and hands the
runner a typed record, so that nothing downstream asks a module what it happens to have.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from measure.errors import UserError
from sitedata.schema import Result, Table, Value

if TYPE_CHECKING:
    from measure.lab.context import Context
    from measure.lab.estimate import ForwardPasses

EXPERIMENTS: tuple[str, ...] = (
    "kv_cache",
    "cache_size",
    "prefill_decode",
    "batching",
    "prompt_reuse",
    "weight_quantization",
    "activation_outliers",
    "quality",
    "speculative_decoding",
    "distillation",
    "memory_budget",
    "chapter",
)

# The experiments with no page of their own: the source chapter's figures, which the
# sections' pages quote beside their own runs. Every other experiment is a section.
WITHOUT_PAGE: tuple[str, ...] = ("chapter",)
SECTIONS: tuple[str, ...] = tuple(name for name in EXPERIMENTS if name not in WITHOUT_PAGE)


def page(name: str) -> str:
    """A section's page in docs/: its experiment's name with hyphens (kv_cache -> kv-cache.md)."""
    return name.replace("_", "-") + ".md"


class NotAnExperiment(TypeError):
    """An experiment's module lacks a member of the interface, or has one of the wrong kind."""


@dataclass(frozen=True)
class Experiment:
    """What an experiment is, as its module spells it (the members keep their names
    there: ``TITLE``, ``TABLES``, ``VALUES``, ``Config``, ``run``, ``NEEDS_TRAINED``,
    ``work``, ``CHAPTER_COUNTERPART``). The last three are optional: a module that leaves
    them out gets the defaults below (random weights will do; no count of its forward
    passes; the chapter has figures to set beside its run)."""

    name: str
    TITLE: str
    TABLES: tuple[Table, ...]
    VALUES: tuple[Value, ...]
    Config: type  # a dataclass of parameters with ``for_profile(profile) -> Config``
    run: Callable[[Any, Context], Result]  # (config, context) -> Result
    NEEDS_TRAINED: bool = False  # measures what only trained weights have (quality, outliers)
    work: Callable[[Any], ForwardPasses] | None = None  # config -> the forward passes a run makes
    # Whether the source chapter has a counterpart to this run, set beside it under the page's
    # "## Beside the chapter"; a section the chapter does not cover says False, in one line.
    CHAPTER_COUNTERPART: bool = True
    # (config, rows) -> its simulated tables worked out again from the run's recorded costs,
    # ``rows(table)`` reading one of the run's tables: what the drift gate holds the committed
    # simulated tables to (measure/resimulation.py); left out where nothing is simulated
    resimulate: Callable[[Any, Callable[[str], list[dict]]], dict[str, list[dict]]] | None = None

    def __post_init__(self) -> None:
        checks = (
            ("TITLE", isinstance(self.TITLE, str) and bool(self.TITLE), "a non-empty str"),
            ("TABLES", _tuple_of(self.TABLES, Table) and bool(self.TABLES), "a non-empty tuple of Table"),
            ("VALUES", _tuple_of(self.VALUES, Value), "a tuple of Value"),
            ("Config", _config_class(self.Config), "a dataclass with a classmethod for_profile(profile)"),
            ("run", _takes(self.run, 2), "a function of (config, context)"),
            ("NEEDS_TRAINED", isinstance(self.NEEDS_TRAINED, bool), "a bool"),
            ("work", self.work is None or _takes(self.work, 1), "a function of (config), or left out"),
            ("CHAPTER_COUNTERPART", isinstance(self.CHAPTER_COUNTERPART, bool), "a bool"),
            ("resimulate", self.resimulate is None or _takes(self.resimulate, 2), "a function of (config, rows)"),
        )
        for member, ok, wanted in checks:
            if not ok:
                got = type(vars(self)[member]).__name__
                raise NotAnExperiment(f"experiment {self.name!r}: {member} must be {wanted}, not a {got}")

    @classmethod
    def of(cls, name: str, namespace: dict[str, Any]) -> Experiment:
        """The members that ``namespace`` (a module's) defines; a required one missing is an error."""
        members = [f for f in dataclasses.fields(cls) if f.name != "name"]
        for f in members:
            if f.name not in namespace and f.default is dataclasses.MISSING:
                raise NotAnExperiment(f"experiment {name!r}: its module defines no {f.name}")
        return cls(name, **{f.name: namespace[f.name] for f in members if f.name in namespace})


def _tuple_of(items: object, kind: type) -> bool:
    return isinstance(items, tuple) and all(isinstance(i, kind) for i in items)


def _config_class(config: object) -> bool:
    return (
        isinstance(config, type)
        and dataclasses.is_dataclass(config)
        and isinstance(inspect.getattr_static(config, "for_profile", None), classmethod)
    )


def _takes(fn: object, arguments: int) -> bool:
    """A callable that accepts ``arguments`` positional arguments."""
    if not callable(fn):
        return False
    try:
        inspect.signature(fn).bind(*range(arguments))
    except (TypeError, ValueError):
        return False
    return True


def load(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise UserError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return Experiment.of(name, vars(importlib.import_module(f"measure.experiments.{name}")))


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
