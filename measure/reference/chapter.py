"""The figures the source chapter reported, section by section, as it states them: facts
about another run (Qwen2.5-0.5B-Instruct, mostly fp16, on an 8 GB laptop GPU), set
beside this run's on each page. Typed from the chapter's content specification
(the spec's section numbers are given), never measured here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChapterFigure:
    name: str  # the value's name in site_data/chapter/
    section: str  # the experiment (and page) it belongs to
    value: float | int | str
    unit: str
    what: str
    where: str  # the section of the chapter that states it


# Pure numbers, written without a unit: relative errors, perplexities, a dimension's
# index and its magnitude.
DIMENSIONLESS = (
    "worst_int4_tensor",
    "nf4_error",
    "g128_error",
    "outlier_dim",
    "outlier_value",
    "median_dim_max",
    "ppl_reference",
    "ppl_int8_row",
    "ppl_nf4",
    "ppl_int4_g128",
)

SOURCE = "the source chapter (Qwen2.5-0.5B-Instruct, fp16, an 8 GB laptop GPU), as its content specification records it"

FIGURES: tuple[ChapterFigure, ...] = (
    ChapterFigure("model", "chapter", "Qwen2.5-0.5B-Instruct", "", "the model the chapter measured", "introduction"),
    ChapterFigure("model_params", "chapter", 494_032_768, "parameters", "its parameters", "introduction"),
    ChapterFigure("device", "chapter", "8 GB laptop GPU", "", "the device", "introduction"),
    ChapterFigure("dtype", "chapter", "fp16", "", "the precision of most of its runs", "introduction"),
    # §1 the KV cache
    ChapterFigure("kv_new_tokens", "kv_cache", 48, "tokens", "tokens generated with and without the cache", "§1.1"),
    ChapterFigure("kv_speedup", "kv_cache", 9, "x", "cached generation against recompute (about)", "§1.1"),
    ChapterFigure("kv_memory_tokens", "kv_cache", 256, "tokens", "tokens generated for the memory comparison", "§1.4"),
    ChapterFigure(
        "kv_memory_ratio", "kv_cache", 8.3, "x", "memory above the weights, recompute against cached", "§1.4"
    ),
    # §2 prefill and decode
    ChapterFigure("split_prompt_tokens", "prefill_decode", 40, "tokens", "prompt tokens of the split run", "§2.1"),
    ChapterFigure("prefill_s", "prefill_decode", 1.0224, "s", "prefill time of the whole prompt", "§2.1"),
    ChapterFigure("prefill_ms_per_token", "prefill_decode", 25.6, "ms", "prefill time per prompt token", "§2.1"),
    ChapterFigure("decode_s_per_step", "prefill_decode", 0.1665, "s", "time of one decode step", "§2.1"),
    ChapterFigure(
        "token_cost_ratio", "prefill_decode", 6, "x", "a generated token against a prompt token (about)", "§2.1"
    ),
    ChapterFigure(
        "decode_flat_up_to",
        "prefill_decode",
        1024,
        "tokens",
        "cache length up to which the step did not change",
        "§2.3",
    ),
    # §4 batching
    ChapterFigure("batch_gain_16", "batching", 6.0, "x", "throughput from B = 1 to B = 16", "§4.1"),
    ChapterFigure("batch_wait_16", "batching", 2.67, "x", "each request's wait from B = 1 to B = 16", "§4.1"),
    ChapterFigure("knee_batch", "batching", 16, "requests", "the batch size of the knee", "§4.1"),
    ChapterFigure("workload_total", "batching", 1874, "tokens", "output tokens of the 64 requests", "§4.2"),
    ChapterFigure("workload_longest", "batching", 231, "tokens", "the longest request's output", "§4.2"),
    ChapterFigure("continuous_throughput", "batching", 1.6, "x", "throughput, continuous against static", "§4.2"),
    ChapterFigure(
        "continuous_mean_latency", "batching", 10, "x", "mean latency, static against continuous (more than)", "§4.2"
    ),
    # §5 quantizing weights
    ChapterFigure("worst_int4_tensor", "weight_quantization", 0.99, "", "worst matrix error, int4 per-tensor", "§5.3"),
    ChapterFigure("row_over_tensor", "weight_quantization", 3.4, "x", "int4 error divided by going per-row", "§5.3"),
    ChapterFigure("nf4_error", "weight_quantization", 0.0952, "", "mean relative error, NF4 block-64", "§5.3"),
    ChapterFigure("g128_error", "weight_quantization", 0.1323, "", "mean relative error, int4 group-128", "§5.3"),
    ChapterFigure(
        "outlier_matrix",
        "weight_quantization",
        "model.layers.12.mlp.down_proj.weight",
        "",
        "the most outlier-heavy matrix",
        "§5.4",
    ),
    # §6 activation outliers
    ChapterFigure("outlier_dim", "activation_outliers", 62, "", "the outlier dimension", "§6.1"),
    ChapterFigure("outlier_value", "activation_outliers", 1579.6, "", "its max |h|", "§6.1"),
    ChapterFigure("median_dim_max", "activation_outliers", 1.6, "", "the median dimension never exceeds", "§6.1"),
    ChapterFigure(
        "int8_levels", "activation_outliers", 14, "levels", "INT8 levels used of 256, one tensor-wide scale", "§6.3"
    ),
    ChapterFigure("scale_ratio", "activation_outliers", 22, "x", "scale shrink without the top 4 dimensions", "§6.3"),
    # §7 quality
    ChapterFigure("ppl_reference", "quality", 23.08, "", "reference perplexity (its own draft text)", "§7"),
    ChapterFigure("ppl_int8_row", "quality", 22.96, "", "int8 per-row perplexity", "§7"),
    ChapterFigure("agreed_int8_row", "quality", 142, "positions", "int8 per-row agreement, of 144", "§7"),
    ChapterFigure("ppl_nf4", "quality", 24.55, "", "NF4 perplexity", "§7"),
    ChapterFigure("ppl_int4_g128", "quality", 31.08, "", "int4 group-128 perplexity", "§7"),
    # §8 speculative decoding
    ChapterFigure("speedup_a09_g8", "speculative_decoding", 3.40, "x", "the formula at α = 0.9, γ = 8, c = 0.1", "§8"),
    ChapterFigure("speedup_a03_g8", "speculative_decoding", 0.79, "x", "the formula at α = 0.3, γ = 8, c = 0.1", "§8"),
    # §9 distillation
    ChapterFigure("top_token", "distillation", " jug", "", "the most probable next token", "§9"),
    ChapterFigure("top_probability", "distillation", 0.1355, "fraction", "its probability", "§9"),
    ChapterFigure("top_to_third_t1", "distillation", 2.24, "x", "top-to-third ratio at T = 1", "§9"),
    ChapterFigure("top_to_third_t2", "distillation", 1.50, "x", "top-to-third ratio at T = 2", "§9"),
    # §3 how big the cache is
    ChapterFigure(
        "qwen_bytes_per_token", "cache_size", 12_288, "bytes", "Qwen2.5-0.5B's cache per token in fp16", "§3.1"
    ),
    ChapterFigure(
        "bytes_295_tokens", "cache_size", 3_624_960, "bytes", "the measured cache of 295 tokens, fp16", "§3.2"
    ),
    ChapterFigure(
        "mib_65536_tokens", "cache_size", 768, "MiB", "the cache of 65,536 resident tokens in each shape", "§3.2"
    ),
    ChapterFigure(
        "mha_bytes_per_token", "cache_size", 86_016, "bytes", "per token with 14 key-value heads (MHA)", "§3.3"
    ),
    ChapterFigure("mqa_bytes_per_token", "cache_size", 6_144, "bytes", "per token with 1 key-value head (MQA)", "§3.3"),
)
