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
