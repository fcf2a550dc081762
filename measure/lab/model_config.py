"""A model's shape and parameter count, read from its Hugging Face ``config.json``.

What the memory budget needs: layers, key-value heads, head dimension, which layers keep
only a sliding window of tokens, and the parameter count, computed from the shapes of
every weight (embeddings tied or not, biases where the architecture has them, the MLP's
width, the vocabulary). A field that cannot be derived is named in a message, never
guessed; a mixture of experts also gives the parameters one token reads. The calculator
(docs/javascripts/calculator/model_config.js) does the same from the same rules
(measure/lab/architecture_rules.py, written into site_data and read by the page), and
tests/test_calculator_browser.py holds the two derivations equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from measure.lab.architecture_rules import RULES, ArchitectureRule


class ConfigError(ValueError):
    """A config that gives no shape at all: not an object, or no layer count."""


@dataclass(frozen=True)
class ModelShape:
    model_type: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    window: int  # tokens a windowed layer keeps; 0 when no layer has a window
    windowed_layers: int
    tied: bool | None
    params: int | None  # None when the layout is unknown: see ``problems``
    experts: int = 0  # a mixture's experts per layer; 0 when it is none
    experts_per_token: int = 0  # the experts a token's router picks in each layer
    active_params: int | None = None  # the parameters one token reads: ``params`` unless a mixture
    problems: tuple[str, ...] = field(default=())  # one line per field not derived


def _whole(value: object) -> bool:
    """A JSON whole number (32 or 32.0, as JavaScript reads both), not a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and float(value).is_integer()


def _int_field(cfg: dict, name: str, problems: list[str], *, required: bool = True) -> int | None:
    value = cfg.get(name)
    if value is None:
        if required:
            problems.append(f"{name} is missing")
        return None
    if not _whole(value) or value <= 0:
        problems.append(f"{name} must be a positive whole number")
        return None
    return int(value)


def _model_type(cfg: dict) -> str:
    value = cfg.get("model_type")
    return value if isinstance(value, str) else ""


def _flag(cfg: dict, rule_value: str) -> bool:
    if rule_value in ("yes", "no"):
        return rule_value == "yes"
    return bool(cfg.get(rule_value, False))


def _text_config(cfg: dict) -> dict:
    """Multimodal configs nest the language model's fields under ``text_config``."""
    nested = cfg.get("text_config")
    if "num_hidden_layers" not in cfg and isinstance(nested, dict):
        return nested
    return cfg


def windowed_layer_count(cfg: dict, layers: int, rule: ArchitectureRule | None, problems: list[str]) -> tuple[int, int]:
    """(window, layers that keep only the window), from ``layer_types`` when the config
    lists them, else from the architecture's rule."""
    window = cfg.get("sliding_window")
    types = cfg.get("layer_types")
    if isinstance(types, list) and types:
        count = sum(1 for t in types if t == "sliding_attention")
        if len(types) != layers:
            problems.append(f"layer_types lists {len(types)} layers, num_hidden_layers says {layers}")
            return 0, 0
        if count and not (_whole(window) and window > 0):
            problems.append("layer_types has sliding layers but sliding_window is not a positive whole number")
            return 0, 0
        return (int(window), count) if count else (0, 0)
    if window is None or window is False:
        return 0, 0
    if not _whole(window) or window <= 0:
        problems.append("sliding_window must be a positive whole number or null")
        return 0, 0
    window = int(window)
    how = rule.windowed_layers if rule else None
    if how == "none":
        return 0, 0
    if how == "all":
        return window, layers
    if how == "alternate":
        return window, (layers + 1) // 2  # layers 0, 2, 4, ...
    if how == "pattern":
        pattern = cfg.get("sliding_window_pattern", 6)
        if not _whole(pattern) or pattern <= 0:
            problems.append("sliding_window_pattern must be a positive whole number")
            return 0, 0
        count = layers - layers // int(pattern)  # every pattern-th layer attends fully
        return (window, count) if count else (0, 0)
    if how == "qwen2":
        if not cfg.get("use_sliding_window", False):
            return 0, 0
        first = cfg.get("max_window_layers", layers)
        if not _whole(first) or first < 0:
            problems.append("max_window_layers must be a whole number")
            return 0, 0
        count = max(0, layers - int(first))
        return (window, count) if count else (0, 0)
    problems.append(
        f"sliding_window: which layers use it is not declared (no layer_types) for model_type "
        f"'{_model_type(cfg)}'; every layer is counted with full attention"
    )
    return 0, 0


def mlp_parameter_count(*, rule: ArchitectureRule, cfg: dict, hidden: int, intermediate: int) -> int:
    """One MLP, or one expert of a mixture: gate, up and down, and their biases where the
    architecture has them (Phi-3 fuses gate and up: the same count)."""
    mlp = 3 * hidden * intermediate
    if _flag(cfg, rule.mlp_bias):
        mlp += 2 * intermediate + hidden
    return mlp


def parameter_count(
    *,
    rule: ArchitectureRule,
    cfg: dict,
    hidden: int,
    intermediate: int,
    vocab: int,
    layers: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    tied: bool,
) -> int:
    """Every weight of the model, from the shapes of its matrices and vectors."""
    q, kv = heads * head_dim, kv_heads * head_dim
    attention = hidden * q + 2 * hidden * kv + q * hidden
    if _flag(cfg, rule.qkv_bias):
        attention += q + 2 * kv
    if _flag(cfg, rule.o_bias):
        attention += hidden
    if rule.qk_norm:
        attention += 2 * head_dim  # an RMSNorm over each head's queries and keys
    mlp = mlp_parameter_count(rule=rule, cfg=cfg, hidden=hidden, intermediate=intermediate)
    experts = int(cfg[rule.experts_field]) if rule.experts_field else 1
    if experts > 1:
        mlp = experts * mlp + hidden * experts  # the router is a hidden x experts matrix
    per_layer = attention + mlp + rule.norms_per_layer * hidden
    embeddings = vocab * hidden * (1 if tied else 2)
    return embeddings + layers * per_layer + hidden  # + the final norm


def active_parameter_count(
    *, params: int, layers: int, experts: int, experts_per_token: int, expert_params: int
) -> int:
    """The parameters one token reads: all of them but, in every layer, the n - k experts
    its router does not pick (Mixtral-8x7B: 46.7 B held, 12.9 B read)."""
    return params - layers * (experts - experts_per_token) * expert_params


def _experts_picked(cfg: dict, rule: ArchitectureRule, experts: int, problems: list[str]) -> int:
    """The experts a token's router picks, from a mixture's config; 0 when the count is
    missing or impossible (named in ``problems``)."""
    picked = _int_field(cfg, rule.experts_per_token_field, problems)
    if picked is not None and picked > experts:
        problems.append(f"{rule.experts_per_token_field} {picked} is more than {rule.experts_field} {experts}")
        return 0
    return picked or 0


def shape_from_config(cfg: object) -> ModelShape:
    """The shape and parameter count of the model ``cfg`` (a parsed config.json) describes."""
    if not isinstance(cfg, dict):
        raise ConfigError("a config.json is a JSON object ({...})")
    cfg = _text_config(cfg)
    problems: list[str] = []
    layers = _int_field(cfg, "num_hidden_layers", problems)
    if layers is None:
        raise ConfigError("; ".join(problems))
    heads = _int_field(cfg, "num_attention_heads", problems)
    kv_heads = _int_field(cfg, "num_key_value_heads", problems, required=False)
    if cfg.get("num_key_value_heads") is None:
        kv_heads = heads  # absent: multi-head attention, as transformers reads it
    hidden = _int_field(cfg, "hidden_size", problems)
    head_dim = _int_field(cfg, "head_dim", problems, required=False)
    if cfg.get("head_dim") is None and heads and hidden:
        if hidden % heads:
            problems.append(f"head_dim is missing and hidden_size {hidden} is not a multiple of {heads} heads")
        else:
            head_dim = hidden // heads
    if heads and kv_heads and heads % kv_heads:
        problems.append(f"num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}")
    shape_ok = not problems  # a count from a shape with a problem would be a guess
    model_type = _model_type(cfg)
    rule = RULES.get(model_type)
    window, windowed = windowed_layer_count(cfg, layers, rule, problems)

    params, tied, active, experts, picked = None, None, None, 0, 0
    sizes_before = len(problems)
    intermediate = _int_field(cfg, "intermediate_size", problems)
    vocab = _int_field(cfg, "vocab_size", problems)
    if rule is None:
        known = ", ".join(sorted(RULES))
        problems.append(
            f"parameters: model_type '{model_type}' is not one whose layer layout is known here ({known}); "
            "type the count from the model card"
        )
    elif rule.experts_field and not (_whole(cfg.get(rule.experts_field)) and cfg[rule.experts_field] > 0):
        problems.append(f"{rule.experts_field} is missing")
    elif shape_ok and len(problems) == sizes_before:
        tied = bool(cfg.get("tie_word_embeddings", rule.tied_default))
        params = parameter_count(
            rule=rule,
            cfg=cfg,
            hidden=hidden,
            intermediate=intermediate,
            vocab=vocab,
            layers=layers,
            heads=heads,
            kv_heads=kv_heads,
            head_dim=head_dim,
            tied=tied,
        )
        active = params
        if rule.experts_field and int(cfg[rule.experts_field]) > 1:  # one expert, no router: dense
            experts = int(cfg[rule.experts_field])
            picked = _experts_picked(cfg, rule, experts, problems)
            one = mlp_parameter_count(rule=rule, cfg=cfg, hidden=hidden, intermediate=intermediate)
            kw = dict(params=params, layers=layers, experts=experts, experts_per_token=picked, expert_params=one)
            active = active_parameter_count(**kw) if picked else None
    return ModelShape(
        model_type=model_type,
        layers=layers,
        heads=heads or 0,
        kv_heads=kv_heads or 0,
        head_dim=head_dim or 0,
        window=window,
        windowed_layers=windowed,
        tied=tied,
        params=params,
        experts=experts,
        experts_per_token=picked,
        active_params=active,
        problems=tuple(problems),
    )
