"""How a column or a value is compared with a rerun, and where it reproduces: the named
policies, each defined once here with when to use it. A declaration names one
(``Column("step_ms", "ms", policy=TIMING)``); meta.json records its two parts per column
and value, ``compare`` and ``scope``, the form the drift gate and every reader use.

How to compare (``compare``):

* ``exact``    equal as written: bytes, counts, token ids, names;
* ``numeric``  within a small relative tolerance: float results of a fixed method;
* ``timing``   against the measured spread: times, memory read from the OS.

Where it reproduces (``scope``):

* ``any``      on any machine: formulas, counts, weight statistics, fp32 reference tokens;
* ``device``   on the same device type and dtype: float results of the model's kernels;
* ``machine``  only on the same machine (its device id): timings, OS memory, results of
  kernels that differ by CPU model, anything chosen by a timing;
* ``run``      nowhere but in the run that measured it: a record of that moment, such as
  the time a compiler spent (with or without a warm cache), shown but never compared.
"""

from __future__ import annotations

from dataclasses import dataclass

COMPARE = ("exact", "numeric", "timing")
SCOPES = ("any", "device", "machine", "run")


@dataclass(frozen=True)
class Policy:
    """A way to compare (one of COMPARE) and where it holds (one of SCOPES), by name."""

    name: str
    compare: str
    scope: str

    def __post_init__(self) -> None:
        if self.compare not in COMPARE or self.scope not in SCOPES:
            raise ValueError(f"policy {self.name}: compare in {COMPARE}, scope in {SCOPES}")

    def __repr__(self) -> str:
        return self.name


EXACT = Policy("EXACT", "exact", "any")
"""Equal on any machine: bytes and counts that follow from shapes and formulas, the run's
parameters, names and prompts, the facts a run states (a config's count, a file's size)."""

EXACT_ON_DEVICE = Policy("EXACT_ON_DEVICE", "exact", "device")
"""Equal on the same device type and dtype: bytes held in the run's dtype (fp16 on a GPU,
fp32 on a CPU), token ids and texts the model's float computation chooses, and what is
picked from its outputs (the top dimension, the worst matrix, a count of levels used)."""

EXACT_ON_MACHINE = Policy("EXACT_ON_MACHINE", "exact", "machine")
"""Equal on the same machine only: results of CPU-specific kernels (int8 kernels round
differently from one CPU model to another), whether a kernel or the compiler runs here,
and whether a batch fits in this machine's memory."""

NUMERIC = Policy("NUMERIC", "numeric", "device")
"""Within the numeric tolerance on the same device type and dtype: float results of the
model's kernels (perplexity, errors of a quantized matrix, probabilities, activations)."""

NUMERIC_ANYWHERE = Policy("NUMERIC_ANYWHERE", "numeric", "any")
"""Within the numeric tolerance on any machine: floats of pure arithmetic (formulas, the
seeded simulations, ratios of counts) and float parameters as given."""

NUMERIC_ON_MACHINE = Policy("NUMERIC_ON_MACHINE", "numeric", "machine")
"""Within the numeric tolerance on the same machine only: floats that follow from a
CPU-specific kernel's results (the acceptance of an int8 draft, a kernel's error)."""

TIMING = Policy("TIMING", "timing", "machine")
"""Against the measured spread, on the same machine only: times and rates, memory read
from the OS or the allocator, ratios of those, and anything chosen by a timing (the knee
of a sweep, the fastest variant: compared, as text equal, only where timings are)."""

RECORDED = Policy("RECORDED", "timing", "run")
"""Shown, never compared: a record of the run that measured it, which no rerun reproduces
(the seconds a compiler took depend on whether its cache was warm)."""

POLICIES = (EXACT, EXACT_ON_DEVICE, EXACT_ON_MACHINE, NUMERIC, NUMERIC_ANYWHERE, NUMERIC_ON_MACHINE, TIMING, RECORDED)


def named(compare: str, scope: str) -> Policy:
    """The named policy with these two parts (ValueError if there is none)."""
    for p in POLICIES:
        if (p.compare, p.scope) == (compare, scope):
            return p
    raise ValueError(f"no named policy compares {compare!r} in scope {scope!r}; see sitedata/policies.py")
