"""What §10 writes (``site_data/memory_budget/``): its tables and values, declared once."""

from measure.experiments.memory_budget.config import CONTEXT_PER_USER, USER_CONTEXTS
from sitedata.policies import EXACT_ON_DEVICE, TIMING
from sitedata.schema import Column, Table, Value

# The measured check runs in the run's dtype (its bytes per weight and per cached
# element): those bytes reproduce on the same device type and dtype (EXACT_ON_DEVICE).
# The budget itself is arithmetic on stated assumptions (EXACT).
_CARD = Column("card_gib", "GiB", "card")
_PEAK = "dense (no 2:4 sparsity), with fp32 accumulation; empty where the vendor states none"

TABLES = (
    Table(
        "models",
        "Model shapes (spec assumptions, and the measured model)",
        (
            Column("model"),
            Column("params", "parameters", "count"),
            Column("layers", label="L"),
            Column("heads", label="H"),
            Column("kv_heads", label="KV heads"),
            Column("head_dim", label="d"),
            Column("kv_bytes_per_element", "bytes", "KV bytes/element"),
            Column("kv_bytes_per_token", "bytes", "KV bytes/token"),
            Column("window", "tokens", "sliding window"),
            Column("windowed_layers", label="layers with the window"),
            Column("source", words=True),
        ),
        description=(
            "The model shapes the budget uses: the spec's 7B, 13B and 70B shapes, and the measured model with"
            " its real shape and parameter count."
        ),
    ),
    Table(
        "precisions",
        "Weight precisions (spec assumptions)",
        (Column("precision"), Column("weight_bits", "bits", "bits per weight")),
        description="The weight precisions the budget uses (spec assumptions).",
    ),
    Table(
        "cards",
        "Cards",
        (_CARD, Column("card_bytes", "bytes", "bytes")),
        description="The cards' memory the budget uses (spec assumptions).",
    ),
    Table(
        "assumptions",
        "Budget assumptions",
        (
            Column("reserve_gib", "GiB", "runtime reserve"),
            Column("reserve_bytes", "bytes", "reserve"),
            Column("kv_bytes_per_element", "bytes", "KV bytes/element"),
            Column("context_per_user", "tokens", "context per user"),
            Column("gib_bytes", "bytes", "1 GiB"),
        ),
        description=(
            "The budget's other assumptions: the runtime reserve, the cache's bytes per element, the context per user."
        ),
    ),
    Table(
        "budget",
        "The budget of every card, computed from the stated assumptions",
        (
            _CARD,
            Column("model"),
            Column("precision"),
            Column("weight_bits", "bits", "bits/weight"),
            Column("weights_bytes", "bytes", "weights"),
            Column("kv_bytes_per_token", "bytes", "KV/token"),
            Column("free_bytes", "bytes", "left for the cache"),
            Column("max_tokens", "tokens", "max resident tokens"),
            Column("users", "users", f"at {CONTEXT_PER_USER:,} tokens each"),
            Column("verdict", words=True),
        ),
        description=(
            "Every card x model x precision, computed from the stated assumptions: weights, the bytes left "
            'for the cache, the most tokens resident at once (or "does not fit"), and the users at the chosen'
            " context."
        ),
    ),
    Table(
        "users_by_context",
        "Concurrent users by context length, computed from the stated assumptions",
        (
            _CARD,
            Column("model"),
            Column("precision"),
            Column("max_tokens", "tokens", "max resident tokens"),
            *(Column(f"users_at_{c}", "users", f"at {c:,}") for c in USER_CONTEXTS),
        ),
        description="The same budget split into concurrent users at several context lengths.",
    ),
    Table(
        "cache_precisions",
        "Cache precisions",
        (Column("precision"), Column("kv_bytes_per_element", "bytes", "bytes per element")),
        description="The cache's bytes per element at each precision.",
    ),
    Table(
        "configs",
        "Public config.json files: what they give, against the published parameter count",
        (
            Column("model"),
            Column("model_type"),
            Column("params", "parameters", "from the config"),
            Column("active_params", "parameters", "read per token"),
            Column("stated_active_params", "parameters", "read per token, as stated"),
            Column("reference_params", "parameters", "published, or counted"),
            Column("reference", label="checked against", words=True),
            Column("params_agree", label="equal"),
            Column("layers", label="L"),
            Column("heads", label="H"),
            Column("kv_heads", label="KV heads"),
            Column("head_dim", label="d"),
            Column("experts", label="experts per layer"),
            Column("experts_per_token", label="experts per token"),
            Column("window", "tokens", "sliding window"),
            Column("windowed_layers", label="layers with the window"),
            Column("max_position", "tokens", "longest position"),
            Column("problems", label="not derived"),
            Column("source"),
        ),
        description=(
            "Public config.json files with the shape and parameter count derived from them, next to the count"
            " each publisher states (and the run's own model's config next to the count of its real weights)."
        ),
    ),
    Table(
        "architectures",
        "How each architecture lays out its weights (the derivation's rules)",
        (
            Column("model_type"),
            Column("norms_per_layer", label="norms per layer"),
            Column("qk_norm", label="query/key norm"),
            Column("qkv_bias", label="q, k, v bias (code)"),
            Column("o_bias", label="output bias (code)"),
            Column("mlp_bias", label="MLP bias (code)"),
            Column("tied_default", label="tied by default"),
            Column("windowed_layers", label="layers with the window (code)"),
            Column("experts_field", label="experts"),
            Column("experts_per_token_field", label="experts per token"),
            Column("qkv_bias_in_words", label="q, k, v bias", words=True),
            Column("o_bias_in_words", label="output bias", words=True),
            Column("mlp_bias_in_words", label="MLP bias", words=True),
            Column("windowed_layers_in_words", label="layers with the window", words=True),
        ),
        description=(
            "How each architecture lays out its weights: the rules the derivation of a parameter count uses, "
            "as codes, which the calculator reads, and in words."
        ),
    ),
    Table(
        "windowed",
        "Sliding windows: one user's cache, and the users that fit, with and without the window",
        (
            Column("model"),
            Column("window", "tokens"),
            Column("windowed_layers", label="layers with it"),
            Column("layers", label="L"),
            Column("context", "tokens"),
            Column("cache_full_bytes", "bytes", "cache, no window"),
            Column("cache_windowed_bytes", "bytes", "cache, window"),
            Column("cache_fraction", "fraction", "with / without"),
            Column("users_full", "users", "users, no window"),
            Column("users_windowed", "users", "users, window"),
        ),
        description="What a sliding window does to one user's cache and to the users that fit.",
    ),
    Table(
        "card_presets",
        "Cards: memory and bandwidth as their vendors state them",
        (
            Column("card"),
            Column("memory_gib", "GiB", "memory"),
            Column("bandwidth_gb_s", "GB/s", "bandwidth"),
            Column("peak_tflops", "TFLOP/s", "fp16/bf16 matrix peak", description=_PEAK),
            Column("source"),
            Column("peak_source", label="source of the peak"),
        ),
        description=(
            "Cards with their memory, bandwidth and fp16/bf16 matrix peak as their vendors state them: the "
            "calculator's presets."
        ),
    ),
    Table(
        "calculator_defaults",
        "The calculator's starting card and users served",
        (Column("card"), Column("users_served", "users", "users served")),
        description="The card and the users served the calculator starts with.",
    ),
    Table(
        "speed_floor",
        "The decode step's floor: the weights and every user's cache read once per step",
        (
            Column("card"),
            Column("bandwidth_gb_s", "GB/s", "bandwidth"),
            Column("model"),
            Column("users", "users"),
            Column("bytes_per_step", "bytes", "bytes read per step"),
            Column("step_ms", "ms", "step floor"),
            Column("tokens_per_s_per_user", "tokens/s", "per user"),
            Column("tokens_per_s", "tokens/s", "in total"),
            Column("fits", label="fits in memory"),
        ),
        description=(
            "The decode step's floor on each card: the weights and every user's cache read once per step at "
            "the card's bandwidth."
        ),
    ),
    Table(
        "formula_check",
        "The formula against a measured prefill of the run's model",
        (
            Column("tokens", "tokens", "resident tokens"),
            Column("logits_kept", label="logits computed for", words=True),
            Column("weights_bytes", "bytes", "weights (formula)", policy=EXACT_ON_DEVICE),
            Column("cache_formula_bytes", "bytes", "cache (formula)", policy=EXACT_ON_DEVICE),
            Column("cache_measured_bytes", "bytes", "cache (measured storage)", policy=EXACT_ON_DEVICE),
            Column("predicted_bytes", "bytes", "weights + cache + reserve", policy=EXACT_ON_DEVICE),
            Column("baseline_bytes", "bytes", "in use before", policy=TIMING),
            Column("peak_bytes", "bytes", "measured peak", policy=TIMING),
            Column("above_baseline_bytes", "bytes", "peak above before", policy=TIMING),
            Column(
                "transient_bytes",
                "bytes",
                "of which not cache",
                description="peak above before, minus the cache: the pass's working memory",
                policy=TIMING,
            ),
            Column(
                "beyond_weights_and_cache_bytes",
                "bytes",
                "peak − weights − cache",
                description="what the reserve has to cover",
                policy=TIMING,
            ),
            Column("gap_bytes", "bytes", "peak − predicted", policy=TIMING),
        ),
        description=(
            "The run's model actually prefills T tokens: the peak memory (CUDA allocator, or on a CPU the "
            "process's peak resident set) next to the formula's weights + cache + reserve, and the gap."
        ),
    ),
)
VALUES = (
    Value("reserve_gib", "GiB"),
    Value("context_per_user", "tokens"),
    Value("measured_model"),
    Value("check_largest_tokens", "tokens"),
    Value(
        "check_gap_bytes",
        "bytes",
        description="measured peak minus weights + cache + reserve, at the largest token count",
        policy=TIMING,
    ),
    Value(
        "check_prediction_excess_bytes",
        "bytes",
        description="weights + cache + reserve minus the measured peak (positive: the formula over-predicts)",
        policy=TIMING,
    ),
    Value(
        "check_overhead_bytes",
        "bytes",
        description="measured peak minus weights and cache, at the largest token count",
        policy=TIMING,
    ),
    Value("cache_matches_formula", description="every measured cache storage equals the formula"),
    Value("check_dtype", policy=EXACT_ON_DEVICE),
    Value("check_weight_bits", "bits", policy=EXACT_ON_DEVICE),
    Value("check_params", "parameters"),
    Value("check_weights_bytes", "bytes", policy=EXACT_ON_DEVICE),
    Value(
        "check_weights_storage_bytes",
        "bytes",
        description="bytes of the parameter storages actually held by the model",
        policy=EXACT_ON_DEVICE,
    ),
    Value("check_kv_bytes_per_token", "bytes", policy=EXACT_ON_DEVICE),
    Value(
        "all_logits_bytes",
        "bytes",
        description="logits of every position at the largest count: tokens x vocabulary x bytes",
        policy=EXACT_ON_DEVICE,
    ),
    Value("vocabulary", "tokens"),
    Value("check_device", policy=EXACT_ON_DEVICE),
    Value("configs_checked", "models", description="public configs whose derived parameter count is checked"),
    Value("configs_agree", description="every public config gives its published parameter count"),
    Value(
        "measured_config_params",
        "parameters",
        description="the run's model's parameter count as its config.json gives it",
    ),
    Value("measured_config_agrees", description="the run's model's config gives the count of its real weights"),
    Value("windowed_card_gib", "GiB"),
    Value("speed_context", "tokens"),
    Value("speed_model"),
)
