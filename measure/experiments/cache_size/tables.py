"""What §3 writes (``site_data/cache_size/``): its tables and values, declared once."""

from sitedata.policies import EXACT_ON_DEVICE, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Column, Table, Value

# Prefill rows hold a cache in the run's dtype, and the formula table has a row per dtype
# of the run: those bytes reproduce on the same device type and dtype (EXACT_ON_DEVICE).
# The allocated caches are float16 whatever the run's dtype: the same bytes on any
# machine (EXACT).

TABLES = (
    Table(
        "bytes_per_token",
        "Bytes per cached token, from the formula",
        (
            Column("model"),
            Column("layers", label="L"),
            Column("kv_heads", label="H_kv"),
            Column("head_dim", label="d"),
            Column("dtype", policy=EXACT_ON_DEVICE),
            Column("bytes_per_element", "bytes", "bytes/element", policy=EXACT_ON_DEVICE),
            Column("formula_bytes_per_token", "bytes", "2·L·H_kv·d·bytes", policy=EXACT_ON_DEVICE),
        ),
    ),
    Table(
        "measured",
        "The real cache, measured, against the formula",
        (
            Column("model"),
            Column("method"),
            Column("batch", label="B"),
            Column("tokens", "tokens", "tokens each"),
            Column("resident_tokens", "tokens", "resident tokens"),
            Column("dtype", policy=EXACT_ON_DEVICE),
            Column("measured_bytes", "bytes", "cache storage, measured", policy=EXACT_ON_DEVICE),
            Column("formula_bytes", "bytes", "formula", policy=EXACT_ON_DEVICE),
            Column("measured_bytes_per_token", "bytes", "measured per token", policy=EXACT_ON_DEVICE),
            Column("matches_formula", label="equal"),
            Column("allocator_growth_bytes", "bytes", "allocator / RSS growth", policy=TIMING),
        ),
    ),
    Table(
        "attention_variants",
        "Multi-head, grouped-query and multi-query attention",
        (
            Column("model"),
            Column("variant"),
            Column("heads", label="H"),
            Column("kv_heads", label="H_kv"),
            Column("measured_bytes_per_token", "bytes", "bytes/token, measured"),
            Column("fraction_of_mha", "", "fraction of MHA", policy=NUMERIC_ANYWHERE),
        ),
    ),
    Table(
        "context_7b",
        "A 7B-class model: cache against weights",
        (
            Column("context_tokens", "tokens", "context"),
            Column("cache_bytes", "bytes", "KV cache (fp16)"),
            Column("weights_bytes", "bytes", "weights (fp16)"),
            Column("cache_to_weights", "x", "cache / weights", policy=NUMERIC_ANYWHERE),
        ),
    ),
)
VALUES = (
    Value("seven_b_bytes_per_token", "bytes", description="measured from an allocated 7B-class cache"),
    Value("seven_b_params", "parameters", description="the stated parameter count of the 7B class (spec §3.4)"),
    Value("all_match", description="every measured cache equals the formula"),
    Value("big_shapes_equal", description="the equal-token shapes of the reference model occupy identical bytes"),
    Value("reference_model"),
)
