"""Public ``config.json`` files of well-known models, with the parameter count each
model's publisher states, to check measure/lab/model_config.py against facts. The
configs keep the published fields that shape the model (and a few that do not, as a
pasted file has them); the counts are those of each model's Hugging Face page
(safetensors metadata). A mixture of experts also states how many of them one token
reads, rounded (Mixtral-8x7B: 12.9 B of 46.7 B, in Mistral's announcement)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from measure.lab.architectures import ARCHITECTURES


@dataclass(frozen=True)
class PublicConfig:
    model: str  # the Hugging Face id
    config: dict[str, Any]
    published_params: int
    # a mixture of experts: the parameters one token reads, as its publisher states them
    # (rounded, as stated), and where
    stated_active_params: int | None = None
    stated_active_source: str = ""

    @property
    def source(self) -> str:
        return f"https://huggingface.co/{self.model}"


def _llama(**fields: Any) -> dict[str, Any]:
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        **fields,
    }


PUBLIC_CONFIGS: tuple[PublicConfig, ...] = (
    PublicConfig(
        "Qwen/Qwen2.5-0.5B-Instruct",
        {
            "architectures": ["Qwen2ForCausalLM"],
            **ARCHITECTURES["qwen2.5-0.5b"],
            "sliding_window": 32768,
            "use_sliding_window": False,
            "max_window_layers": 21,
            "torch_dtype": "bfloat16",
        },
        494_032_768,
    ),
    PublicConfig(
        "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
        _llama(
            hidden_size=2048,
            intermediate_size=5632,
            num_attention_heads=32,
            num_hidden_layers=22,
            num_key_value_heads=4,
            max_position_embeddings=2048,
            vocab_size=32000,
            tie_word_embeddings=False,
        ),
        1_100_048_384,
    ),
    PublicConfig(
        "meta-llama/Llama-2-7b-hf",
        _llama(
            hidden_size=4096,
            intermediate_size=11008,
            num_attention_heads=32,
            num_hidden_layers=32,
            num_key_value_heads=32,
            max_position_embeddings=4096,
            vocab_size=32000,
            tie_word_embeddings=False,
            rope_scaling=None,
            torch_dtype="float16",
        ),
        6_738_415_616,
    ),
    PublicConfig(
        "meta-llama/Meta-Llama-3-8B",
        _llama(
            hidden_size=4096,
            intermediate_size=14336,
            num_attention_heads=32,
            num_hidden_layers=32,
            num_key_value_heads=8,
            max_position_embeddings=8192,
            vocab_size=128256,
            rope_theta=500000.0,
            tie_word_embeddings=False,
            torch_dtype="bfloat16",
        ),
        8_030_261_248,
    ),
    PublicConfig(
        "mistralai/Mistral-7B-v0.1",
        {
            "architectures": ["MistralForCausalLM"],
            "model_type": "mistral",
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "max_position_embeddings": 32768,
            "sliding_window": 4096,
            "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "vocab_size": 32000,
        },
        7_241_732_096,
    ),
    PublicConfig(
        "mistralai/Mixtral-8x7B-v0.1",
        {
            "architectures": ["MixtralForCausalLM"],
            "model_type": "mixtral",
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "max_position_embeddings": 32768,
            "sliding_window": None,
            "rope_theta": 1e6,
            "tie_word_embeddings": False,
            "vocab_size": 32000,
        },
        46_702_792_704,
        12_900_000_000,  # "only uses 12.9B parameters per token"
        "https://mistral.ai/news/mixtral-of-experts/",
    ),
    PublicConfig(
        "microsoft/Phi-3-mini-4k-instruct",
        {
            "architectures": ["Phi3ForCausalLM"],
            "model_type": "phi3",
            "hidden_act": "silu",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "max_position_embeddings": 4096,
            "sliding_window": 2047,
            "tie_word_embeddings": False,
            "vocab_size": 32064,
        },
        3_821_079_552,
    ),
    PublicConfig(
        "google/gemma-2-2b",
        {
            "architectures": ["Gemma2ForCausalLM"],
            "model_type": "gemma2",
            "attention_bias": False,
            "cache_implementation": "hybrid",
            "head_dim": 256,
            "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": 2304,
            "intermediate_size": 9216,
            "max_position_embeddings": 8192,
            "num_attention_heads": 8,
            "num_hidden_layers": 26,
            "num_key_value_heads": 4,
            "query_pre_attn_scalar": 256,
            "sliding_window": 4096,
            "vocab_size": 256000,
        },
        2_614_341_888,
    ),
    PublicConfig(
        "google/gemma-3-270m",
        {
            "architectures": ["Gemma3ForCausalLM"],
            "model_type": "gemma3_text",
            "attention_bias": False,
            "head_dim": 256,
            "hidden_size": 640,
            "intermediate_size": 2048,
            "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 3,
            "max_position_embeddings": 32768,
            "num_attention_heads": 4,
            "num_hidden_layers": 18,
            "num_key_value_heads": 1,
            "query_pre_attn_scalar": 256,
            "sliding_window": 512,
            "vocab_size": 262144,
        },
        268_098_176,
    ),
)
