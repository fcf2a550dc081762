"""One calibration per run: the machine measured once at the start of a run and once at
its end, under a run id, so that every experiment's numbers carry the state of the
machine they were taken on, and the change between the two says how far it drifted.

Two quantities, sampled together by ``sampling.interleaved`` (one sweep of two points,
each with its 95 % interval of the median):

* the copy bandwidth: ``bandwidth.copier``, a buffer four times the last-level cache
  (at least 256 MiB on a CPU, 1 GiB on a GPU) copied ``COPIES`` times per sample; a
  copy moves twice its bytes. Every floor on every page is weight bytes over this run's
  one bandwidth (``ctx.calibration.bandwidth_bytes_per_s``);
* a reference step: the model's eager decode step, batch 1, against a random cache of
  ``CACHE_TOKENS`` tokens cut back before each sample (untimed): the same work at every
  calibration of a model, so that a change is the machine's;
* the probes of the machine's roofline (``measure/lab/machine_probes.py``), which run no
  model code: a streaming read of the copy's buffer, matrix multiplies of the model's
  projection shape at each row count in each dtype the experiments time, a trivial
  operator's fixed cost, and an operator's fixed cost in eager module code (the one the
  roofline charges a step per operator). ``Calibration.roofline`` is the model they give
  (``measure/lab/roofline.py``); the drift gate sets two runs' timings against them.

On a GPU both are read from CUDA events (the device's clock), as the bandwidth probe
always was. Torch is imported inside the functions that measure: the folder's
declarations (``measure/calibration_folder.py``) and ``DRIFT_LIMIT`` are read without it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from measure.lab.machine_probes import DISPATCH_CALLS, DISPATCH_CALLS_SMOKE, OPERATOR_LAYERS, ROWS, ROWS_SMOKE
from measure.lab.roofline import Rate, Roofline

if TYPE_CHECKING:
    import torch

    from measure.lab.medians import Estimate

# Past this change of the reference step or of the bandwidth between a run's start and
# end, the run drifted and its timing pages say so. Two ±3 % intervals (the target) that
# still overlap can be at most 6 % apart; 10 % is beyond that, and below the smallest
# effect a timing page draws a conclusion from (issue 23: a 19 % rise of the decode step).
DRIFT_LIMIT = 0.10
# The smallest effect a timing sentence calls a difference: two timings whose ratio's
# interval lies within ±5 % are "practically the same", one wholly beyond it "apart", one
# that straddles the edge "cannot tell" (the claims' ``same``, ``exceeds``, ``undercuts``).
# Five per cent is above what two runs on one machine disagree by when both are calm
# (their intervals are about ±2 to ±3 % wide) and below every effect a page explains.
MARGIN = 0.05
# How far measured and predicted may differ before a page says the roofline does not
# explain a step: measured over predicted wholly within [1 / 1.25, 1.25]. A roofline
# predicts a floor from three terms that overlap in a real step (a kernel streams and
# computes at once; the small operators' work hides partly behind the large ones'), and
# its ceilings come from probes of other shapes than the step's own: a quarter either
# way is within what that leaves unmodelled, and an unmodelled cost larger than that
# (Python between operators, a kernel far from its ceiling) is the page's to name.
MODEL_BAND = 0.25
TARGET = 0.03  # the relative half-width of each interval, as every timing of a run asks
CACHE_TOKENS = 16  # the reference step's context: short, so the step is the weights' read
# Copies per bandwidth sample: on a GPU four, so that the events' and the launch's own
# cost is spread over them (a 1 GiB copy takes about half a millisecond on an H200); on a
# CPU one, since a copy of 256 MiB or more takes milliseconds, and a sample more is worth
# more to the interval than a longer one.
COPIES = {"cpu": 1, "cuda": 4}
# per calibration: start and end together stay under 12 s on two CPU cores (the roofline's
# 25 probes beside the copy and the step take about 40 ms a round there)
BUDGET_S = 4.0
SMOKE_BUDGET_S = 0.3  # the smoke profile (tests) times the code path, not the machine
MIN_COPY_BYTES = {"cpu": 256 << 20, "cuda": 1 << 30}  # when the cache size cannot be read
SMOKE_COPY_BYTES = 4 << 20
_SYS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


@dataclass(frozen=True)
class Plan:
    """How one calibration samples: the parameters its folder's meta.json records."""

    copy_bytes: int
    budget_s: float
    copies_per_sample: int
    target: float = TARGET
    cache_tokens: int = CACHE_TOKENS
    rows: tuple[int, ...] = ROWS  # the roofline's matmul probes, one per row count and dtype
    dispatch_calls: int = DISPATCH_CALLS
    operator_layers: int = OPERATOR_LAYERS  # layers of small operators per call of that probe


def last_level_cache_bytes(root: Path = _SYS_CACHE) -> int | None:
    """The largest cache level's size from sysfs (``index*/level`` and ``size``), or None."""
    best: tuple[int, int] | None = None
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit() and (best is None or level > best[0]):
            best = (level, int(digits) * scale)
    return best[1] if best else None


def plan(profile: str, device: torch.device) -> Plan:
    """Four times the last-level cache (so the copy streams from memory), at least the
    minimum of the device type; the smoke profile a small buffer and budget."""
    copies = COPIES.get(device.type, COPIES["cpu"])
    if profile == "smoke":
        return Plan(
            copy_bytes=SMOKE_COPY_BYTES,
            budget_s=SMOKE_BUDGET_S,
            copies_per_sample=copies,
            rows=ROWS_SMOKE,
            dispatch_calls=DISPATCH_CALLS_SMOKE,
            operator_layers=1,
        )
    if device.type == "cuda":
        import torch

        cache = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or None
    else:
        cache = last_level_cache_bytes()
    floor = MIN_COPY_BYTES.get(device.type, MIN_COPY_BYTES["cpu"])
    return Plan(copy_bytes=max(floor, 4 * cache if cache else 0), budget_s=BUDGET_S, copies_per_sample=copies)


def new_run_id(now: datetime | None = None) -> str:
    """``<UTC date and time>-<8 hex>``, e.g. ``20260512T093015Z-1f2e3d4c``: sorts by time."""
    return f"{(now or datetime.now(UTC)):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class Calibration:
    """One calibration of a run: at its start (``Context.calibration``) or its end."""

    run_id: str
    moment: str  # "start" or "end"
    copy_bytes: int
    copy: Estimate  # seconds per copy of copy_bytes
    step: Estimate  # seconds per reference step
    sweep: dict  # Sweep.describe(): seed, rounds, seconds, budget, points met
    seconds: float  # the whole calibration, buffers and cache made included
    read: Estimate | None = None  # seconds per streaming read of copy_bytes
    dispatch: Estimate | None = None  # seconds per trivial operator
    operator: Estimate | None = None  # seconds per operator in eager module code
    matmuls: dict | None = None  # (dtype, rows) -> seconds per multiply of the projection shape
    shape: tuple[int, int] | None = None  # the projection shape (hidden, intermediate)

    @property
    def moved_bytes(self) -> int:
        return 2 * self.copy_bytes  # read once, written once

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.moved_bytes / self.copy.median_s

    @property
    def bandwidth_low_bytes_per_s(self) -> float:
        return self.moved_bytes / self.copy.high_s  # the slowest copy of the interval

    @property
    def bandwidth_high_bytes_per_s(self) -> float:
        return self.moved_bytes / self.copy.low_s

    def roofline(self) -> Roofline:
        """The machine's model these probes give (``measure/lab/roofline.py``)."""
        from measure.lab.machine_probes import matmul_flops

        def rate(amount: float, est: Estimate) -> Rate:
            return Rate(amount / est.median_s, amount / est.high_s, amount / est.low_s)

        ceilings: dict[str, list] = {}
        for (dtype, rows), est in sorted((self.matmuls or {}).items()):
            ceilings.setdefault(dtype, []).append((rows, rate(matmul_flops(rows, self.shape), est)))

        def seconds(est: Estimate) -> Rate:
            return Rate(est.median_s, est.low_s, est.high_s)

        trivial = seconds(self.dispatch)
        return Roofline(
            bandwidth=rate(self.moved_bytes, self.copy),
            read_bandwidth=rate(self.copy_bytes, self.read),
            ceilings={d: tuple(points) for d, points in ceilings.items()},
            # a calibration taken before the operator probe existed charges the trivial one
            dispatch=seconds(self.operator) if self.operator is not None else trivial,
            trivial=trivial,
        )

    def floor_s(self, moved_bytes: float) -> tuple[float, float, float]:
        """The time to move ``moved_bytes`` at this run's bandwidth, in seconds, and its
        95 % range (at the high and at the low end of the bandwidth's interval): every
        floor on every page is this."""
        return (
            moved_bytes / self.bandwidth_bytes_per_s,
            moved_bytes / self.bandwidth_high_bytes_per_s,
            moved_bytes / self.bandwidth_low_bytes_per_s,
        )

    @property
    def met(self) -> bool:
        return self.copy.met and self.step.met

    def provenance(self) -> dict:
        """The ``run`` of every experiment's meta.json (the start calibration)."""
        return {
            "id": self.run_id,
            "bandwidth_gb_s": self.bandwidth_bytes_per_s / 1e9,
            "bandwidth_low_gb_s": self.bandwidth_low_bytes_per_s / 1e9,
            "bandwidth_high_gb_s": self.bandwidth_high_bytes_per_s / 1e9,
            "reference_step_ms": self.step.median_ms,
            "reference_step_low_ms": self.step.low_ms,
            "reference_step_high_ms": self.step.high_ms,
        }

    def describe(self) -> str:
        bw = f"{self.bandwidth_bytes_per_s / 1e9:.1f} GB/s [{self.bandwidth_low_bytes_per_s / 1e9:.1f}, "
        bw += f"{self.bandwidth_high_bytes_per_s / 1e9:.1f}] ({self.copy.n} samples)"
        step = f"{self.step.median_ms:.2f} ms [{self.step.low_ms:.2f}, {self.step.high_ms:.2f}] ({self.step.n} samples)"
        missed = "" if self.met else f"; wider than ±{self.step.target:.0%}: " + ", ".join(self.sweep["missed"])
        return f"copy bandwidth {bw}, reference step {step}, in {self.seconds:.1f} s{missed}"


def drift(start: Calibration, end: Calibration | None) -> dict:
    """end / start - 1 of the reference step and of the bandwidth, and whether either is
    past ``DRIFT_LIMIT``; None for each where the end was not measured."""
    if end is None:
        return {"step_drift": None, "bandwidth_drift": None, "drifted": None}
    step = end.step.median_s / start.step.median_s - 1
    bandwidth = end.bandwidth_bytes_per_s / start.bandwidth_bytes_per_s - 1
    return {"step_drift": step, "bandwidth_drift": bandwidth, "drifted": max(abs(step), abs(bandwidth)) > DRIFT_LIMIT}


def measure(model, device: torch.device, *, run_id: str, plan: Plan, moment: str = "start") -> Calibration:
    """The copy bandwidth, the reference step and the roofline's probes, interleaved
    (seed 0 at the start, 1 at the end)."""
    import torch

    from measure.lab import machine_probes as probes
    from measure.lab.bandwidth import clocked, copier
    from measure.lab.generation import crop_cache, decode_step, random_cache
    from measure.lab.sampling import interleaved

    t0 = time.perf_counter()
    copies = copier(copy_bytes=plan.copy_bytes, device=device, copies_per_sample=plan.copies_per_sample)
    cache = random_cache(model, batch=1, tokens=plan.cache_tokens)
    token = torch.ones((1, 1), dtype=torch.long, device=device)
    shape = probes.projection_shape(model.config)
    dtypes = probes.probed_dtypes(next(model.parameters()).dtype)
    matmuls = probes.matmuls(shape=shape, dtypes=dtypes, rows=plan.rows, device=device)
    heads = int(model.config.num_attention_heads)
    small_ops, ops_per_call = probes.operators(
        hidden=shape[0], heads=heads, device=device, dtype=dtypes[0], layers=plan.operator_layers
    )

    def before(key) -> None:
        if key == "step":
            crop_cache(cache, plan.cache_tokens)  # the previous step grew it by one

    points = {
        "copy": copies,
        "read": probes.reader(copies.source),
        "dispatch": probes.dispatcher(calls=plan.dispatch_calls, device=device),
        "operator": small_ops,
        "step": lambda: decode_step(model, token, cache),
        **matmuls,
    }
    sweep = interleaved(
        points,
        device=device,
        seed=0 if moment == "start" else 1,
        target=plan.target,
        budget_s=plan.budget_s,
        warmup=1,
        before=before,
        min_sample_s=probes.MIN_SAMPLE_S,
        timer=(lambda fn: clocked(fn, device)) if device.type == "cuda" else None,
    )
    return Calibration(
        run_id=run_id,
        moment=moment,
        copy_bytes=plan.copy_bytes,
        copy=sweep.points["copy"].scaled(1 / plan.copies_per_sample),
        step=sweep.points["step"],
        read=sweep.points["read"],
        dispatch=sweep.points["dispatch"].scaled(1 / plan.dispatch_calls),
        operator=sweep.points["operator"].scaled(1 / ops_per_call),
        matmuls={key: sweep.points[key] for key in matmuls},
        shape=shape,
        sweep=sweep.describe(),
        seconds=time.perf_counter() - t0,
    )
