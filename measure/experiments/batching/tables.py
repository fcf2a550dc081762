"""What §4 writes (``site_data/batching/``): its tables, declared once (the simulations':
sim_tables.py; its values: values.py)."""

from measure.experiments.batching.sim_tables import ARRIVAL_RATIOS, POLICY_RATIOS, SIMULATED, WORKLOAD
from measure.lab.prediction import prediction_columns
from sitedata.policies import EXACT_ON_DEVICE, EXACT_ON_MACHINE, TIMING
from sitedata.schema import Column, Table, derived_columns, interval_columns

__all__ = ["ARRIVAL_RATIOS", "POLICY_RATIOS", "TABLES"]

# Whether a batch ran out of memory is this machine's memory, the same on every rerun here
# (EXACT_ON_MACHINE). What timings chose (the knee, where the sweep stops) may move with
# timing noise even on this machine, so it is compared only when timings are (TIMING).
# Every timing is a median with its 95 % interval and sample count (interval_columns); a
# ratio of two points of one sweep, the median of their ratios round by round with its
# 95 % interval (measure/lab/medians.py). Each timed step has its prediction by the run's
# roofline beside it (prediction_columns, measure/lab/prediction.py), from what the step
# did, counted (measure/lab/step_counts.py: bytes in the run's dtype, EXACT_ON_DEVICE).

_ARITHMETIC = (
    Column("achieved_gflop_s", "GFLOP/s", "FLOPs / step", policy=TIMING),
    Column("ceiling_gflop_s", "GFLOP/s", "ceiling at as many rows", policy=TIMING),
)

TABLES = (
    Table(
        "sweep",
        "One decode step for B requests, each with a {cache_tokens}-token cache",
        (
            Column("batch", "requests", "batch B"),
            Column("cache_tokens", "tokens", "cache per request"),
            Column("status", policy=EXACT_ON_MACHINE, words=True),
            *interval_columns("step_ms", "ms", "step latency"),
            Column("throughput_tok_s", "tokens/s", "throughput", policy=TIMING),
            Column("throughput_gain", "x", "throughput vs B = 1", policy=TIMING),
            Column("latency_factor", "x", "latency vs B = 1", policy=TIMING),
            Column("floor_ms", "ms", "floor: weights and caches / bandwidth", policy=TIMING),
            *derived_columns("fraction_of_floor", "fraction", "floor / step"),
            *interval_columns("compiled_step_ms", "ms", "compiled step"),
            Column("compiled_throughput_tok_s", "tokens/s", "compiled throughput", policy=TIMING),
            *derived_columns("compiled_fraction_of_floor", "fraction", "compiled: floor / step"),
            *derived_columns("compiled_speedup", "x", "eager step / compiled step"),
            Column("cache_bytes", "bytes", "cache read and copied", policy=EXACT_ON_DEVICE),
            *_ARITHMETIC,
            *prediction_columns("step"),
            *prediction_columns("compiled_step", "compiled"),
        ),
        description=(
            "One decode step for B requests at once, each holding a cache of the same length, every batch "
            "eager and compiled interleaved in one sweep (a batch past the chapter's sizes in a sweep of its "
            "own): step latency and throughput against B = 1, the floor (the weights and the B caches over "
            "the run's one bandwidth, the calibration's) and the same step compiled. Beside each, what the "
            "eager step did, counted while it ran (its FLOPs, its operators, the bytes of the weights and of "
            "the caches its attention read and its appends copied), the FLOP/s it reached against the "
            "ceiling of a multiply of B rows, and its time predicted by the run's roofline, with measured "
            "over predicted. A batch that runs out of memory is recorded as such and ends the sweep; past "
            "the chapter's sizes, the timings decide where it stops."
        ),
        length="timing",  # past the chapter's sizes, the timings decide where the sweep stops
    ),
    Table(
        "growths",
        "Each growth of the batch: what it multiplied latency and throughput by",
        (
            Column("from_batch", "requests", "from B"),
            Column("batch", "requests", "to B"),
            *derived_columns("slowdown", "x", "latency: step at B / step before"),
            *derived_columns("gain", "x", "throughput: at B / before"),
        ),
        description=(
            "Each measured batch against the one before it: how much slower its step was, the ratio of the "
            "two steps paired round by round where both are points of one sweep (unpaired, the ratio of the "
            "medians with the range their intervals give, for a batch measured in a sweep of its own), and "
            "the throughput factor that leaves, the growth of the batch over the slowdown."
        ),
        length="timing",
    ),
    Table(
        "step_costs",
        "Measured step cost at each occupancy ({cache_tokens}-token caches): the simulations' input",
        (
            Column("occupancy", "requests", "requests in the step"),
            *interval_columns("step_ms", "ms", "step"),
            *derived_columns("vs_previous", "x", "step / step with one fewer"),
            *prediction_columns("step"),
        ),
        description=(
            "The decode step at every occupancy from one request to the number of slots, from the sweep's "
            "interleaved samples: the step costs the simulations use (the medians; each round's samples for "
            "the ratios' ranges), each against the step with one request fewer (paired round by round), "
            "with its prediction by the run's roofline."
        ),
    ),
    Table(
        "breakdown",
        "A decode step of B requests against a prefill of as many tokens, profiled: self time by operator group",
        (
            Column("pass", words=True),
            Column("batch", "requests", "requests"),
            Column("tokens", "tokens", "tokens per request"),
            Column("part", words=True),
            Column("calls", "", "records per pass", policy=EXACT_ON_MACHINE),
            *interval_columns("self_ms", "ms", "self time"),
            Column("share", "fraction", "of the profiled pass", policy=TIMING),
        ),
        description=(
            "The eager decode step at B = 1 and at a larger batch, and a prefill of as many tokens as that "
            "batch has requests (the same weight arithmetic: as many rows through every matrix), profiled "
            "side by side in one interleaved sweep: every operator's self time summed by group, and what the "
            "profiled pass's wall time holds beyond them."
        ),
    ),
    *WORKLOAD,
    *SIMULATED[:1],
    Table(
        "prefill_costs",
        "One prefill of P prompt tokens, alone: the price of admitting a request",
        (
            Column("prompt_tokens", "tokens", "prompt P"),
            *interval_columns("prefill_ms", "ms", "prefill"),
            *_ARITHMETIC,
            *prediction_columns("prefill"),
        ),
        description=(
            "One prefill of P prompt tokens, alone, the lengths interleaved: the price of admitting a "
            "request, which the simulation of arrivals uses, with the FLOP/s it reached against the ceiling "
            "of a multiply of P rows and its prediction by the run's roofline."
        ),
    ),
    *SIMULATED[1:],
)
