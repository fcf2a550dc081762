"""Text in site_data that is written for a reader, not measured: a method's or a policy's
name, a verdict, a label of a quantization scheme, the reason a sweep stopped. It is
shown in the page's language, through the same catalogs as the generated texts.

Everything else a table or a value holds as text stays as measured: what a model wrote,
prompts and tokens, matrix and model names, kernels' function names, errors, and phrases
that carry numbers written in English form. Listed here by experiment.table.column (a
table's column) or experiment.value (a value)."""

from __future__ import annotations

from typing import Any

from sitekit.i18n import _

WORDS = frozenset(
    {
        # values shown in prose
        "batching.sweep_stop_reason",
        "batching.compiled_method",
        "prefill_decode.compiled_method",
        "chapter.device",
        "quality.default_penalty_source",
        "speculative_decoding.best_draft",
        "speculative_decoding.exactness_draft",
        "weight_quantization.kernel_lowbit_fastest",
        "weight_quantization.kernel_fastest",
        # columns of tables
        "activation_outliers.int8.setting",
        "batching.arrival_requests.policy",
        "batching.arrivals.policy",
        "batching.policies.policy",
        "batching.timeline.policy",
        "batching.paged.scheme",
        "batching.sweep.status",
        "cache_size.attention_variants.variant",
        "cache_size.measured.method",
        "kv_cache.identical_output.method",
        "kv_cache.macs_total.scope",
        "kv_cache.memory.method",
        "kv_cache.memory.steps_run",
        "memory_budget.budget.verdict",
        "memory_budget.configs.reference",
        "memory_budget.formula_check.logits_kept",
        "memory_budget.models.source",
        "prefill_decode.split.phase",
        "quality.quality.label",
        "speculative_decoding.acceptance.label",
        "speculative_decoding.acceptance.kernels",
        "speculative_decoding.acceptance_by_position.label",
        "speculative_decoding.acceptance_by_temperature.label",
        "speculative_decoding.draft_cost.label",
        "speculative_decoding.real_run.label",
        "speculative_decoding.sampled_run.label",
        "speculative_decoding.exactness.sampler",
        "speculative_decoding.expected_tokens.alpha_source",
        "speculative_decoding.speedup.alpha_source",
        "speculative_decoding.speedup.losses",
        "weight_quantization.decode_kernels.label",
        "weight_quantization.errors.label",
        "weight_quantization.outlier_levels.scheme",
        "weight_quantization.sizes.storage",
        "quality.protocol.item",
    }
)


def shown(value: Any, key: str) -> Any:
    """``value`` as the page shows it: a listed text in the page's language, anything
    else unchanged."""
    if isinstance(value, str) and key in WORDS:
        return _(value, "data")
    return value
