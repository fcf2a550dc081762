"""A timed step set against the roofline's prediction (``measure/lab/roofline.py``), in the
columns every timing table declares for it, written once.

``prediction_columns("step")`` declares, beside a timing column ``step_ms``:

* ``step_predicted_ms`` with its 95 % range: ``max(memory, compute) + fixed``;
* ``step_memory_ms``, ``step_compute_ms``, ``step_fixed_ms``: the three terms (medians);
* ``step_bound``: "memory" or "compute", the ceiling the step sits under;
* ``step_over_predicted`` with its range: the measured time over the predicted one. Near
  one, the model explains the step; well above it, something the three terms do not count
  takes the rest (the pages then say what the profiler found);
* ``step_flops``, ``step_moved_bytes``, ``step_ops``: what was counted, which places the
  step on the roofline's figure (FLOPs per byte moved, FLOPs per second measured).

``prediction_cells("step", estimate, prediction)`` gives their cells for one row.
Torch-free: a step's bytes, FLOPs and operators are counted by the experiment.
"""

from __future__ import annotations

from measure.lab.roofline import Prediction, measured_over_predicted
from sitedata.policies import TIMING
from sitedata.schema import Column, Value, derived_columns, interval_names


def prediction_columns(stem: str, label: str = "") -> tuple[Column, ...]:
    """The columns of ``stem``'s prediction (see the module's docstring)."""
    what = f"{label}: " if label else ""
    return (
        *derived_columns(f"{stem}_predicted_ms", "ms", f"{what}predicted by the roofline"),
        Column(f"{stem}_memory_ms", "ms", f"{what}bytes over bandwidth", policy=TIMING),
        Column(f"{stem}_compute_ms", "ms", f"{what}FLOPs over the compute ceiling", policy=TIMING),
        Column(f"{stem}_fixed_ms", "ms", f"{what}operators times their fixed cost", policy=TIMING),
        Column(f"{stem}_bound", "", f"{what}the ceiling it sits under", policy=TIMING),
        *derived_columns(f"{stem}_over_predicted", "", f"{what}measured over predicted"),
        Column(f"{stem}_flops", "FLOP", f"{what}FLOPs counted"),
        Column(f"{stem}_moved_bytes", "bytes", f"{what}bytes counted as moved"),
        Column(f"{stem}_ops", "", f"{what}operators dispatched"),
    )


def _ms(term) -> float:
    return term.value * 1e3 if term is not None else 0.0


def prediction_cells(stem: str, estimate, prediction: Prediction) -> dict[str, float | str]:
    """The row's cells for ``prediction_columns(stem)``; ``estimate`` is the measured
    point (``medians.Estimate``: its median and 95 % interval, in seconds)."""
    total = prediction.total
    over = measured_over_predicted(estimate.median_s, estimate.low_s, estimate.high_s, total)
    p_low, p_high, _ = interval_names(f"{stem}_predicted_ms")
    o_low, o_high, _ = interval_names(f"{stem}_over_predicted")
    return {
        f"{stem}_predicted_ms": total.value * 1e3,
        p_low: total.low * 1e3,
        p_high: total.high * 1e3,
        f"{stem}_memory_ms": _ms(prediction.memory),
        f"{stem}_compute_ms": _ms(prediction.compute),
        f"{stem}_fixed_ms": _ms(prediction.fixed),
        f"{stem}_bound": prediction.bound,
        f"{stem}_over_predicted": over.value,
        o_low: over.low,
        o_high: over.high,
        f"{stem}_flops": prediction.flops,
        f"{stem}_moved_bytes": prediction.moved_bytes,
        f"{stem}_ops": prediction.ops,
    }


def no_prediction(stem: str) -> dict[str, None]:
    """The cells of ``prediction_columns(stem)`` left empty: a row whose step was not
    measured (a compiled step where no compiler runs)."""
    return dict.fromkeys(c.name for c in prediction_columns(stem))


# A step a page names in its prose (one row of a table, read as named values): its measured
# median and its prediction, the value's suffix, unit and what it is
_STEP_VALUES = (
    ("ms", "ms", "measured, median"),
    ("predicted_ms", "ms", "predicted by the roofline"),
    ("memory_ms", "ms", "bytes over bandwidth"),
    ("compute_ms", "ms", "FLOPs over the compute ceiling"),
    ("fixed_ms", "ms", "operators times their fixed cost"),
    ("bound", "", "the ceiling it sits under"),
    ("over_predicted", "", "measured over predicted"),
    ("over_predicted_low", "", "measured over predicted, low end of its range"),
    ("over_predicted_high", "", "measured over predicted, high end of its range"),
)


def step_values(name: str, what: str) -> tuple[Value, ...]:
    """The named values of one step a page's prose reads (``step_value_cells``)."""
    return tuple(
        Value(f"{name}_{k}", unit, description=f"{what}: {about}", policy=TIMING) for k, unit, about in _STEP_VALUES
    )


def step_value_cells(name: str, estimate, prediction: Prediction | None) -> dict:
    """The values of ``step_values(name, ...)`` for one measured step and its prediction
    (all empty where the step was not measured or not predicted)."""
    keys = [f"{name}_{k}" for k, _, _ in _STEP_VALUES]
    if estimate is None or prediction is None:
        return dict.fromkeys(keys)
    cells = prediction_cells("x", estimate, prediction)
    over = measured_over_predicted(estimate.median_s, estimate.low_s, estimate.high_s, prediction.total)
    found = (
        estimate.median_ms,
        cells["x_predicted_ms"],
        cells["x_memory_ms"],
        cells["x_compute_ms"],
        cells["x_fixed_ms"],
        prediction.bound,
        over.value,
        over.low,
        over.high,
    )
    return dict(zip(keys, found, strict=True))
