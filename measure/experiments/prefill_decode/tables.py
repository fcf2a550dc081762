"""What §2 writes (``site_data/prefill_decode/``): its tables and values, declared once."""

from sitedata.intervals import interval_values
from sitedata.policies import EXACT, EXACT_ON_DEVICE, EXACT_ON_MACHINE, NUMERIC_ANYWHERE, RECORDED, TIMING
from sitedata.schema import Column, Table, Value, derived_columns, interval_columns

FLAT_UP_TO = 1024  # spec §2.3: the source saw no change in step cost from C = 16 to 1,024

# The groups, in the table's order, and the words a reader sees for each. The two last
# are not operators: the wall time beyond them, and the whole profiled step.
GROUPS = {
    "matmul": "matrix multiplies (projections, output head)",
    "attention": "attention (scaled dot product)",
    "concat": "concatenations (cache appends, rotary)",
    "elementwise": "elementwise (norms, rotary, activation, residual)",
    "bookkeeping": "views, copies and allocations",
    "other": "other operators",
    "outside": "outside the operators (Python, framework)",
    "step": "the whole step, profiled",
}

# Bytes held in the run's dtype (fp16 on a GPU, fp32 on a CPU) reproduce on the same
# device type and dtype (EXACT_ON_DEVICE); so do ratios with those bytes. Every median has
# its 95 % interval beside it (interval_columns); a ratio of two points of one sweep, the
# median of their ratios round by round with its 95 % interval (measure/lab/medians.py).


TABLES = (
    Table(
        "split",
        "One generation, prefill and decode timed apart",
        (
            Column("phase", words=True),
            Column("tokens", "tokens"),
            *interval_columns("total_ms", "ms", "time"),
            *derived_columns("ms_per_token", "ms", "per token"),
            *derived_columns("cost_vs_prompt_token", "x", "per token, vs a prompt token"),
        ),
        description=(
            "One cached generation, a prompt of book text and then one token per step, with the prefill and "
            "the decode steps timed apart (the two interleaved, one sample each per round): the cost per "
            "prompt token, per generated token, and their ratio."
        ),
    ),
    Table(
        "prefill",
        "Prefill against prompt length",
        (
            Column("prompt_tokens", "tokens", "prompt P"),
            *interval_columns("time_ms", "ms", "prefill = time to first token"),
            *derived_columns("ms_per_token", "ms", "per prompt token"),
            Column("tokens_per_s", "tokens/s", "prompt tokens/s", policy=TIMING),
            Column("flops", "FLOP", "arithmetic", description="2 x (P x weight MACs + attention MACs)"),
            Column("flops_per_byte", "FLOP/byte", "FLOPs per byte of weights", policy=EXACT_ON_DEVICE),
            Column("achieved_gflop_s", "GFLOP/s", "FLOP/s achieved", policy=TIMING),
        ),
        description=(
            "One prefill at each prompt length P, interleaved: its time (the time to first token), the time "
            "per prompt token, prompt tokens per second; its arithmetic counted from the model's shape (every "
            "weight matrix once per token, attention over the P x P scores in full) and that arithmetic per "
            "byte of weights read (its arithmetic intensity), and the FLOP/s it achieved."
        ),
    ),
    Table(
        "decode",
        "One decode step against cache length",
        (
            Column("cache_tokens", "tokens", "cache C"),
            *interval_columns("step_ms", "ms", "decode step"),
            Column("tokens_per_s", "tokens/s", "tokens/s (1 / step)", policy=TIMING),
            Column("cache_bytes", "bytes", "cache size", policy=EXACT_ON_DEVICE),
            Column("floor_ms", "ms", "floor: weights / bandwidth", policy=TIMING),
            *derived_columns("fraction_of_floor", "fraction", "floor / step"),
            Column("floor_with_cache_ms", "ms", "floor with the cache", policy=TIMING),
            Column("attention_macs", "MAC", "attention multiply-adds", description="q.K and p.V over C + 1 keys"),
            Column("attention_share", "fraction", "attention / weight multiply-adds", policy=NUMERIC_ANYWHERE),
            Column("flops_per_byte", "FLOP/byte", "FLOPs per byte read", policy=EXACT_ON_DEVICE),
            *interval_columns("compiled_ms", "ms", "compiled step"),
            *derived_columns("compiled_fraction_of_floor", "fraction", "compiled: floor / step"),
            *derived_columns("compiled_speedup", "x", "eager step / compiled step"),
        ),
        description=(
            "One decode step against a cache of C positions, eager and compiled interleaved in one sweep: the "
            "step time, tokens per second, and the step's floor (the weight bytes over the run's one "
            "bandwidth, the calibration's, and with the cache's bytes added) with the fraction of it "
            "achieved; the attention's multiply-adds at C against the weights', and the step's FLOPs per byte "
            "read (weights and cache)."
        ),
    ),
    Table(
        "breakdown",
        "Where an eager decode step's time goes, by group of operators",
        (
            Column("cache_tokens", "tokens", "cache C"),
            Column("part", words=True),
            Column("calls", "calls", "operator calls per step", policy=EXACT_ON_DEVICE),
            *interval_columns("self_ms", "ms", "time per step"),
            Column("share", "fraction", "share of the profiled step", policy=TIMING),
        ),
        description=(
            "One eager decode step (batch 1) under torch.profiler (CPU activities), profiled alone once per "
            "round, the contexts interleaved: the self time of every operator, summed by group, with the "
            "95 % interval over the profiled steps; outside the operators is the profiled step's wall time "
            "less all of them (Python, transformers, the dispatcher, the profiler's own records). On a GPU "
            "these are host times: what issuing each operator took, not its kernel."
        ),
    ),
)


SETTINGS = Table(
    "settings",
    "Which setting brings the decode step closest to its floor",
    (
        Column("compiled", label="compiled (static cache, torch.compile)"),
        Column("dtype", label="weights' dtype", policy=EXACT_ON_DEVICE),
        Column("threads", "threads", policy=EXACT_ON_MACHINE),
        *interval_columns("step_ms", "ms", "decode step"),
        Column("weight_bytes", "bytes", "weights", policy=EXACT_ON_DEVICE),
        Column("floor_ms", "ms", "floor: weights / bandwidth", policy=TIMING),
        *derived_columns("fraction_of_floor", "fraction", "floor / step"),
        *derived_columns("speedup", "x", "the run's step / this step"),
    ),
    description=(
        "One decode step (batch 1, the smallest context) under each setting, interleaved in one sweep: every "
        "thread and one, the run's dtype and the other one (bfloat16 beside float32 on a CPU), eager and "
        "compiled; each against its own floor (its weights' bytes over the run's one bandwidth), and its "
        "speed against the run's own setting (the first row)."
    ),
)
TABLES = (*TABLES, SETTINGS)

_PER_DOUBLING = "decode step at flat_up_to over the smallest context, per doubling of the context, minus 1"

VALUES = (
    Value("split_prompt_tokens", "tokens"),
    Value("split_decode_steps", "steps"),
    Value("split_prefill_ms", "ms", policy=TIMING),
    Value("split_prefill_ms_per_token", "ms", policy=TIMING),
    Value("split_decode_ms_per_token", "ms", policy=TIMING),
    *interval_values("split_ratio", "x", description="a generated token costs this many prompt tokens"),
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
    Value("decode_samples_ms", "ms", policy=TIMING),
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
    *interval_values(
        "dispatch_us",
        "µs",
        description="one trivial operator from Python (torch.add of two 1-element tensors)",
        bounds=("", ""),
    ),
    *interval_values(
        "dispatch_ms",
        "ms",
        description="ops_per_step x dispatch_us: the step's operators, if each did no work",
        bounds=("", ""),
    ),
    Value("dispatch_share", "fraction", description="dispatch_ms / the eager step", policy=TIMING),
    Value("matmul_size", "", description="n of the n x n matmul timed for the FLOP/s"),
    *interval_values(
        "matmul_gflop_s", "GFLOP/s", description="2 n^3 / the matmul's time, in the run's dtype", bounds=("", "")
    ),
    Value("step_flops", "FLOP", description="FLOPs of the decode step at the smallest context"),
    *interval_values("arithmetic_ms", "ms", description="step_flops at the matmul's FLOP/s", bounds=("", "")),
    Value("arithmetic_share", "fraction", description="arithmetic_ms / the eager step", policy=TIMING),
    *interval_values(
        "ridge_flops_per_byte", "FLOP/byte", description="the matmul's FLOP/s / the run's bandwidth", bounds=("", "")
    ),
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
    *(
        Value(f"breakdown_rise_{g}_ms", "ms", description=f"{words}: at flat_up_to - at the smallest", policy=TIMING)
        for g, words in GROUPS.items()
    ),
)
