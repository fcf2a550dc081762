"""What the prompt-reuse.md page reads (``site_data/prompt_reuse/``): its tables and values, declared once."""

from sitedata.intervals import interval_values
from sitedata.policies import EXACT_ON_DEVICE
from sitedata.schema import Column, Table, Value, derived_columns, interval_columns

# A column's policy says how the drift gate compares it and where it reproduces: the
# token counts and block counts anywhere (the default, exact), the bytes and the first
# tokens on the same device type and dtype (EXACT_ON_DEVICE), the times only on the same
# machine (TIMING, against their intervals). A ratio of two points of one sweep is the
# median of their ratios round by round, with its interval; a simulated time, its value at
# the costs' medians and its range at their bounds (derived_columns).

TABLES = (
    Table(
        "first_token",
        "Time to the first token, the prefix read again or cached",
        (
            Column("prefix_tokens", "tokens", "shared prefix"),
            Column("prompt_tokens", "tokens", "whole prompt"),
            *interval_columns("whole_ms", "ms", "whole prompt read"),
            *interval_columns("cached_ms", "ms", "prefix cached"),
            *derived_columns("prefix_speedup", "x", "speedup of the cached prefix"),
            Column("same_first_token", label="same first token", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "A prompt made of a shared prefix and a question of its own: its first token read in one pass over the "
            "whole prompt, or from the question alone against the prefix's cache kept from before. Every length "
            "both ways in one sweep of interleaved rounds; the speedup paired round by round."
        ),
    ),
    Table(
        "passes",
        "Chunked prefill: each chunk's pass",
        (
            Column("chunk_offset", "tokens", "tokens before the chunk"),
            Column("chunk_tokens", "tokens", "chunk"),
            *interval_columns("pass_ms", "ms", "pass"),
        ),
        description="Each chunk of the long prompt read against the cache the chunks before it wrote.",
    ),
    Table(
        "admission",
        "A long prompt admitted beside a running batch, whole or in chunks",
        (
            Column("chunk_tokens", "tokens", "tokens per pass"),
            Column("passes"),
            *interval_columns("prefill_ms", "ms", "prefill, all passes"),
            *derived_columns("prefill_ratio", "x", "prefill / one whole pass"),
            *derived_columns("first_token_ms", "ms", "its first token (simulated)"),
            *derived_columns("longest_gap_ms", "ms", "longest wait of a running request (simulated)"),
            Column("tokens_meanwhile", "tokens", "tokens each running request gets meanwhile"),
            Column("same_first_token", label="same first token", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "The long prompt in one pass or in chunks, timed (all passes in order) in the sweep that timed each "
            "chunk and the running batch's decode step; what admitting it does, simulated from those costs: one "
            "pass, then one decode step of the running batch, per iteration."
        ),
    ),
    Table(
        "shared_blocks",
        "KV memory of requests sharing the longest prefix, in paged blocks",
        (
            Column("requests", "requests"),
            Column("private_blocks", label="blocks, nothing shared"),
            Column("shared_blocks", label="blocks, prefix shared"),
            Column("private_mib", "MiB", "nothing shared", policy=EXACT_ON_DEVICE),
            Column("shared_mib", "MiB", "prefix shared", policy=EXACT_ON_DEVICE),
            Column("saved_fraction", "fraction", "share saved"),
        ),
        description=(
            "Requests whose prompts are the longest prefix and a question of their own, in blocks of block_tokens: "
            "counted from the model's shape, the prefix's whole blocks held once when shared."
        ),
    ),
)
VALUES = (
    Value("shortest_prefix_tokens", "tokens"),
    Value("longest_prefix_tokens", "tokens"),
    Value("question_tokens", "tokens"),
    Value("prompt_tokens", "tokens"),
    Value("chunk_tokens", "tokens"),
    Value("chunk_passes"),
    Value("running_batch", "requests"),
    Value("running_context", "tokens"),
    *interval_values("decode_ms", "ms", description="one decode step of the running batch"),
    Value("block_tokens", "tokens"),
    Value("largest_requests", "requests"),
    Value("kv_bytes_per_token", "bytes", policy=EXACT_ON_DEVICE),
)
