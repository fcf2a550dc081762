"""The machine's roofline: the model every timed step of the site is explained by.

Measured once per run beside its calibration (``measure/lab/machine_probes.py``), from
probes that run none of the project's model code, so that a slower program never reads
as a slower machine:

* the memory ceiling: the copy bandwidth (bytes moved per second: a copy reads and
  writes its buffer), and the read bandwidth of a streaming sum beside it;
* the compute ceilings: the FLOP/s a matrix multiply of the model's own projection shape
  (hidden x intermediate) reaches with ``rows`` rows of input, for each dtype the
  experiments time, its weights in cache so that memory does not cap it: a one-row
  multiply is a matrix-vector product and reaches a small part of what a thousand rows do;
* the fixed cost of one operator as an eager step pays it: the small operators of a
  decoder layer outside its matrix multiplies, in module code, on one token (each
  operator's Python, dispatch, output and a kernel over a few hundred numbers); beside
  it, a trivial operator (``torch.add`` of one-element tensors), the floor of that cost.

A step that moves ``B`` bytes, does ``F`` FLOPs on ``rows`` rows of input in one dtype and
dispatches ``ops`` operators is then predicted to take at least

    max(B / bandwidth, F / ceiling(dtype, rows)) + ops x dispatch

(the roofline, with each kernel's fixed cost added: Williams, Waterman and Patterson,
2009). Every range is the cautious one: each bound takes the end of every interval that
makes it widest. Torch-free: the pages, the drift gate and the tests read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Rate:
    """A measured quantity with its 95 % range."""

    value: float
    low: float
    high: float

    def __post_init__(self) -> None:
        if not (0 < self.low <= self.value <= self.high) or not math.isfinite(self.high):
            raise ValueError(f"a rate needs 0 < low <= value <= high, not {self.value} [{self.low}, {self.high}]")

    def inverse(self, amount: float) -> Rate:
        """``amount / self``: a time from a rate (the range from the high end to the low)."""
        return Rate(amount / self.value, amount / self.high, amount / self.low)

    def times(self, factor: float) -> Rate:
        return Rate(self.value * factor, self.low * factor, self.high * factor)

    def plus(self, other: Rate | None) -> Rate:
        """Two quantities added, each end to the same end."""
        if other is None:
            return self
        return Rate(self.value + other.value, self.low + other.low, self.high + other.high)


ZERO = 0.0


@dataclass(frozen=True)
class Prediction:
    """The three terms of a step's time (seconds, each with its range), and their sum."""

    memory: Rate | None  # bytes over bandwidth (None for a step that moves nothing counted)
    compute: Rate | None  # FLOPs over the ceiling at the step's rows
    fixed: Rate | None  # operators times the cost of one
    # what was counted: where the step stands on the roofline's figure (FLOPs per byte)
    moved_bytes: float = 0.0
    flops: float = 0.0
    ops: int = 0
    parts: tuple[Prediction, ...] = ()  # steps run one after another (``summed``)

    @property
    def total(self) -> Rate:
        """max(memory, compute) + fixed, each end from the same end of every term; of steps
        run one after another, the sum of their totals."""
        if self.parts:
            first, *rest = (p.total for p in self.parts)
            for t in rest:
                first = first.plus(t)
            return first
        ends = []
        for pick in (lambda r: r.value, lambda r: r.low, lambda r: r.high):
            roof = max((pick(t) for t in (self.memory, self.compute) if t is not None), default=ZERO)
            ends.append(roof + (pick(self.fixed) if self.fixed is not None else ZERO))
        return Rate(*ends)

    @property
    def bound(self) -> str:
        """Which ceiling the step sits under: "memory" or "compute" (by the medians)."""
        memory = self.memory.value if self.memory else ZERO
        compute = self.compute.value if self.compute else ZERO
        return "memory" if memory >= compute else "compute"

    def share(self, term: str) -> float:
        """One term's median over the total's median (the three need not sum to one: the
        smaller of memory and compute overlaps the larger)."""
        part = getattr(self, term)
        return (part.value if part is not None else ZERO) / self.total.value


def _ends(rate: Rate) -> tuple[float, float, float]:
    return rate.value, rate.low, rate.high


def summed(parts) -> Prediction:
    """Steps run one after another (a generation's prefill and decode steps): each term
    and each count summed, and the total the sum of the steps' totals (a step's larger
    term does not hide another step's)."""
    parts = tuple(parts)
    if not parts:
        raise ValueError("a sum of steps needs at least one step")

    def add(term: str) -> Rate | None:
        found = [getattr(p, term) for p in parts if getattr(p, term) is not None]
        if not found:
            return None
        first, *rest = found
        for r in rest:
            first = first.plus(r)
        return first

    return Prediction(
        memory=add("memory"),
        compute=add("compute"),
        fixed=add("fixed"),
        moved_bytes=sum(p.moved_bytes for p in parts),
        flops=sum(p.flops for p in parts),
        ops=sum(p.ops for p in parts),
        parts=parts,
    )


def measured_over_predicted(median: float, low: float, high: float, predicted: Rate) -> Rate:
    """A measured time (its median and 95 % interval) over a prediction: the cautious
    range, the measurement's low end over the prediction's high end and the reverse."""
    return Rate(median / predicted.value, low / predicted.high, high / predicted.low)


@dataclass(frozen=True)
class Roofline:
    """One run's model of its machine (see the module's docstring)."""

    bandwidth: Rate  # bytes per second, copy
    read_bandwidth: Rate  # bytes per second, a streaming sum
    ceilings: dict[str, tuple[tuple[int, Rate], ...]]  # dtype -> ((rows, FLOP/s), ...) by rows
    dispatch: Rate | None  # seconds per operator, as eager module code pays it (None: not known, a datasheet's)
    trivial: Rate | None = None  # seconds per trivial operator: the floor of ``dispatch``

    def __post_init__(self) -> None:
        for dtype, points in self.ceilings.items():
            rows = [r for r, _ in points]
            if not rows or rows != sorted(set(rows)) or rows[0] < 1:
                raise ValueError(f"the {dtype} ceilings need distinct row counts from 1 up, in order: {rows}")

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(self.ceilings)

    def ceiling(self, dtype: str, rows: float) -> Rate:
        """The compute ceiling at ``rows`` rows: measured, or between two measured row
        counts a straight line on log-log axes (a rate that doubles from 64 to 128 rows
        is taken to grow by 2**0.5 at 90); outside the measured range, the nearest end.
        Never below the ceiling of fewer rows (each end of the range too): a multiply of
        more rows can always run as several multiplies of fewer, so a probe that came out
        slower than one of fewer rows (a kernel's choice, a noisy moment) does not lower it."""
        if dtype not in self.ceilings:
            raise KeyError(f"no compute ceiling measured for {dtype}; measured: {', '.join(self.ceilings)}")
        points, best = [], None
        for r, rate in self.ceilings[dtype]:
            best = rate if best is None else Rate(*(max(a, b) for a, b in zip(_ends(best), _ends(rate), strict=True)))
            points.append((r, best))
        if rows <= points[0][0]:
            return points[0][1]
        if rows >= points[-1][0]:
            return points[-1][1]
        for (r0, a), (r1, b) in zip(points, points[1:], strict=False):
            if r0 <= rows <= r1:
                w = math.log(rows / r0) / math.log(r1 / r0)
                ends = ((a.value, b.value), (a.low, b.low), (a.high, b.high))
                return Rate(*(x0 ** (1 - w) * x1**w for x0, x1 in ends))
        raise AssertionError("unreachable: the rows lie between two measured points")

    def peak(self, dtype: str) -> Rate:
        """The highest compute ceiling in ``dtype``: the one of the most rows probed."""
        return self.ceiling(dtype, self.ceilings[dtype][-1][0])

    def balance(self, dtype: str) -> Rate:
        """FLOPs per byte moved at which the peak and the bandwidth take equal time: a step
        of lower intensity waits on memory, one of higher on arithmetic."""
        peak, bw = self.peak(dtype), self.bandwidth
        return Rate(peak.value / bw.value, peak.low / bw.high, peak.high / bw.low)

    def _dispatch(self) -> Rate:
        if self.dispatch is None:
            raise ValueError("this roofline knows no operator's fixed cost: predict its steps with ops=0")
        return self.dispatch

    def predict(self, *, moved_bytes: float, flops: float, rows: float, dtype: str, ops: int = 0) -> Prediction:
        """The roofline's time for a step (see the module's docstring)."""
        return Prediction(
            memory=self.bandwidth.inverse(moved_bytes) if moved_bytes > 0 else None,
            compute=self.ceiling(dtype, rows).inverse(flops) if flops > 0 else None,
            fixed=self._dispatch().times(ops) if ops > 0 else None,
            moved_bytes=moved_bytes,
            flops=flops,
            ops=ops,
        )
