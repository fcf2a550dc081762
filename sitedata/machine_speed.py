"""How fast one run's machine was against another's, from their calibrations: what the
drift gate divides out of every timing before it compares two runs, and reports once.

A run's calibration (``site_data/calibration/``) measured its machine at its start and
its end with probes that run none of the project's model code: the copy bandwidth, the
compute ceilings of matrix multiplies and the cost of a trivial operator (table
``roofline``; runs measured before those probes have the copy bandwidth and the
reference decode step of table ``runs`` only). A run's machine is the geometric mean of
its start and its end; the speed of one machine against another is, per probe, the ratio
of their rates (above 1: the regenerated machine is faster), and overall the geometric
mean of the probes' ratios. Each ratio carries a relative half-width from its probes'
95 % intervals, combined in quadrature on the log scale.

So a machine uniformly 12 % slower moves every timing by about 12 %, and the gate says so
in one line instead of in hundreds of cells, while a change in one code path, which no
probe runs, still stands out. Torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from sitedata.read import DataError, read_experiment

FOLDER = "calibration"
# the probes whose rates stand for the machine: memory, arithmetic (the largest multiply of
# the run's own dtype) and the fixed cost of an operator (a rate: operators per second)
PROBES = ("memory", "compute", "dispatch")


@dataclass(frozen=True)
class Factor:
    """A ratio (above 1: the regenerated machine is faster) and its relative half-width."""

    value: float
    half_width: float  # relative: 0.02 is ±2 %

    def percent(self) -> str:
        return f"{self.value - 1:+.1%} (±{self.half_width:.1%})"


def _gmean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _quadrature(widths: list[float]) -> float:
    return math.sqrt(sum(w * w for w in widths))


@dataclass(frozen=True)
class MachineState:
    """One run's probes, start and end combined: probe -> (rate, relative half-width)."""

    run: str
    rates: dict[str, tuple[float, float]]
    drifted: bool | None  # past the drift limit between start and end (None: no end)
    movement: float = 0.0  # the larger relative move of its step and its bandwidth, start to end

    @classmethod
    def of(cls, root: Path, run: str) -> MachineState | None:
        """The state ``root``'s calibration gives for ``run``, or None where it has none."""
        try:
            cal = read_experiment(Path(root), FOLDER)
        except DataError:
            return None
        runs = [r for r in cal.rows("runs") if r["run"] == run]
        if not runs:
            return None
        row = runs[0]
        drifted = {"true": True, "false": False}.get(str(row.get("drifted", "")).lower())
        probes = [p for p in cal.rows("roofline") if p["run"] == run] if "roofline" in cal.texts else []
        rates = _from_probes(probes, row.get("dtype", "")) if probes else _from_runs(row)
        return cls(run, rates, drifted, _movement(row)) if rates else None


def _movement(row: dict) -> float:
    """How far a run's machine moved while it ran: the larger of its reference step's and
    its copy bandwidth's relative drift between start and end (0 where it has no end)."""
    moves = []
    for name in ("step_drift", "bandwidth_drift"):
        try:
            moves.append(abs(float(row.get(name, ""))))
        except (TypeError, ValueError):
            continue
    return max((m for m in moves if math.isfinite(m)), default=0.0)


def _rate(time_ms: str, low_ms: str, high_ms: str, work: float) -> tuple[float, float] | None:
    try:
        t, lo, hi = float(time_ms), float(low_ms), float(high_ms)
    except (TypeError, ValueError):
        return None
    if not (0 < lo <= t <= hi) or not math.isfinite(hi):
        return None
    return work / (t / 1e3), (hi - lo) / 2 / t


def _combined(rates: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Start and end of one probe: their geometric mean, its half-width from both."""
    if not rates:
        return None
    value = _gmean([r for r, _ in rates])
    return value, _quadrature([w for _, w in rates]) / len(rates)


def _from_probes(probes: list[dict], dtype: str) -> dict[str, tuple[float, float]]:
    def rates(match) -> list[tuple[float, float]]:
        out = []
        for p in probes:
            if match(p) and (r := _rate(p["time_ms"], p["time_low_ms"], p["time_high_ms"], float(p["work"]))):
                out.append(r)
        return out

    matmuls = [p for p in probes if p["probe"] == "matmul" and p["dtype"] == dtype]
    largest = max((int(p["rows"]) for p in matmuls), default=None)
    found = {
        "memory": _combined(rates(lambda p: p["probe"] == "copy")),
        "compute": _combined(rates(lambda p: p in matmuls and int(p["rows"]) == largest)),
        "dispatch": _combined(rates(lambda p: p["probe"] == "dispatch")),
    }
    return {k: v for k, v in found.items() if v is not None}


def _from_runs(row: dict) -> dict[str, tuple[float, float]]:
    """A run measured before the roofline's probes: its copy bandwidth, and its reference
    decode step standing for the rest (it runs model code: a slower program slows it)."""
    out = {}
    bandwidth = [
        (float(row[f"{m}_bandwidth_gb_s"]), _half(row, f"{m}_bandwidth", "_gb_s"))
        for m in ("start", "end")
        if row.get(f"{m}_bandwidth_gb_s") not in ("", None)
    ]
    steps = [
        (1 / float(row[f"{m}_step_ms"]), _half(row, f"{m}_step", "_ms"))
        for m in ("start", "end")
        if row.get(f"{m}_step_ms") not in ("", None)
    ]
    if bandwidth:
        out["memory"] = _combined(bandwidth)
    if steps:
        out["compute"] = _combined(steps)
    return out


def _half(row: dict, stem: str, unit: str) -> float:
    value, low, high = (float(row[f"{stem}{part}{unit}"]) for part in ("", "_low", "_high"))
    return (high - low) / 2 / value


@dataclass(frozen=True)
class Speed:
    """The regenerated run's machine against the committed run's, per probe and overall."""

    committed: MachineState
    regenerated: MachineState
    factors: dict[str, Factor]
    overall: Factor

    @classmethod
    def between(cls, committed: MachineState, regenerated: MachineState) -> Speed | None:
        factors = {}
        for probe in PROBES:
            if probe in committed.rates and probe in regenerated.rates:
                (old, w_old), (new, w_new) = committed.rates[probe], regenerated.rates[probe]
                factors[probe] = Factor(new / old, _quadrature([w_old, w_new]))
        if not factors:
            return None
        overall = Factor(
            _gmean([f.value for f in factors.values()]),
            _quadrature([f.half_width for f in factors.values()]) / len(factors),
        )
        return cls(committed, regenerated, factors, overall)

    @property
    def drifted(self) -> bool:
        """Either run's machine moved past the drift limit while it ran."""
        return bool(self.committed.drifted or self.regenerated.drifted)

    @property
    def unsteady(self) -> float:
        """How far the runs that drifted past the limit moved while they ran, summed: a
        timing of such a run was taken at a speed known no better than that (0 when
        neither drifted: a run within the limit is taken at its mean speed)."""
        return sum(run.movement for run in (self.committed, self.regenerated) if run.drifted)

    def describe(self) -> str:
        """One line: this machine's speed against the committed run's, probe by probe."""
        words = {"memory": "copy bandwidth", "compute": "matrix arithmetic", "dispatch": "operators per second"}
        parts = ", ".join(f"{words[p]} {f.percent()}" for p, f in self.factors.items())
        drift = (
            f"; a run drifted past the limit while it ran, so every timing's range is widened by "
            f"±{self.unsteady:.1%}, how far its machine moved"
            if self.drifted
            else ""
        )
        return (
            f"the regenerated run's machine against the committed run's: {parts}; overall "
            f"{self.overall.percent()}, divided out of every timing{drift}"
        )
