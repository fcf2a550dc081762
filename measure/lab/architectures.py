"""The architectures a run can instantiate with random weights (``arch:<name>``)."""

from __future__ import annotations

from typing import Any

# Architectures by their published config.json (hub files of the named models); only
# the shapes matter here, the weights are drawn at random.
ARCHITECTURES: dict[str, dict[str, Any]] = {
    "qwen2.5-0.5b": {
        "model_type": "qwen2",
        "vocab_size": 151936,
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
    },
    "smollm2-135m": {
        "model_type": "llama",
        "vocab_size": 49152,
        "hidden_size": 576,
        "intermediate_size": 1536,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "head_dim": 64,
        "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-5,
        "rope_theta": 100000.0,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
    },
    # Small enough for tests to run every experiment in seconds.
    "tiny": {
        "model_type": "llama",
        "vocab_size": 512,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
    },
    # The Qwen2 code path (biases on the attention projections) at the size of "tiny": the
    # rehearsal test runs the GPU command's code with it, compilation included, in seconds.
    "qwen2-tiny": {
        "model_type": "qwen2",
        "vocab_size": 512,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
    },
}
