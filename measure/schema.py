"""What an experiment returns: tables of declared columns, and named scalar values.

Every column says its unit and its kind, because the drift check and the page both
need to know how to treat it:

* ``exact``   bytes, counts, shapes, token ids: equal or wrong;
* ``numeric`` deterministic up to float arithmetic (perplexity, errors, ratios of
  counts): compared with a small relative tolerance, across devices;
* ``timing``  hardware-bound (times, and memory read from the OS or the allocator):
  compared only against a run on the same device fingerprint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

KINDS = ("exact", "numeric", "timing")


@dataclass(frozen=True, kw_only=True)
class Column:
    name: str
    unit: str = ""
    kind: str = "exact"
    label: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name}: kind {self.kind!r} not in {KINDS}")


@dataclass(frozen=True, kw_only=True)
class Table:
    name: str
    title: str
    columns: tuple[Column, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name}: duplicate column names")
        if not self.rows:
            raise ValueError(f"table {self.name}: no rows (an empty table is never published)")
        for i, row in enumerate(self.rows):
            if list(row) != names:
                raise ValueError(f"table {self.name} row {i}: columns {list(row)} != declared {names}")
            for c in self.columns:
                v = row[c.name]
                if isinstance(v, float) and not math.isfinite(v) and c.kind != "timing":
                    raise ValueError(f"table {self.name} row {i}: {c.name} is {v}")


@dataclass(frozen=True, kw_only=True)
class Value:
    """A named scalar shown inline in the prose, e.g. ``kv_cache.speedup``."""

    name: str
    value: Any
    unit: str = ""
    kind: str = "exact"
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"value {self.name}: kind {self.kind!r} not in {KINDS}")


@dataclass(frozen=True, kw_only=True)
class Result:
    tables: list[Table]
    values: list[Value] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
