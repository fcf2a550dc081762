"""What §2 writes (``site_data/prefill_decode/``): its tables and values, declared once."""

from sitedata.policies import EXACT_ON_DEVICE, EXACT_ON_MACHINE, TIMING
from sitedata.schema import Column, Table, Value

FLAT_UP_TO = 1024  # spec §2.3: the source saw no change in step cost from C = 16 to 1,024

# Bytes held in the run's dtype (fp16 on a GPU, fp32 on a CPU) reproduce on the same
# device type and dtype (EXACT_ON_DEVICE).

TABLES = (
    Table(
        "split",
        "One generation, prefill and decode timed apart",
        (
            Column("phase", words=True),
            Column("tokens", "tokens"),
            Column("total_ms", "ms", "time", policy=TIMING, spread="spread_ms"),
            Column("spread_ms", "ms", "spread (IQR)", policy=TIMING),
            Column("ms_per_token", "ms", "per token", policy=TIMING),
            Column("cost_vs_prompt_token", "x", "per token, vs a prompt token", policy=TIMING),
        ),
        description=(
            "One cached generation, a prompt of book text and then one token per step, with the prefill and "
            "the decode steps timed apart: the cost per prompt token, per generated token, and their ratio."
        ),
    ),
    Table(
        "prefill",
        "Prefill against prompt length",
        (
            Column("prompt_tokens", "tokens", "prompt P"),
            Column("time_ms", "ms", "prefill = time to first token", policy=TIMING, spread="spread_ms"),
            Column("spread_ms", "ms", "spread (IQR)", policy=TIMING),
            Column("ms_per_token", "ms", "per prompt token", policy=TIMING),
            Column("tokens_per_s", "tokens/s", "prompt tokens/s", policy=TIMING),
        ),
        description=(
            "One prefill at each prompt length P: its time (the time to first token), the time per prompt "
            "token, prompt tokens per second."
        ),
    ),
    Table(
        "bandwidth",
        "Memory bandwidth, from one large copy",
        (
            Column("copy_bytes", "bytes", "buffer copied"),
            Column("moved_bytes", "bytes", "bytes moved per copy (read + write)"),
            Column("copies_per_sample", "copies", "copies per timed sample"),
            Column("time_ms", "ms", "time per copy", policy=TIMING, spread="spread_ms"),
            Column("spread_ms", "ms", "spread (IQR)", policy=TIMING),
            Column("bandwidth_gb_s", "GB/s", "bandwidth", policy=TIMING),
        ),
        description="The device's memory bandwidth, from one large copy.",
    ),
    Table(
        "decode",
        "One decode step against cache length",
        (
            Column("cache_tokens", "tokens", "cache C"),
            Column("step_ms", "ms", "decode step", policy=TIMING, spread="spread_ms"),
            Column("spread_ms", "ms", "spread (IQR)", policy=TIMING),
            Column("tokens_per_s", "tokens/s", "tokens/s (1 / step)", policy=TIMING),
            Column("cache_bytes", "bytes", "cache size", policy=EXACT_ON_DEVICE),
            Column("floor_ms", "ms", "floor: weights / bandwidth", policy=TIMING),
            Column("fraction_of_floor", "fraction", "floor / step", policy=TIMING),
            Column("floor_with_cache_ms", "ms", "floor with the cache", policy=TIMING),
            Column("compiled_ms", "ms", "compiled step", policy=TIMING, spread="compiled_spread_ms"),
            Column("compiled_spread_ms", "ms", "compiled spread (IQR)", policy=TIMING),
            Column("compiled_fraction_of_floor", "fraction", "compiled: floor / step", policy=TIMING),
            Column("compiled_speedup", "x", "eager step / compiled step", policy=TIMING),
        ),
        description=(
            "One decode step against a cache of C positions: the step time, tokens per second, and the step's"
            " floor (the weight bytes over the measured bandwidth, and with the cache's bytes added) with the"
            " fraction of it achieved; beside it the same step compiled, against the same floor."
        ),
    ),
)
VALUES = (
    Value("split_prompt_tokens", "tokens"),
    Value("split_decode_steps", "steps"),
    Value("split_prefill_ms", "ms", policy=TIMING),
    Value("split_prefill_ms_per_token", "ms", policy=TIMING),
    Value("split_decode_ms_per_token", "ms", policy=TIMING),
    Value("split_ratio", "x", description="a generated token costs this many prompt tokens", policy=TIMING),
    Value("split_step_min_ms", "ms", description="fastest step", policy=TIMING),
    Value("split_step_max_ms", "ms", description="slowest step", policy=TIMING),
    Value("split_prefill_samples_ms", "ms", policy=TIMING),
    Value("split_decode_samples_ms", "ms", policy=TIMING),
    Value("ttft_smallest_ms", "ms", policy=TIMING),
    Value("ttft_largest_ms", "ms", policy=TIMING),
    Value("prompt_smallest", "tokens"),
    Value("prompt_largest", "tokens"),
    Value("ttft_growth", "x", description="time to first token at the longest prompt / at the shortest", policy=TIMING),
    Value("prefill_samples_ms", "ms", policy=TIMING),
    Value("bandwidth_gb_s", "GB/s", policy=TIMING),
    Value("bandwidth_samples_ms", "ms", policy=TIMING),
    Value("weight_bytes", "bytes", description="bytes of the model's parameters", policy=EXACT_ON_DEVICE),
    Value("floor_ms", "ms", description="weight bytes / bandwidth", policy=TIMING),
    Value("cache_smallest", "tokens"),
    Value("cache_largest", "tokens"),
    Value("step_smallest_ms", "ms", policy=TIMING),
    Value("step_largest_ms", "ms", policy=TIMING),
    Value("tok_s_smallest", "tokens/s", policy=TIMING),
    Value("tok_s_largest", "tokens/s", policy=TIMING),
    Value("fraction_smallest", "fraction", policy=TIMING),
    Value("fraction_largest", "fraction", policy=TIMING),
    Value("flat_up_to", "tokens"),
    Value("flat_spread", "x", description=f"slowest / fastest decode step for C up to {FLAT_UP_TO}", policy=TIMING),
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
        policy=TIMING,
    ),
    Value("compiled_fraction_smallest", "fraction", policy=TIMING),
    Value("compiled_fraction_largest", "fraction", policy=TIMING),
    Value("compiled_speedup_smallest", "x", policy=TIMING),
    Value("compiled_speedup_largest", "x", policy=TIMING),
    Value("compiled_speedup_best", "x", description="the largest speed-up over the contexts measured", policy=TIMING),
    Value("compiled_speedup_worst", "x", description="the smallest speed-up over the contexts measured", policy=TIMING),
    Value("compiled_worst_cache", "tokens", description="the context of the smallest speed-up", policy=TIMING),
    Value("compiled_samples_ms", "ms", policy=TIMING),
)
