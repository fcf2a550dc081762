"""A value and the two bounds of its interval, declared at once: for a page's inline
values what ``schema.derived_columns`` is for a table's columns, so that no experiment
writes the same three declarations by hand."""

from __future__ import annotations

from sitedata.policies import TIMING, Policy
from sitedata.schema import Value, interval_names


def interval_values(
    name: str,
    unit: str = "",
    *,
    description: str = "",
    policy: Policy = TIMING,
    bounds: tuple[str, str] | None = None,
) -> tuple[Value, Value, Value]:
    """``name``, then its low and high bounds, named as a column's are (``speedup_low``;
    a unit suffix stays last: ``floor_low_ms``), with one unit and one policy. ``bounds``
    describes the two bounds where they are not the value's 95 % interval (the default)
    or say more of it."""
    low, high, _ = interval_names(name)
    said = bounds or (f"95 % interval of {name}, low", f"95 % interval of {name}, high")
    return (
        Value(name, unit, policy=policy, description=description),
        Value(low, unit, policy=policy, description=said[0]),
        Value(high, unit, policy=policy, description=said[1]),
    )
