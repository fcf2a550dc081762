"""A model's shape and parameter count from its config.json (measure/lab/model_config.py):
against the counts publishers state, against the real modeling code of every
architecture it knows (tiny random models, counted weight by weight), and every field it
cannot derive named."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, DynamicCache

from measure.lab.architectures import ARCHITECTURES
from measure.lab.budget import cache_bytes_per_user, kv_bytes_per_layer_token
from measure.lab.model_config import ARCHITECTURE_RULES, ConfigError, shape_from_config
from measure.reference.public_configs import PUBLIC_CONFIGS


@pytest.mark.parametrize("public", PUBLIC_CONFIGS, ids=lambda p: p.model)
def test_public_configs_give_their_published_counts(public):
    shape = shape_from_config(public.config)
    assert shape.problems == ()
    assert shape.params == public.published_params


def test_qwen_and_smollm2_counts():
    assert shape_from_config(PUBLIC_CONFIGS[0].config).params == 494_032_768  # Qwen2.5-0.5B-Instruct
    # SmolLM2-135M: the count of its real weights, 134,515,008 (tied embeddings counted once)
    assert shape_from_config(ARCHITECTURES["smollm2-135m"]).params == 134_515_008


def _tiny(model_type: str, **extra):
    sizes = dict(
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=128,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    if model_type == "mixtral":
        extra.setdefault("num_local_experts", 3)
    return AutoConfig.for_model(model_type, **{**sizes, **extra})


def _counted(config) -> int:
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())  # a tied tensor is one parameter


VARIANTS = [
    (r.model_type, extra)
    for r in ARCHITECTURE_RULES
    for extra in ({}, {"tie_word_embeddings": True}, {"tie_word_embeddings": False})
] + [
    ("llama", {"attention_bias": True, "mlp_bias": True}),
    ("qwen3", {"attention_bias": True}),
    ("gemma", {"head_dim": 24}),
]


@pytest.mark.parametrize("model_type,extra", VARIANTS, ids=lambda v: str(v))
def test_count_equals_the_modeling_code(model_type, extra):
    config = _tiny(model_type, **extra)
    shape = shape_from_config(config.to_dict())
    assert shape.problems == ()
    assert shape.params == _counted(config)


@pytest.mark.parametrize(
    "model_type,extra",
    [
        ("mistral", {"sliding_window": 16}),
        ("phi3", {"sliding_window": 16}),
        ("gemma2", {"sliding_window": 16, "num_hidden_layers": 5}),
        ("gemma3_text", {"sliding_window": 16, "num_hidden_layers": 13}),
        ("qwen2", {"sliding_window": 16, "use_sliding_window": True, "max_window_layers": 1}),
        ("qwen2", {"sliding_window": 16, "use_sliding_window": False}),
        ("llama", {}),
    ],
    ids=str,
)
def test_windowed_layers_by_rule_equal_the_cache_transformers_builds(model_type, extra):
    """Without layer_types (as older config.json files are), the rule must count the
    layers that transformers gives a sliding-window cache."""
    config = _tiny(model_type, **extra)
    as_file = {k: v for k, v in config.to_dict().items() if k != "layer_types"}
    if model_type == "gemma3_text":
        as_file["sliding_window_pattern"] = 6
    sliding = [type(layer).__name__ for layer in DynamicCache(config=config).layers].count("DynamicSlidingWindowLayer")
    shape = shape_from_config(as_file)
    assert shape.windowed_layers == sliding
    assert shape.window == (16 if sliding else 0)


@pytest.mark.parametrize(
    "model_type,extra",
    [("mistral", {}), ("gemma2", {"num_hidden_layers": 5}), ("gemma3_text", {"num_hidden_layers": 7})],
    ids=str,
)
def test_a_real_cache_holds_what_the_window_formula_says(model_type, extra):
    """Prefill a tiny random model and read its cache. Below the window every layer holds
    every token; past it transformers keeps window - 1 tokens in a windowed layer (the
    new token joins for the step), one fewer than the budget counts, which counts the
    most a windowed layer holds at once."""
    config = _tiny(model_type, sliding_window=16, head_dim=16, **extra)
    shape = shape_from_config(config.to_dict())
    model = AutoModelForCausalLM.from_config(config).eval()
    layer_token = kv_bytes_per_layer_token(kv_heads=shape.kv_heads, head_dim=shape.head_dim, bytes_per_element=4)
    for context in (10, 40):
        with torch.inference_mode():
            cache = model(torch.randint(3, 128, (1, context)), use_cache=True).past_key_values
        held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        formula = cache_bytes_per_user(
            layer_token_bytes=layer_token,
            layers=shape.layers,
            windowed_layers=shape.windowed_layers,
            window=shape.window,
            context=context,
        )
        short = shape.windowed_layers * layer_token if context > shape.window else 0
        assert held == formula - short, (context, held, formula)


def test_head_dim_from_hidden_and_kv_heads_default_to_heads():
    s = shape_from_config(
        {
            "model_type": "llama",
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "hidden_size": 512,
            "intermediate_size": 1024,
            "vocab_size": 1000,
        }
    )
    assert (s.head_dim, s.kv_heads, s.tied) == (64, 8, False)  # llama's default: untied


def test_nested_text_config():
    s = shape_from_config({"model_type": "llava", "text_config": PUBLIC_CONFIGS[0].config})
    assert s.params == 494_032_768


@pytest.mark.parametrize(
    "config,message",
    [
        ([], "JSON object"),
        ({"model_type": "llama"}, "num_hidden_layers is missing"),
        ({"num_hidden_layers": "32"}, "num_hidden_layers must be a positive whole number"),
    ],
)
def test_no_shape_at_all_is_an_error(config, message):
    with pytest.raises(ConfigError, match=message):
        shape_from_config(config)


def test_each_field_not_derived_is_named():
    base = dict(PUBLIC_CONFIGS[1].config)  # TinyLlama
    del base["vocab_size"], base["intermediate_size"]
    s = shape_from_config(base)
    assert s.params is None and s.layers == 22 and s.kv_heads == 4 and s.head_dim == 64
    assert s.problems == ("intermediate_size is missing", "vocab_size is missing")

    s = shape_from_config({**PUBLIC_CONFIGS[1].config, "model_type": "falcon"})
    assert s.params is None and s.layers == 22  # the shape still comes through
    assert len(s.problems) == 1 and "model_type 'falcon'" in s.problems[0] and "type the count" in s.problems[0]

    s = shape_from_config({**PUBLIC_CONFIGS[1].config, "model_type": "falcon", "sliding_window": 64})
    assert s.window == 0 and any("sliding_window" in p and "full attention" in p for p in s.problems)

    s = shape_from_config({**PUBLIC_CONFIGS[1].config, "hidden_size": 2047, "head_dim": None})
    assert s.params is None and any("not a multiple of 32 heads" in p for p in s.problems)

    s = shape_from_config({**PUBLIC_CONFIGS[4].config, "layer_types": ["full_attention"] * 3})  # Mistral, 32 layers
    assert s.windowed_layers == 0 and any("layer_types lists 3 layers" in p for p in s.problems)

    s = shape_from_config({k: v for k, v in PUBLIC_CONFIGS[5].config.items() if k != "num_local_experts"})
    assert s.params is None and "num_local_experts is missing" in s.problems
