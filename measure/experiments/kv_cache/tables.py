"""What §1 writes (``site_data/kv_cache/``): its tables and values, declared once."""

from sitedata.schema import Column, Table, Value

# Token streams and what follows from them reproduce on the same device type and dtype
# (fp32 on any CPU); in fp16 near-tied logits may split the two streams.
_TOKENS = dict(compare="exact", scope="device")
_TIMING = dict(compare="timing")
_FLOAT = dict(compare="numeric")

TABLES = (
    Table(
        "identical_output",
        "Greedy generation, recomputing vs cached",
        (
            Column("method", label="method"),
            Column("new_tokens", "tokens", "new tokens"),
            Column("total_ms", "ms", "wall time", **_TIMING),
            Column("spread_ms", "ms", "spread (IQR)", **_TIMING),
            Column("ms_per_token", "ms", "per token", **_TIMING),
            Column("speed_ratio", "x", "speed vs recompute", **_TIMING),
            Column("repeats", "runs", "repeats"),
            Column("tokens_identical", label="same tokens as recompute", **_TOKENS),
        ),
    ),
    Table(
        "generated_tokens",
        "The two token streams, position by position",
        (
            Column("position", label="position"),
            Column("recompute_id", label="recompute: id", **_TOKENS),
            Column("cached_id", label="cached: id", **_TOKENS),
            Column("text", label="token text", **_TOKENS),
            Column("same", label="same", **_TOKENS),
        ),
    ),
    Table(
        "head_step",
        "One attention head (d = {head_dim}), one step",
        (
            Column("context", "tokens", "context n"),
            Column("recompute_ms", "ms", "recompute step", **_TIMING),
            Column("recompute_spread_ms", "ms", "spread", **_TIMING),
            Column("cached_ms", "ms", "cached step", **_TIMING),
            Column("cached_spread_ms", "ms", "spread", **_TIMING),
            Column("speed_ratio", "x", "ratio", **_TIMING),
            Column("recompute_scores_bytes", "bytes", "scores built, recompute"),
            Column("cached_scores_bytes", "bytes", "scores built, cached"),
        ),
    ),
    Table(
        "macs_total",
        "Multiply-accumulates to generate T tokens from a one-token start",
        (
            Column("scope", label="what"),
            Column("new_tokens", "tokens", "T"),
            Column("recompute_macs", "MAC", "recompute"),
            Column("cached_macs", "MAC", "cached"),
            Column("ratio", "x", "ratio", compare="numeric", scope="any"),
        ),
    ),
    Table(
        "macs_per_step",
        "Multiply-accumulates of one step at context n (model)",
        (
            Column("context", "tokens", "context n"),
            Column("recompute_macs", "MAC", "recompute step"),
            Column("cached_macs", "MAC", "cached step"),
        ),
    ),
    Table(
        "memory",
        "Peak memory while generating, above the resident weights",
        (
            Column("method", label="method"),
            Column("new_tokens", "tokens", "new tokens"),
            Column("steps_run", label="steps run"),
            Column("baseline_bytes", "bytes", "in use before (the whole process)", **_TIMING),
            Column("peak_bytes", "bytes", "peak", **_TIMING),
            Column("above_baseline_bytes", "bytes", "peak above weights", **_TIMING),
            Column("relative_to_cached", "x", "relative to cached", **_TIMING),
        ),
    ),
)
VALUES = (
    Value("speedup", "x", description="cached generation is this many times faster than recomputing", **_TIMING),
    Value("tokens_identical", description="the two token streams are equal", **_TOKENS),
    Value("first_mismatch", description="first differing position, -1 if none", **_TOKENS),
    Value("split_gap", description="top-two logit gap of the recompute path where the streams split", **_FLOAT),
    Value("split_logit_diff", description="largest logit difference of the two paths there", **_FLOAT),
    Value("split_at_near_tie", description="the split gap is within twice that difference", **_TOKENS),
    Value("identical_float32", description="the two streams are equal in float32", **_TOKENS),
    Value("float32_first_mismatch", description="first differing position in float32, -1 if none", **_TOKENS),
    Value("prompt_tokens", "tokens"),
    Value("new_tokens", "tokens"),
    Value("prompt"),
    Value("generated_text", description="the cached run's output, decoded", **_TOKENS),
    Value("recompute_samples_ms", "ms", **_TIMING),
    Value("cached_samples_ms", "ms", **_TIMING),
    Value("head_dim"),
    Value("head_largest_context", "tokens"),
    Value("head_scores_bytes_recompute", "bytes"),
    Value("head_scores_bytes_cached", "bytes"),
    Value("head_ratio_at_largest", "x", **_TIMING),
    Value(
        "weight_macs_per_token", "MAC", description="counted by hooks on every Linear layer during a real forward pass"
    ),
    Value("macs_ratio_largest", "x", compare="numeric", scope="any"),
    Value(
        "memory_ratio",
        "x",
        description="recompute's peak above weights / cached's, at the longest generation",
        **_TIMING,
    ),
    Value("memory_tokens", "tokens", description="the longest generation of the memory table"),
    Value("memory_ratio_shortest", "x", description="the same ratio at the shortest generation", **_TIMING),
    Value("memory_tokens_shortest", "tokens"),
    Value("memory_whole_up_to", "tokens", description="the longest generation recomputed whole for memory"),
    Value(
        "memory_last_steps_share",
        "x",
        description="at that length, the last two steps' peak above weights / the whole loop's (0 if not checked)",
        **_TIMING,
    ),
)
