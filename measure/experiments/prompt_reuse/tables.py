"""What the prompt-reuse.md page reads (``site_data/prompt_reuse/``): its tables and values, declared once."""

from sitedata.policies import TIMING
from sitedata.schema import Column, Table, Value, interval_columns

# A column's policy says how the drift gate compares it and where it reproduces: the
# prompt lengths anywhere (the default, exact), the times only on the same machine
# (TIMING, against their intervals).

TABLES = (
    Table(
        "prefill",
        "Reusing the prompt: one prefill by prompt length",
        (
            Column("prompt_tokens", "tokens", "prompt"),
            *interval_columns("time_ms", "ms", "prefill"),
            Column("tokens_per_s", "tokens/s", "prompt tokens per second", policy=TIMING),
        ),
        description="One prefill at each prompt length, every length timed in one sweep of interleaved rounds.",
    ),
)
VALUES = (
    Value("shortest_prompt_tokens", "tokens"),
    Value("longest_prompt_tokens", "tokens"),
)
