"""What §4 writes (``site_data/batching/``) besides its tables: its values, declared once."""

from measure.experiments.batching.config import SLOTS
from measure.experiments.batching.tables import POLICY_RATIOS
from sitedata.policies import EXACT_ON_DEVICE, EXACT_ON_MACHINE, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Value

VALUES = (
    Value("knee_found", description="a knee lies inside the sweep", policy=TIMING),
    Value(
        "knee_batch",
        "requests",
        description="the knee, or the largest batch measured when there is none",
        policy=TIMING,
    ),
    Value("knee_next_batch", "requests", description="the batch size after the knee", policy=TIMING),
    Value("knee_next_gain", "x", description="throughput factor from the knee to the next batch size", policy=TIMING),
    Value(
        "knee_next_slowdown", "x", description="step-time factor from the knee to the next batch size", policy=TIMING
    ),
    # Where the sweep ends is chosen by its timings once it is extended past its sizes.
    Value("largest_measured_batch", "requests", policy=TIMING),
    Value("out_of_memory", policy=EXACT_ON_MACHINE),
    Value("sweep_samples_ms", "ms", policy=TIMING),
    # What the eager step does, counted while it runs (measure/lab/step_counts.py).
    Value("ops_per_step", "operators", description="operators one eager step dispatches (B = 1)"),
    Value(
        "cache_bytes_per_request",
        "bytes",
        description="cache bytes a step reads and copies per request (counted at each batch; the largest)",
        policy=EXACT_ON_DEVICE,
    ),
    Value(
        "compute_bound_from",
        "requests",
        description="the smallest batch whose predicted compute term exceeds its memory term",
        policy=TIMING,
    ),
    # The profiled comparison (decomposition.breakdown).
    Value("profiled_batch", "requests"),
    *(
        Value(name, "x", description=what, policy=TIMING)
        for stem, what in (
            ("decode_over_prefill", "the step at the profiled batch / a prefill of as many tokens (unprofiled)"),
            ("matmul_decode_over_prefill", "their matrix multiplies' self time, paired round by round"),
        )
        for name in (stem, f"{stem}_low", f"{stem}_high")
    ),
    *(
        Value(name, "fraction", description="of the excess over the prefill: attention and appends", policy=TIMING)
        for name in ("gap_per_request_share", "gap_per_request_share_low", "gap_per_request_share_high")
    ),
    Value("bandwidth_gb_s", "GB/s", description="the run's one bandwidth, its calibration's", policy=TIMING),
    Value("weight_bytes", "bytes", policy=EXACT_ON_DEVICE),
    Value("fraction_smallest_batch", "fraction", description="floor / step at B = 1", policy=TIMING),
    Value(
        "fraction_largest_batch", "fraction", description="floor / step at the largest batch measured", policy=TIMING
    ),
    # Whether the compiler runs depends on the machine (a C++ compiler for the CPU backend).
    Value("compiled_available", description="torch.compile ran on this machine", policy=EXACT_ON_MACHINE),
    Value(
        "compiled_method",
        description="how the compiled step was built, or why it was not",
        policy=EXACT_ON_MACHINE,
        words=True,
    ),
    Value("compiled_fraction_smallest_batch", "fraction", policy=TIMING),
    Value("compiled_fraction_largest_batch", "fraction", policy=TIMING),
    Value("compiled_speedup_best", "x", description="the largest speed-up over the batches measured", policy=TIMING),
    Value("compiled_speedup_worst", "x", description="the smallest speed-up over the batches measured", policy=TIMING),
    Value("compiled_samples_ms", "ms", policy=TIMING),
    Value("requests", "requests"),
    Value("slots", "slots"),
    Value("output_median", "tokens", policy=NUMERIC_ANYWHERE),
    Value("output_max", "tokens"),
    Value("output_min", "tokens"),
    Value("output_total", "tokens"),
    Value(
        "output_top_share",
        "fraction",
        description="share of all output tokens in the longest tenth of the requests",
        policy=NUMERIC_ANYWHERE,
    ),
    Value("throughput_ratio", "x", description="continuous throughput / static throughput", policy=TIMING),
    Value("mean_latency_ratio", "x", description="static mean latency / continuous mean latency", policy=TIMING),
    Value("p95_latency_ratio", "x", description="static p95 latency / continuous p95 latency", policy=TIMING),
    Value("p99_latency_ratio", "x", description="static p99 latency / continuous p99 latency", policy=TIMING),
    *(
        Value(
            f"{name}_{bound}",
            "x",
            description=f"{which} of {name} over the medians and each round's costs",
            policy=TIMING,
        )  # fmt: skip
        for name in POLICY_RATIOS
        for bound, which in (("low", "the smallest"), ("high", "the largest"))
    ),
    Value("sweep_stop_reason", description="why the extended sweep stopped", policy=TIMING, words=True),
    Value("sweep_extended", description="the sweep went past the published batch sizes", policy=TIMING),
    Value("sweep_extension_s", "s", description="time spent measuring past the published sizes", policy=TIMING),
    Value("sweep_cap", "requests", description="the largest batch the extension may try"),
    Value("sweep_budget_s", "s", description="the time the extension may take"),
    Value("knee_confirmations", "growths", description="growths past the knee that establish it"),
    Value(
        "capacity_req_s",
        "requests/s",
        description="continuous batching with every slot busy: 1 / (prefill + (mean output - 1) x full step / slots)",
        policy=TIMING,
    ),
    Value(
        "static_capacity_req_s",
        "requests/s",
        description="static batching with requests always waiting: full groups of consecutive requests",
        policy=TIMING,
    ),
    *(
        Value(name, "x", description=f"continuous capacity / static capacity{what}", policy=TIMING)
        for name, what in (
            ("capacity_ratio", ""),
            ("capacity_ratio_low", ", the smallest over the medians and each round's costs"),
            ("capacity_ratio_high", ", the largest over the medians and each round's costs"),
        )
    ),
    Value(
        "simulated_rounds",
        "rounds",
        description="rounds of measured costs each simulation was run again with (as many as the sweeps ran)",
        policy=TIMING,
    ),
    Value("prefill_ms", "ms", description="one prefill of the workload's prompt", policy=TIMING),
    Value("arrival_seed", description="seed of the Poisson arrivals"),
    Value("load_lowest", "fraction"),
    Value("load_highest", "fraction"),
    Value("padding_slot_steps", "slot-steps", description="slot-steps static batching spent computing padding"),
    Value("step_cost_ratio", "x", description=f"a step with {SLOTS} requests / a step with one", policy=TIMING),
    Value("stored_within_reserved", description="at every step, under every allocator"),
    Value("kv_bytes_per_token", "bytes", description="read from the sweep's cache", policy=EXACT_ON_DEVICE),
    Value("max_context_tokens", "tokens"),
    Value("longest_request_tokens", "tokens"),
    Value("prompt_tokens", "tokens"),
    Value("shared_prefix_tokens", "tokens"),
    Value("block_tokens", "tokens"),
    Value("contiguous_waste", "fraction", policy=NUMERIC_ANYWHERE),
    Value("paged_waste", "fraction", policy=NUMERIC_ANYWHERE),
    Value("shared_waste", "fraction", policy=NUMERIC_ANYWHERE),
    Value("shared_peak_vs_contiguous", "fraction", policy=NUMERIC_ANYWHERE),
    Value("paged_peak_vs_contiguous", "fraction", policy=NUMERIC_ANYWHERE),
)
