"""One finding of the drift gate: a cell, a value or a declaration, with its verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Finding:
    experiment: str
    table: str  # table name, or "values" / "meta"
    verdict: str  # ok | drift | not comparable | not compared | stale | missing | invalid | unused | unknown
    row: int | None = None
    column: str | None = None
    compare: str = ""
    scope: str = ""
    committed: Any = None
    new: Any = None
    tolerance: str = ""
    reason: str = ""

    def as_dict(self) -> dict:
        return asdict(self)
