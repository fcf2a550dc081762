"""What §2 writes beside its tables (``site_data/prefill_decode/``): its named values,
declared once."""

from measure.lab.prediction import step_values
from measure.lab.profiled import GROUPS
from measure.lab.roofline_in_rounds import declared
from sitedata.intervals import interval_values
from sitedata.policies import EXACT, EXACT_ON_DEVICE, EXACT_ON_MACHINE, NUMERIC_ANYWHERE, RECORDED, TIMING
from sitedata.schema import Value

_PER_DOUBLING = "decode step at flat_up_to over the smallest context, per doubling of the context, minus 1"

VALUES = (
    Value("split_prompt_tokens", "tokens"),
    Value("split_decode_steps", "steps"),
    Value("split_prefill_ms", "ms", policy=TIMING),
    Value("split_prefill_ms_per_token", "ms", policy=TIMING),
    Value("split_decode_ms_per_token", "ms", policy=TIMING),
    *interval_values("split_ratio", "x", description="a generated token costs this many prompt tokens"),
    Value(
        "split_ratio_predicted",
        "x",
        description="the roofline's predicted decode step over its predicted cost per prompt token",
        policy=TIMING,
    ),
    Value("split_step_min_ms", "ms", description="fastest step of the timed generations", policy=TIMING),
    Value("split_step_max_ms", "ms", description="slowest step of the timed generations", policy=TIMING),
    Value("split_step_samples_ms", "ms", description="every step of every timed generation", policy=TIMING),
    Value("ttft_smallest_ms", "ms", policy=TIMING),
    Value("ttft_largest_ms", "ms", policy=TIMING),
    Value("prompt_smallest", "tokens"),
    Value("prompt_largest", "tokens"),
    Value("prompt_before_largest", "tokens", description="the prompt length measured before the longest"),
    Value("ttft_growth", "x", description="time to first token at the longest prompt / at the shortest", policy=TIMING),
    *interval_values(
        "per_token_change",
        "x",
        description="cost per token at the longest prompt / at the one before it (the prefills paired round by round)",
    ),
    Value("prefill_samples_ms", "ms", description="every prefill's samples, in the order taken", policy=TIMING),
    Value("weight_bytes", "bytes", description="bytes of the model's parameters", policy=EXACT_ON_DEVICE),
    Value("weight_macs", "MAC", description="multiply-adds of every Linear layer for one token", policy=EXACT),
    Value("bandwidth_gb_s", "GB/s", description="the run's one bandwidth (its start calibration)", policy=TIMING),
    *(
        v
        for sweep in ("split", "prefill", "decode", "settings")
        for v in declared(f"{sweep}_round", f"the {sweep} sweep")
    ),
    *interval_values(
        "floor_ms",
        "ms",
        description="weight bytes / the run's bandwidth",
        bounds=("weight bytes / the bandwidth's interval, high", "weight bytes / the bandwidth's interval, low"),
    ),
    Value("cache_smallest", "tokens"),
    Value("cache_largest", "tokens"),
    Value("step_smallest_ms", "ms", policy=TIMING),
    Value("step_largest_ms", "ms", policy=TIMING),
    Value("tok_s_smallest", "tokens/s", policy=TIMING),
    Value("tok_s_largest", "tokens/s", policy=TIMING),
    Value("fraction_smallest", "fraction", policy=TIMING),
    Value("fraction_largest", "fraction", policy=TIMING),
    Value("flat_up_to", "tokens", description="the largest context measured up to the chapter's 1,024"),
    Value("flat_doublings", "doublings", description="log2(flat_up_to / smallest context)", policy=NUMERIC_ANYWHERE),
    Value(
        "flat_spread",
        "x",
        description="slowest / fastest median decode step for C up to flat_up_to (medians only: no interval)",
        policy=TIMING,
    ),
    *interval_values(
        "step_rise",
        "fraction",
        description="decode step at flat_up_to / at the smallest - 1",
        bounds=(
            "95 % interval of step_rise (paired round by round), low",
            "95 % interval of step_rise (paired round by round), high",
        ),
    ),
    *interval_values(
        "rise_per_doubling",
        "fraction",
        description=_PER_DOUBLING,
        bounds=("rise_per_doubling, low", "rise_per_doubling, high"),
    ),
    Value(
        "attention_added",
        "fraction",
        description="attention MACs added from the smallest context to flat_up_to / the step's MACs at the smallest",
        policy=NUMERIC_ANYWHERE,
    ),
    Value(
        "cache_bytes_added",
        "fraction",
        description="bytes the cache adds from the smallest context to flat_up_to / weights and cache at the smallest",
        policy=EXACT_ON_DEVICE,
    ),
    Value("step_growth", "x", description="decode step at the largest cache / at the smallest", policy=TIMING),
    *interval_values(
        "step_rise_predicted",
        "fraction",
        description=(
            "the roofline's prediction at flat_up_to / at the smallest - 1 (each end from one end of the bandwidth)"
        ),
    ),
    Value(
        "cache_share",
        "fraction",
        description="the cache's bytes per token / the weights' bytes",
        policy=EXACT_ON_DEVICE,
    ),
    Value(
        "cache_share_vs_chapter",
        "x",
        description="cache_share / the same for the chapter's model in fp16",
        policy=EXACT_ON_DEVICE,
    ),
    Value("decode_samples_ms", "ms", policy=TIMING),
    Value(
        "datasheet_card",
        description="the card of the GPU predictions this run's device is (empty: none, a CPU)",
        policy=EXACT_ON_MACHINE,
    ),
    Value(
        "datasheet_floor_ms",
        "ms",
        description="this run's weights over that card's datasheet bandwidth (empty: none)",
        policy=EXACT_ON_MACHINE,
    ),
    # Whether the compiler runs depends on the machine (a C++ compiler for the CPU backend).
    Value("compiled_available", description="torch.compile ran on this machine", policy=EXACT_ON_MACHINE),
    Value(
        "compiled_method",
        description="how the compiled step was built, or why it was not",
        policy=EXACT_ON_MACHINE,
        words=True,
    ),
    Value(
        "compile_s",
        "s",
        description="time spent compiling: each context's first call beyond a timed step",
        policy=RECORDED,
    ),
    Value("compiled_fraction_smallest", "fraction", policy=TIMING),
    Value("compiled_fraction_largest", "fraction", policy=TIMING),
    Value("compiled_speedup_smallest", "x", policy=TIMING),
    Value("compiled_speedup_largest", "x", policy=TIMING),
    Value("compiled_speedup_best", "x", description="the largest speed-up over the contexts measured", policy=TIMING),
    Value("compiled_speedup_worst", "x", description="the smallest speed-up over the contexts measured", policy=TIMING),
    Value("compiled_worst_cache", "tokens", description="the context of the smallest speed-up", policy=TIMING),
    Value("compiled_samples_ms", "ms", policy=TIMING),
    # Where the step stands (measure/experiments/prefill_decode/regime.py): the eager step at
    # the smallest context between its three bounds.
    Value("ops_per_step", "operators", description="ATen operators one eager step dispatches", policy=EXACT_ON_DEVICE),
    Value("ops_per_prefill", "operators", description="ATen operators one prefill dispatches", policy=EXACT_ON_DEVICE),
    *interval_values("operator_us", "µs", description="the run's fixed cost per operator (eager module code)"),
    *interval_values("trivial_us", "µs", description="a trivial operator (torch.add of two 1-element tensors)"),
    *interval_values("fixed_ms", "ms", description="ops_per_step x operator_us: the step's fixed term"),
    Value("fixed_share", "fraction", description="fixed_ms / the eager step", policy=TIMING),
    Value("step_flops", "FLOP", description="FLOPs of the decode step at the smallest context"),
    *interval_values("arithmetic_ms", "ms", description="step_flops at the run's one-row compute ceiling"),
    Value("arithmetic_share", "fraction", description="arithmetic_ms / the eager step", policy=TIMING),
    *interval_values("one_row_gflops", "GFLOP/s", description="the run's compute ceiling at one row, the run's dtype"),
    *interval_values("peak_gflops", "GFLOP/s", description="the run's highest compute ceiling, the run's dtype"),
    *interval_values("balance_flops_per_byte", "FLOP/byte", description="peak_gflops / the run's bandwidth"),
    Value(
        "decode_flops_per_byte",
        "FLOP/byte",
        description="the step's FLOPs per byte read, smallest context",
        policy=EXACT_ON_DEVICE,
    ),
    Value("projection_bytes", "bytes", description="bytes of the Linear layers' weights", policy=EXACT_ON_DEVICE),
    *interval_values(
        "matmul_read_gb_s",
        "GB/s",
        description="projection_bytes / the matrix multiplies' profiled time",
        bounds=("", ""),
    ),
    Value("matmul_read_share", "fraction", description="matmul_read_gb_s / the run's bandwidth", policy=TIMING),
    Value("profiled_step_ms", "ms", description="the step under the profiler, smallest context", policy=TIMING),
    *(
        Value(f"breakdown_{g}_share", "fraction", description=f"{words}: share of the profiled step", policy=TIMING)
        for g, words in GROUPS.items()
        if g != "step"
    ),
    Value("settings_cache_tokens", "tokens", description="the context of the settings' step"),
    Value("settings_best_compiled", description="the setting closest to its floor is compiled", policy=TIMING),
    Value("settings_best_dtype", description="the dtype of the setting closest to its floor", policy=TIMING),
    Value(
        "settings_best_threads", "threads", description="the threads of the setting closest to its floor", policy=TIMING
    ),
    *interval_values("settings_best_fraction", "fraction", description="its floor / its step", bounds=("", "")),
    *interval_values(
        "one_thread_gb_s", "GB/s", description="one thread copying the weights' bytes, in the settings' rounds"
    ),
    Value("settings_other_dtype", description="the dtype set beside the run's in the settings"),
    *step_values("settings_other", "the eager step in the other dtype, every thread"),
    *step_values("settings_one_thread", "the eager step on one thread, the run's dtype"),
    *(
        v
        for g, words in GROUPS.items()
        for v in interval_values(
            f"breakdown_rise_{g}_ms",
            "ms",
            description=f"{words}: at flat_up_to - at the smallest",
            bounds=("its low end at flat_up_to - its high end at the smallest", "the other way round"),
        )
    ),
)
