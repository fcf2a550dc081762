"""The roofline's memory and operator terms timed in a sweep's own rounds, so that a step
and its prediction are measured side by side.

A run's calibration probes the machine before its first experiment; a sweep runs minutes
later. On a shared machine the copy bandwidth and an operator's fixed cost move by more
than a timing page's margin in that time: the committed calibrations of one day put the
operator at 2.9 and at 4.4 µs, and a run's start and end calibration disagree by up to
±15 %. A decode step set against terms probed minutes before it then reads "explained" in
one run and "cannot tell" in the next, with neither the step nor the model changed.

So a sweep that sets its steps against the roofline times three more points in its rounds
(``RoundProbes.points``): the copy probe, over a buffer of the model's weight bytes (the
bytes a step reads, larger than any last-level cache it meets; a copy reads and writes
them once), the operator probe (``machine_probes.operators``: a decoder layer's small
operators, the fixed cost the roofline charges each operator a step dispatches), and the
compute probe: one multiply of the model's projection shape, of the most rows the
calibration probed, in the model's dtype. ``RoundProbes.roofline`` is then the
calibration's roofline with its bandwidth and its cost per operator replaced by what the
probes took in the same rounds as the steps, and every compute ceiling scaled by how far
that multiply moved from the calibration's: 22 matrix shapes are too many to time in
every round, and the machine's arithmetic is taken to move as one (a shared core slows
every kernel on it). The drift gate divides two runs' speeds out sweep by sweep with
these (``sitedata/round_speed.py``).

The floors (weight bytes over the run's one bandwidth) stay the calibration's, so that
every page's floor of one model is the same number; only predictions use these terms.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from measure.lab.bandwidth import copier, weight_bytes
from measure.lab.machine_probes import MIN_SAMPLE_S, ROWS, matmul_flops, matmuls, operators, projection_shape
from measure.lab.roofline import Rate, Roofline
from sitedata.schema import interval_names

if TYPE_CHECKING:
    from measure.lab.medians import Estimate
    from measure.lab.sampling import Sweep

# the probes' keys in a sweep: tuples no experiment uses for a point of its own
COPY = ("roofline probe", "copy")
OPERATOR = ("roofline probe", "operator")
COMPUTE = ("roofline probe", "compute")
PROBES = (COPY, OPERATOR, COMPUTE)
# A sweep holding the probes samples any call quicker than this as a block of calls (the
# operator probe's few hundred microseconds); every step a sweep times is slower than it.
BLOCK_S = MIN_SAMPLE_S


@dataclass
class RoundProbes:
    """The two probes for one model on one device, and what turns their times into rates."""

    points: dict  # COPY, OPERATOR and COMPUTE -> the call each round times
    moved_bytes: int  # what one copy moves: the weights' bytes read and written once
    ops_per_call: int  # ATen operators one call of the operator probe dispatches
    dtype: str  # the multiply's, the model's ("float32")
    rows: int  # the multiply's rows of input
    flops: int  # what one multiply computes

    @classmethod
    def of(cls, model, device, *, rows: int = ROWS[-1]) -> RoundProbes:
        """The probes for ``model``; ``rows``: the multiply's, the most the calibration
        probes (a calibration without that row count leaves the ceilings as they are)."""
        nbytes = weight_bytes(model)
        dtype = next(model.parameters()).dtype
        shape = projection_shape(model.config)
        small_ops, ops = operators(
            hidden=shape[0],
            heads=int(model.config.num_attention_heads),
            device=device,
            dtype=dtype,
        )
        copies = copier(copy_bytes=nbytes, device=device, copies_per_sample=1)
        name = str(dtype).removeprefix("torch.")
        [multiply] = matmuls(shape=shape, dtypes=(dtype,), rows=(rows,), device=device).values()
        return cls(
            points={COPY: copies, OPERATOR: small_ops, COMPUTE: multiply},
            moved_bytes=2 * nbytes,
            ops_per_call=ops,
            dtype=name,
            rows=rows,
            flops=matmul_flops(rows, shape),
        )

    def bandwidth(self, sweep: Sweep) -> Rate:
        """Bytes per second the copy moved in the sweep's rounds, with its 95 % range."""
        copy = sweep.points[COPY]
        return Rate(self.moved_bytes / copy.median_s, self.moved_bytes / copy.high_s, self.moved_bytes / copy.low_s)

    def operator(self, sweep: Sweep) -> Rate:
        """Seconds per operator the probe took in the sweep's rounds, with its 95 % range."""
        per_op = sweep.points[OPERATOR].scaled(1 / self.ops_per_call)
        return Rate(per_op.median_s, per_op.low_s, per_op.high_s)

    def compute(self, sweep: Sweep) -> Rate:
        """FLOP/s the multiply reached in the sweep's rounds, with its 95 % range."""
        est = sweep.points[COMPUTE]
        return Rate(self.flops / est.median_s, self.flops / est.high_s, self.flops / est.low_s)

    def roofline(self, sweep: Sweep, calibrated: Roofline) -> Roofline:
        """``calibrated`` with its bandwidth and its fixed cost per operator from the rounds,
        and its compute ceilings scaled by the multiply's rate in the rounds over the
        calibration's at the same shape (each end of a ceiling's range by the same end
        of the rounds' rate)."""
        terms = replace(calibrated, bandwidth=self.bandwidth(sweep), dispatch=self.operator(sweep))
        measured = dict(calibrated.ceilings.get(self.dtype, ()))
        if self.rows not in measured:
            return terms  # a calibration that did not probe this shape: its ceilings as they are
        now, then = self.compute(sweep), measured[self.rows]
        k = (now.low / then.value, now.value / then.value, now.high / then.value)

        def scaled(rate: Rate) -> Rate:
            return Rate(rate.value * k[1], rate.low * k[0], rate.high * k[2])

        ceilings = {d: tuple((r, scaled(rate)) for r, rate in points) for d, points in calibrated.ceilings.items()}
        return replace(terms, ceilings=ceilings)

    def values(self, stem: str, sweep: Sweep) -> dict[str, float]:
        """The bandwidth (GB/s), the cost per operator (µs) and the multiply's rate
        (GFLOP/s) the rounds gave, each with its 95 % range, named as ``value_names(stem)``."""
        bw, op, mm = self.bandwidth(sweep), self.operator(sweep), self.compute(sweep)
        numbers = (
            *(x / 1e9 for x in (bw.value, bw.low, bw.high)),
            *(x * 1e6 for x in (op.value, op.low, op.high)),
            *(x / 1e9 for x in (mm.value, mm.low, mm.high)),
        )
        return dict(zip(value_names(stem), numbers, strict=True))


def declared(stem: str, sweep: str) -> tuple:
    """The declarations of ``RoundProbes.values(stem, ...)`` for an experiment's VALUES;
    ``sweep`` names the sweep in their descriptions ("the decode sweep")."""
    from sitedata.intervals import interval_values

    return (
        *interval_values(
            f"{stem}_gb_s", "GB/s", description=f"the copy bandwidth in {sweep}'s own rounds, which its predictions use"
        ),
        *interval_values(
            f"{stem}_operator_us",
            "µs",
            description=f"the cost per operator in {sweep}'s own rounds, which its predictions use",
        ),
        *interval_values(
            f"{stem}_gflop_s",
            "GFLOP/s",
            description=f"the largest multiply's rate in {sweep}'s own rounds, which scales its compute ceilings",
        ),
    )


def value_names(stem: str) -> tuple[str, ...]:
    """``<stem>_gb_s``, ``<stem>_operator_us`` and ``<stem>_gflop_s``, each followed by its
    bounds' names."""
    names = (f"{stem}_gb_s", f"{stem}_operator_us", f"{stem}_gflop_s")
    return tuple(n for name in names for n in (name, *interval_names(name)[:2]))


def measured(points: dict) -> dict[object, Estimate]:
    """A sweep's points without the probes: the steps it was run for."""
    return {k: v for k, v in points.items() if k not in PROBES}
