"""What the chapter's predictions write (``predictions.py``): its tables and values, declared
once. Every number is worked out from published facts (datasheets, the model's config):
it reproduces on any machine."""

from sitedata.policies import NUMERIC_ANYWHERE
from sitedata.schema import Column, Table, Value

_CARD = Column("card", description="the card's key: laptop_low, laptop_high, h100, h200")


def _n(name: str, unit: str, label: str, description: str = "") -> Column:
    return Column(name, unit, label, description=description, policy=NUMERIC_ANYWHERE)


PREDICTION_TABLES = (
    Table(
        "gpu_predictions",
        "Predicted by the roofline: Qwen2.5-0.5B-Instruct in fp16 on three GPUs",
        (
            _CARD,
            Column("name", label="card"),
            Column("memory_gib", "GiB", "memory"),
            _n("bandwidth_gb_s", "GB/s", "memory bandwidth (datasheet)"),
            _n("fp16_tflops", "TFLOP/s", "fp16 matrix peak, dense (datasheet)"),
            _n("balance_flops_per_byte", "FLOP/byte", "balance point"),
            _n("decode_floor_ms", "ms", "decode step's floor: weights / bandwidth"),
            _n("tokens_per_s", "tokens/s", "tokens/s at the floor"),
            Column("compute_bound_batch_64", "requests", "decode compute-bound from batch (64-token caches)"),
            Column("compute_bound_batch_1024", "requests", "decode compute-bound from batch (1,024-token caches)"),
            _n("token_cost_ratio", "x", "a generated token against a prompt token (40-token prompt)"),
            _n("kv_speedup", "x", "cached against recompute, 48 new tokens (prefill counted)"),
            _n("decode_rise", "fraction", "decode step, 16 to 1,024 cached tokens"),
            _n("int8_draft_cost", "fraction", "draft cost, int8 weights"),
            _n("int4_draft_cost", "fraction", "draft cost, int4 group-128"),
            Column("source", description="where the card's figures come from"),
        ),
        description=(
            "Predicted, not measured: each card's roofline from its datasheet (memory bandwidth; dense fp16 matrix "
            "peak at every row count; no fixed cost per operator), and Qwen2.5-0.5B-Instruct in fp16 counted from its "
            "config. The batch at which a decode step's arithmetic outlasts its bytes (each request's cache read "
            "once; empty where no batch gets there), a generated token against a prompt token, the cache's speed-up "
            "over 48 new tokens with the prefill in the cached time, the step's rise from 16 to 1,024 cached tokens "
            "(the growing cache's three passes), and a draft of the same model with lighter weights, as a fraction "
            "of a target step."
        ),
    ),
    Table(
        "gpu_speculation",
        "Predicted by the roofline: when speculative decoding breaks even on each GPU",
        (
            _CARD,
            Column("name", label="card"),
            Column("gamma", "tokens", "draft length γ"),
            Column("alpha", "", "acceptance α"),
            _n("verify_cost", "x", "verifying γ tokens / one target step"),
            _n("expected_tokens", "tokens", "tokens per verification"),
            _n("break_even_draft_cost", "fraction", "break-even draft cost c"),
        ),
        description=(
            "Predicted, not measured: for each card, draft length γ and acceptance rate α, the target's pass over "
            "γ + 1 positions (against a 64-token cache) over its one-token step, the tokens one verification yields, "
            "(1 - α^(γ+1)) / (1 - α), and the draft cost per token, as a fraction of a target step, below which "
            "speculative decoding gains: (tokens - verify cost) / γ."
        ),
    ),
)

PREDICTION_VALUES = (
    Value("predicted_dtype", description="the dtype the GPU predictions count in"),
    Value("kv_bytes_per_token_fp16", "bytes", description="Qwen2.5-0.5B's cache per token in fp16, from its config"),
    Value("weight_bytes_fp16", "bytes", description="Qwen2.5-0.5B's parameters in fp16, from its config"),
    Value("kv_share_fp16", "fraction", description="its cache per token over its weights", policy=NUMERIC_ANYWHERE),
    Value(
        "step_over_floor_low",
        "x",
        description="the chapter's decode step over its laptop GPU's floor, at the slowest memory",
        policy=NUMERIC_ANYWHERE,
    ),
    Value("step_over_floor_high", "x", description="the same at the fastest memory", policy=NUMERIC_ANYWHERE),
    Value(
        "prefill_over_floor_low",
        "x",
        description="the chapter's 40-token prefill over its predicted time, at the slowest memory",
        policy=NUMERIC_ANYWHERE,
    ),
    Value("prefill_over_floor_high", "x", description="the same at the fastest memory", policy=NUMERIC_ANYWHERE),
    Value("laptop_floor_low_ms", "ms", description="the laptop range's lowest decode floor", policy=NUMERIC_ANYWHERE),
    Value("laptop_floor_high_ms", "ms", description="the laptop range's highest decode floor", policy=NUMERIC_ANYWHERE),
    Value("laptop_token_cost_ratio_low", "x", policy=NUMERIC_ANYWHERE),
    Value("laptop_token_cost_ratio_high", "x", policy=NUMERIC_ANYWHERE),
    Value("laptop_kv_speedup_low", "x", policy=NUMERIC_ANYWHERE),
    Value("laptop_kv_speedup_high", "x", policy=NUMERIC_ANYWHERE),
    Value("laptop_decode_rise_low", "fraction", policy=NUMERIC_ANYWHERE),
    Value("laptop_decode_rise_high", "fraction", policy=NUMERIC_ANYWHERE),
    Value("cache_passes", "", description="passes over the cache a growing cache's decode step makes"),
)
