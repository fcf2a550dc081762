"""The weight layout of each architecture the calculator knows (``model_type``), written
into site_data (memory_budget.architectures) for the page's script and shown on the
calculator's page: each rule as its code, which measure/lab/model_config.py and the
page's script read, and in words, which the page shows in its reader's language (the
templates of sitedata.wording, translated by the build)."""

from __future__ import annotations

from dataclasses import dataclass

from sitedata import wording


@dataclass(frozen=True)
class ArchitectureRule:
    """How one ``model_type`` lays out its weights.

    A bias flag is ``"yes"``, ``"no"`` or the config field that switches it (absent
    means no bias). ``windowed_layers`` says which layers keep a sliding window when the
    config sets ``sliding_window`` and does not list ``layer_types``: ``"none"``,
    ``"all"``, ``"alternate"`` (every even layer, Gemma 2), ``"pattern"`` (all but every
    ``sliding_window_pattern``-th layer, Gemma 3) or ``"qwen2"`` (layers from
    ``max_window_layers`` on, only when ``use_sliding_window`` is true).
    """

    model_type: str
    norms_per_layer: int
    qk_norm: bool
    qkv_bias: str
    o_bias: str
    mlp_bias: str
    tied_default: bool  # the architecture's default when tie_word_embeddings is absent
    windowed_layers: str
    experts_field: str = ""  # mixture of experts: the field counting each layer's experts
    experts_per_token_field: str = ""  # and the field counting the experts a token's router picks


# From the modeling code of each architecture in transformers: the weights of one
# decoder layer and the defaults of its configuration class.
ARCHITECTURE_RULES: tuple[ArchitectureRule, ...] = (
    ArchitectureRule("llama", 2, False, "attention_bias", "attention_bias", "mlp_bias", False, "none"),
    ArchitectureRule("mistral", 2, False, "no", "no", "no", False, "all"),
    ArchitectureRule("mixtral", 2, False, "no", "no", "no", False, "all", "num_local_experts", "num_experts_per_tok"),
    ArchitectureRule("qwen2", 2, False, "yes", "no", "no", False, "qwen2"),
    ArchitectureRule("qwen3", 2, True, "attention_bias", "attention_bias", "no", False, "qwen2"),
    ArchitectureRule("gemma", 2, False, "attention_bias", "attention_bias", "no", True, "none"),
    ArchitectureRule("gemma2", 4, False, "attention_bias", "attention_bias", "no", True, "alternate"),
    ArchitectureRule("gemma3_text", 4, True, "attention_bias", "attention_bias", "no", True, "pattern"),
    ArchitectureRule("phi3", 2, False, "no", "no", "no", False, "all"),
)
RULES = {r.model_type: r for r in ARCHITECTURE_RULES}


# A rule's codes in words: a bias's yes and no, which layers keep a window.
_WINDOW_WORDS = {"none": "no layer", "all": "every layer", "alternate": "every other layer"}


def _flag_words(code: str) -> str:
    return code if code in ("yes", "no") else wording.RULE_AS_FIELD.format(field=code)


def _window_words(code: str) -> str:
    if code == "pattern":
        return wording.RULE_WINDOW_PATTERN.format(field="sliding_window_pattern")
    if code == "qwen2":
        return wording.RULE_WINDOW_FROM.format(field="max_window_layers", flag="use_sliding_window")
    return _WINDOW_WORDS[code]


def rule_rows() -> list[dict]:
    """``ARCHITECTURE_RULES`` as table rows: each rule's codes, for the page's script, and
    the same rules in words, for the page's reader."""
    return [
        {
            "model_type": r.model_type,
            "norms_per_layer": r.norms_per_layer,
            "qk_norm": r.qk_norm,
            "qkv_bias": r.qkv_bias,
            "o_bias": r.o_bias,
            "mlp_bias": r.mlp_bias,
            "tied_default": r.tied_default,
            "windowed_layers": r.windowed_layers,
            "experts_field": r.experts_field,
            "experts_per_token_field": r.experts_per_token_field,
            "qkv_bias_in_words": _flag_words(r.qkv_bias),
            "o_bias_in_words": _flag_words(r.o_bias),
            "mlp_bias_in_words": _flag_words(r.mlp_bias),
            "windowed_layers_in_words": _window_words(r.windowed_layers),
        }
        for r in ARCHITECTURE_RULES
    ]
