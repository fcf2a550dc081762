"""What §4's simulations write (``site_data/batching/``): their tables, declared once
(the timed tables: tables.py, which lists them all)."""

from sitedata.policies import EXACT_ON_DEVICE, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Column, Table, derived_columns

# The seeded workload's schedules and allocators are pure arithmetic (NUMERIC_ANYWHERE);
# their times come from the measured costs (TIMING). Bytes of the KV cache are the
# model's shape times the run's dtype, fp16 on a GPU and fp32 on a CPU (EXACT_ON_DEVICE).
# The ratios of the two policies come with the smallest and the largest of the ratio
# simulated once per round of the sweeps, with the costs that round measured.
POLICY_RATIOS = ("throughput_ratio", "mean_latency_ratio", "p95_latency_ratio", "p99_latency_ratio")
ARRIVAL_RATIOS = (
    "throughput_ratio",
    "mean_latency_ratio",
    "p50_latency_ratio",
    "p95_latency_ratio",
    "p99_latency_ratio",
    "mean_ttft_ratio",
)


# Mean and percentiles of the requests' latency, in the static and the arrivals tables alike.
_LATENCY_COLUMNS = tuple(
    Column(f"{k}_latency_ms", "ms", f"{k} latency", policy=TIMING) for k in ("mean", "p50", "p95", "p99")
)

WORKLOAD = (
    Table(
        "workload",
        "The workload: {requests} requests, output lengths drawn once (seed {workload_seed})",
        (
            Column("request"),
            Column("prompt_tokens", "tokens", "prompt"),
            Column("output_tokens", "tokens", "output"),
        ),
        description="The simulated workload: requests with skewed output lengths, one fixed seeded sample.",
    ),
)
SIMULATED = (
    Table(
        "policies",
        "Static vs continuous batching, {requests} requests on {slots} slots (simulated)",
        (
            Column("policy", words=True),
            Column("requests", "requests"),
            Column("slots", "slots"),
            Column("output_tokens", "tokens", "useful tokens"),
            Column("steps", "steps"),
            Column("slot_utilisation", "fraction", "slot utilisation", policy=NUMERIC_ANYWHERE),
            Column("mean_latency_steps", "steps", "mean latency in steps", policy=NUMERIC_ANYWHERE),
            Column("total_ms", "ms", "total time", policy=TIMING),
            Column("throughput_tok_s", "tokens/s", "throughput", policy=TIMING),
            *_LATENCY_COLUMNS,
        ),
        simulated=True,
        description=(
            "Static against continuous batching of the workload on the slots, simulated with the measured "
            "step costs: total time, throughput, latency percentiles, slot utilisation."
        ),
    ),
    Table(
        "arrivals",
        "Static vs continuous batching, {requests} requests arriving over time on {slots} slots (simulated)",
        (
            Column("load", "fraction", "load: rate / static capacity"),
            Column("rate_req_s", "requests/s", "arrival rate", policy=TIMING),
            Column("policy", words=True),
            Column("own_load", "fraction", "rate / this policy's capacity", policy=TIMING),
            Column("output_tokens", "tokens", "useful tokens"),
            Column("decode_steps", "steps", "decode steps", policy=TIMING),
            Column("slot_utilisation", "fraction", "slot utilisation", policy=TIMING),
            Column("total_ms", "ms", "total time", policy=TIMING),
            Column("throughput_tok_s", "tokens/s", "throughput", policy=TIMING),
            *_LATENCY_COLUMNS,
            Column("mean_ttft_ms", "ms", "mean time to first token", policy=TIMING),
            Column("p95_ttft_ms", "ms", "p95 time to first token", policy=TIMING),
        ),
        simulated=True,
        description=(
            "Static against continuous batching with the requests arriving over time at several loads, each a "
            "fraction of static batching's capacity, the lower of the two, so that both keep up (simulated): "
            "the rate against each policy's own capacity, throughput, latency percentiles and time to first "
            "token."
        ),
    ),
    Table(
        "arrival_ratios",
        "Continuous against static under arrivals, at each load",
        (
            Column("load", "fraction", "load: rate / static capacity"),
            Column("rate_req_s", "requests/s", "arrival rate", policy=TIMING),
            Column("continuous_load", "fraction", "rate / continuous capacity", policy=TIMING),
            *derived_columns("throughput_ratio", "x", "throughput: continuous / static"),
            *derived_columns("mean_latency_ratio", "x", "mean latency: static / continuous"),
            *derived_columns("p50_latency_ratio", "x", "p50: static / continuous"),
            *derived_columns("p95_latency_ratio", "x", "p95: static / continuous"),
            *derived_columns("p99_latency_ratio", "x", "p99: static / continuous"),
            *derived_columns("mean_ttft_ratio", "x", "mean time to first token: static / continuous"),
        ),
        simulated=True,
        description=(
            "Continuous against static batching under arrivals, at each load: the ratios of throughput, "
            "latencies and time to first token, simulated with the measured costs' medians; the range beside "
            "each ratio is the smallest and the largest of it simulated again once per round of the sweeps, "
            "with the costs that round measured (the step at every occupancy and a prefill), and at the "
            "medians."
        ),
    ),
    Table(
        "arrival_requests",
        "Every request under arrivals: when it came, its first token, its result",
        (
            Column("load", "fraction"),
            Column("policy", words=True),
            Column("request"),
            Column("slot", policy=TIMING),
            Column("arrival_ms", "ms", "arrives", policy=TIMING),
            Column("first_token_ms", "ms", "first token", policy=TIMING),
            Column("release_ms", "ms", "result returned", policy=TIMING),
            Column("ttft_ms", "ms", "time to first token", policy=TIMING),
            Column("latency_ms", "ms", "latency", policy=TIMING),
        ),
        simulated=True,
        description=(
            "Every request under arrivals, per load and policy: when it came, the slot it got, its first "
            "token and when its result was returned."
        ),
    ),
    Table(
        "timeline",
        "Who held which slot when (steps, and times from the measured step costs)",
        (
            Column("policy", words=True),
            Column("request"),
            Column("slot"),
            Column("output_tokens", "tokens", "output"),
            Column("start_step", "step", "starts"),
            Column("finish_step", "step", "last token after"),
            Column("release_step", "step", "slot freed after"),
            Column("start_ms", "ms", "starts", policy=TIMING),
            Column("finish_ms", "ms", "last token", policy=TIMING),
            Column("release_ms", "ms", "result returned", policy=TIMING),
        ),
        simulated=True,
        description=("Who held which slot when under each policy, in steps and in times from the measured step costs."),
    ),
    Table(
        "paged",
        "KV memory of the continuous schedule under three allocators (simulated)",
        (
            Column("scheme", label="allocator", words=True),
            Column("unit_tokens", "tokens", "allocation unit"),
            Column("peak_reserved_bytes", "bytes", "reserved, peak", policy=EXACT_ON_DEVICE),
            Column("peak_stored_bytes", "bytes", "holding tokens, peak", policy=EXACT_ON_DEVICE),
            Column("waste_at_peak", "fraction", "waste at peak", policy=NUMERIC_ANYWHERE),
            Column("waste", "fraction", "waste over the run", policy=NUMERIC_ANYWHERE),
            Column("peak_vs_contiguous", "fraction", "peak vs contiguous", policy=NUMERIC_ANYWHERE),
        ),
        description=(
            "The KV memory of the continuous schedule under three allocators (a contiguous reservation per "
            "request, fixed-size blocks with a block table, and blocks with a shared system prompt): reserved"
            " against stored bytes, the waste."
        ),
    ),
    Table(
        "memory_steps",
        "KV memory after every step of the continuous schedule",
        (
            Column("step", "step"),
            Column("context_bytes", "bytes", "contexts (unshared)", policy=EXACT_ON_DEVICE),
            Column("contiguous_reserved_bytes", "bytes", "contiguous: reserved", policy=EXACT_ON_DEVICE),
            Column("paged_reserved_bytes", "bytes", "paged: reserved", policy=EXACT_ON_DEVICE),
            Column("shared_reserved_bytes", "bytes", "paged + shared prefix: reserved", policy=EXACT_ON_DEVICE),
            Column("shared_stored_bytes", "bytes", "paged + shared prefix: stored", policy=EXACT_ON_DEVICE),
        ),
        description="The KV memory after every step of the continuous schedule, under each allocator.",
    ),
)
