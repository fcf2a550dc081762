"""What §2 writes (``site_data/prefill_decode/``): its tables, declared once (its values: values.py)."""

from measure.lab.prediction import prediction_columns
from sitedata.policies import EXACT_ON_DEVICE, EXACT_ON_MACHINE, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Column, Table, derived_columns, interval_columns

FLAT_UP_TO = 1024  # spec §2.3: the source saw no change in step cost from C = 16 to 1,024


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
            *prediction_columns("total", "phase"),
        ),
        description=(
            "One cached generation, a prompt of book text and then one token per step, with the prefill and "
            "the decode steps timed apart (the two interleaved, one sample each per round): the cost per "
            "prompt token, per generated token, and their ratio; each phase against the run's roofline (the "
            "decode phase step by step, its context growing by one each step)."
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
            *prediction_columns("time", "prefill"),
        ),
        description=(
            "One prefill at each prompt length P, interleaved: its time (the time to first token), the time "
            "per prompt token, prompt tokens per second; its arithmetic counted from the model's shape (every "
            "weight matrix once per token, attention over the P x P scores in full) and that arithmetic per "
            "byte of weights read (its arithmetic intensity), and the FLOP/s it achieved; each prefill against "
            "the run's roofline (every weight on P rows at the ceiling of P rows)."
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
            *prediction_columns("step", "eager"),
            *prediction_columns("compiled", "compiled"),
        ),
        description=(
            "One decode step against a cache of C positions, eager and compiled interleaved in one sweep: the "
            "step time, tokens per second, and the step's floor (the weight bytes over the run's one "
            "bandwidth, the calibration's, and with the cache's bytes added) with the fraction of it "
            "achieved; the attention's multiply-adds at C against the weights', and the step's FLOPs per byte "
            "read (weights and cache); each step against the run's roofline: the eager step's growing cache "
            "passed over three times (appended by copying, then read by attention), the compiled step's static "
            "cache once, the eager step's operators at the fixed cost of one."
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
        *prediction_columns("step", "setting"),
    ),
    description=(
        "One decode step (batch 1, the smallest context) under each setting, interleaved in one sweep: every "
        "thread and one, the run's dtype and the other one (bfloat16 beside float32 on a CPU), eager and "
        "compiled; each against its own floor (its weights' bytes over the run's one bandwidth), its speed "
        "against the run's own setting (the first row), and its prediction by the run's roofline in its dtype "
        "(one thread: at the bandwidth one thread reached copying the weights' bytes, in the same rounds)."
    ),
)
TABLES = (*TABLES, SETTINGS)
