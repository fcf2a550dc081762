"""A model's shape and parameter count from its config.json (measure/lab/model_config.py):
against the counts publishers state, against the real modeling code of every
architecture it knows (tiny random models, counted weight by weight), and every field it
cannot derive named."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, DynamicCache

from measure.lab.architecture_rules import ARCHITECTURE_RULES, rule_rows
from measure.lab.architectures import ARCHITECTURES
from measure.lab.budget import cache_bytes_per_user, kv_bytes_per_layer_token
from measure.lab.model_config import ConfigError, shape_from_config
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


# Every branch of the window rules and every message, exactly: (edit of the config,
# window, layers with it, problems). The base is Mistral-7B-v0.1 (32 layers) unless
# the edit names another model_type.
_MISTRAL = PUBLIC_CONFIGS[4].config
_WINDOW_CASES = [
    ({}, 4096, 32, ()),
    ({"sliding_window": None}, 0, 0, ()),
    ({"sliding_window": False}, 0, 0, ()),
    ({"sliding_window": 1}, 1, 32, ()),
    ({"sliding_window": 0}, 0, 0, ("sliding_window must be a positive whole number or null",)),
    ({"sliding_window": -5}, 0, 0, ("sliding_window must be a positive whole number or null",)),
    ({"sliding_window": 1.5}, 0, 0, ("sliding_window must be a positive whole number or null",)),
    ({"sliding_window": True}, 0, 0, ("sliding_window must be a positive whole number or null",)),
    ({"sliding_window": 64.0}, 64, 32, ()),
    ({"layer_types": "sliding_attention"}, 4096, 32, ()),  # not a list: the rule decides
    ({"layer_types": []}, 4096, 32, ()),
    ({"layer_types": ["full_attention"] * 32}, 0, 0, ()),
    ({"layer_types": ["sliding_attention", "full_attention"] * 16}, 4096, 16, ()),
    ({"layer_types": ["sliding_attention"] * 32, "sliding_window": 1}, 1, 32, ()),
    (
        {"layer_types": ["sliding_attention"] * 32, "sliding_window": 0},
        0,
        0,
        ("layer_types has sliding layers but sliding_window is not a positive whole number",),
    ),
    (
        {"layer_types": ["sliding_attention"] * 32, "sliding_window": 2.5},
        0,
        0,
        ("layer_types has sliding layers but sliding_window is not a positive whole number",),
    ),
    ({"layer_types": ["full_attention"] * 3}, 0, 0, ("layer_types lists 3 layers, num_hidden_layers says 32",)),
    ({"model_type": "llama", "sliding_window": 64}, 0, 0, ()),
    ({"model_type": "gemma2", "num_hidden_layers": 4, "sliding_window": 8}, 8, 2, ()),
    ({"model_type": "gemma2", "num_hidden_layers": 5, "sliding_window": 8}, 8, 3, ()),
    ({"model_type": "gemma3_text", "num_hidden_layers": 13, "sliding_window": 8}, 8, 11, ()),  # pattern 6
    (
        {"model_type": "gemma3_text", "num_hidden_layers": 13, "sliding_window": 8, "sliding_window_pattern": 2},
        8,
        7,
        (),
    ),
    (
        {"model_type": "gemma3_text", "num_hidden_layers": 13, "sliding_window": 8, "sliding_window_pattern": 1},
        0,
        0,
        (),
    ),
    (
        {"model_type": "gemma3_text", "sliding_window": 8, "sliding_window_pattern": 0},
        0,
        0,
        ("sliding_window_pattern must be a positive whole number",),
    ),
    (
        {"model_type": "gemma3_text", "sliding_window": 8, "sliding_window_pattern": -2},
        0,
        0,
        ("sliding_window_pattern must be a positive whole number",),
    ),
    (
        {"model_type": "gemma3_text", "sliding_window": 8, "sliding_window_pattern": None},
        0,
        0,
        ("sliding_window_pattern must be a positive whole number",),
    ),
    ({"model_type": "qwen2"}, 0, 0, ()),  # use_sliding_window absent: off
    ({"model_type": "qwen2", "use_sliding_window": True}, 0, 0, ()),  # max_window_layers absent: all layers
    ({"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 0}, 4096, 32, ()),
    ({"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 30}, 4096, 2, ()),
    ({"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 40}, 0, 0, ()),
    (
        {"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": -1},
        0,
        0,
        ("max_window_layers must be a whole number",),
    ),
    (
        {"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": None},
        0,
        0,
        ("max_window_layers must be a whole number",),
    ),
]


@pytest.mark.parametrize("edit,window,windowed,problems", _WINDOW_CASES, ids=lambda v: str(v)[:70])
def test_window_rules_exactly(edit, window, windowed, problems):
    s = shape_from_config({**_MISTRAL, **edit})
    assert (s.window, s.windowed_layers) == (window, windowed)
    assert type(s.window) is int and type(s.windowed_layers) is int
    assert s.problems == problems


def test_an_unknown_architecture_with_a_window_says_so_and_counts_full_attention():
    s = shape_from_config({**_MISTRAL, "model_type": "falcon"})
    assert (s.window, s.windowed_layers, s.params, s.model_type) == (0, 0, None, "falcon")
    known = "gemma, gemma2, gemma3_text, llama, mistral, mixtral, phi3, qwen2, qwen3"
    assert s.problems == (
        "sliding_window: which layers use it is not declared (no layer_types) for model_type 'falcon'; "
        "every layer is counted with full attention",
        f"parameters: model_type 'falcon' is not one whose layer layout is known here ({known}); "
        "type the count from the model card",
    )
    assert (
        shape_from_config({**_MISTRAL, "model_type": 7})
        .problems[0]
        .endswith("model_type ''; every layer is counted with full attention")
    )


def test_shape_fields_exactly():
    s = shape_from_config(_MISTRAL)
    assert (s.model_type, s.layers, s.heads, s.kv_heads, s.head_dim, s.tied) == ("mistral", 32, 32, 8, 128, False)
    assert type(s.head_dim) is int
    # head_dim from hidden / heads stays a whole number
    s = shape_from_config({**_MISTRAL, "hidden_size": 4096})
    assert s.head_dim == 128 and type(s.head_dim) is int
    # no key-value heads named: multi-head, and nothing to report
    s = shape_from_config({k: v for k, v in _MISTRAL.items() if k != "num_key_value_heads"})
    assert (s.kv_heads, s.problems) == (32, ())


@pytest.mark.parametrize(
    "edit,problems",
    [
        ({"num_attention_heads": None}, ("num_attention_heads is missing",)),
        ({"num_attention_heads": 0}, ("num_attention_heads must be a positive whole number",)),
        ({"num_key_value_heads": "8"}, ("num_key_value_heads must be a positive whole number",)),
        ({"hidden_size": None}, ("hidden_size is missing",)),
        ({"head_dim": -1}, ("head_dim must be a positive whole number",)),
        ({"num_key_value_heads": 5}, ("num_attention_heads 32 is not a multiple of num_key_value_heads 5",)),
        ({"hidden_size": 4097}, ("head_dim is missing and hidden_size 4097 is not a multiple of 32 heads",)),
        ({"vocab_size": 0}, ("vocab_size must be a positive whole number",)),
        ({"intermediate_size": True}, ("intermediate_size must be a positive whole number",)),
    ],
    ids=str,
)
def test_each_bad_field_is_named_exactly(edit, problems):
    s = shape_from_config({**{k: v for k, v in _MISTRAL.items() if k != "head_dim"}, **edit})
    assert s.problems == problems
    assert s.params is None


def test_missing_shape_fields_leave_zeros_not_guesses():
    s = shape_from_config({"model_type": "llama", "num_hidden_layers": 2})
    assert (s.heads, s.kv_heads, s.head_dim, s.params, s.tied) == (0, 0, 0, None, None)


def test_no_shape_messages_exactly():
    with pytest.raises(ConfigError) as e:
        shape_from_config("[]")
    assert str(e.value) == "a config.json is a JSON object ({...})"
    with pytest.raises(ConfigError) as e:
        shape_from_config({"num_hidden_layers": 0})
    assert str(e.value) == "num_hidden_layers must be a positive whole number"


def test_experts_counted_and_checked():
    mixtral = PUBLIC_CONFIGS[5].config
    one = shape_from_config({**mixtral, "num_local_experts": 1})
    # one expert and no router: the same weights as Mistral-7B-v0.1 without its window
    assert one.params == shape_from_config(_MISTRAL).params == 7_241_732_096
    for bad in (0, -8, 2.5, None):
        s = shape_from_config({**mixtral, "num_local_experts": bad})
        assert s.params is None and s.problems == ("num_local_experts is missing",)


def test_a_field_named_like_a_rule_value_changes_nothing():
    # the rules say "yes", "no" or the name of a field; a config field called "no" is not one
    assert shape_from_config({**_MISTRAL, "no": True, "yes": False}).params == 7_241_732_096


def test_rule_rows_are_the_rules_the_page_reads():
    rows = rule_rows()
    assert [r["model_type"] for r in rows] == [r.model_type for r in ARCHITECTURE_RULES]
    assert rows[0] == {
        "model_type": "llama",
        "norms_per_layer": 2,
        "qk_norm": False,
        "qkv_bias": "attention_bias",
        "o_bias": "attention_bias",
        "mlp_bias": "mlp_bias",
        "tied_default": False,
        "windowed_layers": "none",
        "experts_field": "",
        "experts_per_token_field": "",
        # the same rules in words, for the page's reader (translated by the build)
        "qkv_bias_in_words": "as attention_bias says",
        "o_bias_in_words": "as attention_bias says",
        "mlp_bias_in_words": "as mlp_bias says",
        "windowed_layers_in_words": "no layer",
    }
    assert rows[2]["experts_field"] == "num_local_experts" and rows[7]["qk_norm"] is True
    assert rows[2]["experts_per_token_field"] == "num_experts_per_tok"
    words = {r["model_type"]: (r["qkv_bias_in_words"], r["windowed_layers_in_words"]) for r in rows}
    assert words["qwen2"] == ("yes", "from layer max_window_layers on, if use_sliding_window")
    assert words["mistral"] == ("no", "every layer") and words["gemma2"][1] == "every other layer"
    assert words["gemma3_text"][1] == "all but one in every sliding_window_pattern"


def test_the_rules_in_words_are_read_back_into_their_templates():
    """The build writes each rule's words in the page's language from its template
    (sitedata.wording): every text with a field parses back to its template and field."""
    from sitedata import wording

    texts = {t for r in rule_rows() for k, t in r.items() if k.endswith("_in_words")}
    fixed = {"yes", "no", "no layer", "every layer", "every other layer"}
    assert fixed <= texts
    for text in texts - fixed:
        template, fields = wording.parse(text)
        assert template in (wording.RULE_AS_FIELD, wording.RULE_WINDOW_PATTERN, wording.RULE_WINDOW_FROM)
        assert template.format(**fields) == text


def test_a_mixture_gives_the_parameters_a_token_reads():
    mixtral = PUBLIC_CONFIGS[5]
    s = shape_from_config(mixtral.config)
    # 46,702,792,704 - 32 layers x (8 - 2) experts x 3 x 4,096 x 14,336 = 12,879,925,248
    assert (s.experts, s.experts_per_token) == (8, 2)
    assert s.active_params == 46_702_792_704 - 32 * 6 * 3 * 4096 * 14336 == 12_879_925_248
    # Mistral states 12.9B per token: the count rounds to it
    assert round(s.active_params, -8) == mixtral.stated_active_params == 12_900_000_000
    # a model that is no mixture reads every parameter
    dense = shape_from_config(_MISTRAL)
    assert (dense.experts, dense.experts_per_token, dense.active_params) == (0, 0, dense.params)


def test_the_active_count_equals_the_modeling_codes_weights():
    """A tiny Mixtral of n experts, k a token: what a token reads is the model with k
    experts (counted weight by weight) plus the router's columns of the other n - k, which
    every token reads."""
    n, k, layers, hidden = 5, 2, 4, 64
    config = _tiny("mixtral", num_local_experts=n, num_experts_per_tok=k)
    shape = shape_from_config(config.to_dict())
    with_k = _counted(_tiny("mixtral", num_local_experts=k, num_experts_per_tok=k))
    assert shape.params == _counted(config)
    assert shape.active_params == with_k + layers * (n - k) * hidden


def test_a_mixture_without_its_picked_count_keeps_its_size_and_says_what_is_missing():
    config = {k: v for k, v in PUBLIC_CONFIGS[5].config.items() if k != "num_experts_per_tok"}
    s = shape_from_config(config)
    assert s.params == 46_702_792_704 and s.active_params is None
    assert (s.experts, s.experts_per_token) == (8, 0)
    assert s.problems == ("num_experts_per_tok is missing",)
    s = shape_from_config({**PUBLIC_CONFIGS[5].config, "num_experts_per_tok": 9})
    assert s.problems == ("num_experts_per_tok 9 is more than num_local_experts 8",)
    assert s.params == 46_702_792_704 and s.active_params is None


def test_a_top_level_shape_wins_over_a_nested_text_config():
    s = shape_from_config({**_MISTRAL, "text_config": PUBLIC_CONFIGS[0].config})
    assert s.model_type == "mistral" and s.params == 7_241_732_096


def test_qwen2_windows_need_use_sliding_window():
    s = shape_from_config({**_MISTRAL, "model_type": "qwen2", "max_window_layers": 0})
    assert (s.window, s.windowed_layers) == (0, 0)


def test_two_experts_are_a_mixture():
    # Mistral-7B's shapes with two MLPs per layer and a 4,096 x 2 router
    two = shape_from_config({**PUBLIC_CONFIGS[5].config, "num_local_experts": 2})
    assert two.params == 7_241_732_096 + 32 * (3 * 4096 * 14336 + 4096 * 2)
