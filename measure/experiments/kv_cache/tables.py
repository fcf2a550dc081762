"""What §1 writes (``site_data/kv_cache/``): its tables and values, declared once."""

from measure.lab.prediction import prediction_columns, step_values
from measure.lab.roofline_in_rounds import declared
from sitedata.intervals import interval_values
from sitedata.policies import EXACT_ON_DEVICE, NUMERIC, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Column, Table, Value, derived_columns, interval_columns

# Token streams and what follows from them reproduce on the same device type and dtype
# (fp32 on any CPU; EXACT_ON_DEVICE); in fp16 near-tied logits may split the two streams.
# Every timing is a median with its 95 % interval beside it (interval_columns); a ratio of
# two points of one sweep, the median of their ratios round by round with its 95 %
# interval (measure/lab/medians.py).


TABLES = (
    Table(
        "identical_output",
        "Greedy generation, recomputing vs cached",
        (
            Column("method", words=True),
            Column("new_tokens", "tokens", "new tokens"),
            *interval_columns("total_ms", "ms", "whole generation"),
            *derived_columns("ms_per_token", "ms", "per token"),
            *derived_columns("speedup", "x", "speedup over recomputing"),
            *derived_columns("steps_ms", "ms", "after the first token"),
            *derived_columns("steps_speedup", "x", "speedup over recomputing, after the first token"),
            Column("tokens_identical", label="same tokens as recompute", policy=EXACT_ON_DEVICE),
            *prediction_columns("total", "whole generation"),
        ),
        description=(
            "Greedy generation recomputing everything at each step against generating with the cache: the token "
            "ids must be identical. Each generation timed as the sum of its steps, every step timed in one "
            "interleaved sweep (the prefill, the decode step at a few contexts, the recompute pass at a few "
            "lengths; a step between two lengths timed read off the straight line between them), one sum per "
            "round: the whole generation (the cached one with its prefill, as the chapter counted it) and the "
            "steps after the first token, medians with their 95 % intervals over the rounds, and the speedups "
            "paired round by round; each generation against its prediction by the run's roofline."
        ),
    ),
    Table(
        "generated_tokens",
        "The two token streams, position by position",
        (
            Column("position"),
            Column("recompute_id", label="recompute: id", policy=EXACT_ON_DEVICE),
            Column("cached_id", label="cached: id", policy=EXACT_ON_DEVICE),
            Column("text", label="token text", policy=EXACT_ON_DEVICE),
            Column("same", policy=EXACT_ON_DEVICE),
        ),
        description="The two token streams side by side, position by position: the proof, shown.",
    ),
    Table(
        "head_step",
        "One attention head (d = {head_dim}), one step",
        (
            Column("context", "tokens", "context n"),
            *interval_columns("recompute_ms", "ms", "recompute step"),
            *interval_columns("cached_ms", "ms", "cached step"),
            *derived_columns("head_ratio", "x", "ratio"),
            Column("recompute_scores_bytes", "bytes", "scores built, recompute"),
            Column("cached_scores_bytes", "bytes", "scores built, cached"),
        ),
        description=(
            "One attention head, one generation step at context n, both ways, every point interleaved in one "
            "sweep: the time (medians with their 95 % intervals), the ratio paired round by round with its "
            "interval, and the bytes of the score matrix actually built."
        ),
    ),
    Table(
        "macs_total",
        "Multiply-accumulates to generate T tokens from a one-token start",
        (
            Column("scope", label="what", words=True),
            Column("new_tokens", "tokens", "T"),
            Column("recompute_macs", "MAC", "recompute"),
            Column("cached_macs", "MAC", "cached"),
            Column("ratio", "x", policy=NUMERIC_ANYWHERE),
        ),
        description=(
            "Multiply-accumulates, counted, to generate T tokens from a one-token start, for the model (its "
            "weight MACs per token counted by hooks on every Linear layer) and for the lone head."
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
        description="Multiply-accumulates of one step at context n for the model, recomputing and cached.",
    ),
    Table(
        "memory",
        "Peak memory while generating, above the resident weights",
        (
            Column("method", words=True),
            Column("new_tokens", "tokens", "new tokens"),
            Column("steps_run", label="steps run", words=True),
            Column("baseline_bytes", "bytes", "in use before (the whole process)", policy=TIMING),
            Column("peak_bytes", "bytes", "peak", policy=TIMING),
            Column("above_baseline_bytes", "bytes", "peak above weights", policy=TIMING),
            Column("relative_to_cached", "x", "relative to cached", policy=TIMING),
        ),
        description=(
            "Peak memory above the resident weights while generating, with and without the cache, at each "
            "generation length (the method is in meta.json: CUDA allocator or Linux peak RSS). Beyond the "
            "longest generation recomputed whole only its last two steps are run: every step is larger than "
            "the one before, so the peak of the whole loop is the peak of its final step."
        ),
    ),
)
VALUES = (
    *interval_values(
        "speedup",
        "x",
        description="cached generation is this many times faster than recomputing",
        bounds=(
            "95 % interval of speedup, low (the ratio paired round by round)",
            "95 % interval of speedup, high (the ratio paired round by round)",
        ),
    ),
    Value("timed_tokens", "tokens", description="the length of each timed generation"),
    *interval_values(
        "steps_speedup",
        "x",
        description="the same after the first token: the recompute passes after the first over the decode steps",
    ),
    Value("speedup_predicted", "x", description="the speedup the run's roofline predicts", policy=TIMING),
    *declared("generation_round", "the generation sweep"),
    Value("steps_speedup_predicted", "x", description="the same after the first token", policy=TIMING),
    Value(
        "flops_ratio",
        "x",
        description="FLOPs of the recompute generation over the cached one's, counted",
        policy=EXACT_ON_DEVICE,
    ),
    Value("recompute_points", "lengths", description="recompute passes timed, first and last included"),
    Value("step_points", "contexts", description="decode steps timed, first and last included"),
    Value("recompute_pass_tokens", "tokens", description="the recompute pass timed in the middle of the generation"),
    *step_values("recompute_pass", "the recompute pass timed in the middle of the generation"),
    Value("cached_step_tokens", "tokens", description="the decode step timed in the middle of the generation"),
    *step_values("cached_step", "the decode step timed in the middle of the generation"),
    Value("tokens_identical", description="the two token streams are equal", policy=EXACT_ON_DEVICE),
    Value("first_mismatch", description="first differing position, -1 if none", policy=EXACT_ON_DEVICE),
    Value("split_gap", description="top-two logit gap of the recompute path where the streams split", policy=NUMERIC),
    Value("split_logit_diff", description="largest logit difference of the two paths there", policy=NUMERIC),
    Value("split_at_near_tie", description="the split gap is within twice that difference", policy=EXACT_ON_DEVICE),
    Value("identical_float32", description="the two streams are equal in float32", policy=EXACT_ON_DEVICE),
    Value(
        "float32_first_mismatch", description="first differing position in float32, -1 if none", policy=EXACT_ON_DEVICE
    ),
    Value("prompt_tokens", "tokens"),
    Value("new_tokens", "tokens"),
    Value("prompt"),
    Value("generated_text", description="the cached run's output, decoded", policy=EXACT_ON_DEVICE),
    Value("recompute_samples_ms", "ms", policy=TIMING),
    Value("cached_samples_ms", "ms", policy=TIMING),
    Value("head_dim"),
    Value("head_block_ms", "ms"),
    Value("head_min_rounds", "rounds", description="the rounds every point of the head's sweep stays for at least"),
    Value("head_largest_context", "tokens"),
    Value("head_scores_bytes_recompute", "bytes"),
    Value("head_scores_bytes_cached", "bytes"),
    *interval_values("head_ratio_at_largest", "x"),
    Value(
        "weight_macs_per_token", "MAC", description="counted by hooks on every Linear layer during a real forward pass"
    ),
    Value("macs_ratio_largest", "x", policy=NUMERIC_ANYWHERE),
    Value(
        "memory_ratio",
        "x",
        description="recompute's peak above weights / cached's, at the longest generation",
        policy=TIMING,
    ),
    Value("memory_tokens", "tokens", description="the longest generation of the memory table"),
    Value(
        "memory_ratio_shortest",
        "x",
        description="the same ratio at the shortest generation, read as at the longest (last two steps, or all)",
        policy=TIMING,
    ),
    Value(
        "memory_ratio_shortest_whole",
        "x",
        description="the same ratio at the shortest generation, the whole loop",
        policy=TIMING,
    ),
    Value(
        "memory_compared_last_two",
        description="the two lengths compared on their last two steps",
    ),
    Value("memory_tokens_shortest", "tokens"),
    Value("memory_whole_up_to", "tokens", description="the longest generation recomputed whole for memory"),
    Value(
        "memory_last_steps_share",
        "x",
        description="at that length, the last two steps' peak above weights / the whole loop's (0 if not checked)",
        policy=TIMING,
    ),
)
