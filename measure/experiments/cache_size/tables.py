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
            Column("kv_heads", label="KV heads"),
            Column("head_dim", label="d"),
            Column("dtype", policy=EXACT_ON_DEVICE),
            Column("bytes_per_element", "bytes", "bytes/element", policy=EXACT_ON_DEVICE),
            Column("formula_bytes_per_token", "bytes", "by the formula", policy=EXACT_ON_DEVICE),
        ),
        description="The formula 2 x L x H_kv x d x bytes per element, per model.",
    ),
    Table(
        "measured",
        "The real cache, measured, against the formula",
        (
            Column("model"),
            Column("method", words=True),
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
        description=(
            "The bytes the model's real cache occupies for several batch x tokens shapes (small ones filled "
            "by a real prefill, the 65,536-token ones allocated as the model's static cache), with the growth"
            " the allocator or the resident set reports, next to the formula."
        ),
    ),
    Table(
        "attention_variants",
        "Multi-head, grouped-query and multi-query attention",
        (
            Column("model"),
            Column("variant", words=True),
            Column("heads", label="H"),
            Column("kv_heads", label="KV heads"),
            Column("measured_bytes_per_token", "bytes", "bytes/token, measured"),
            Column("fraction_of_mha", "", "fraction of MHA", policy=NUMERIC_ANYWHERE),
        ),
        description=(
            "Multi-head, grouped-query and multi-query attention: the same architecture with H_kv = H, its "
            "actual H_kv, and 1, each cache allocated and measured."
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
        description=(
            "A 7B-class shape (32 layers, 8 KV heads of dimension 128, fp16): its measured bytes per token, "
            "then the cache at 4k to 128k tokens against its fp16 weights."
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
