/*
 * A config.json's shape and parameter count, for the calculator: a mirror of
 * measure/lab/model_config.py. The architecture rules are the site_data table
 * memory_budget.architectures, written from model_config.py, so there is one copy of
 * them. tests/test_calculator_browser.py holds the two derivations equal, every problem
 * included.
 *
 * A problem is a code with its values ({code: "missing", values: {name: "vocab_size"}}),
 * never a text: docs/javascripts/calculator/messages.js writes it, in English as Python
 * does or in the page's language.
 */
(function () {
  "use strict";

  var budget = window.LLMCalculator.budget;

  function report(problems, code, values) {
    problems.push({ code: code, values: values || {} });
  }

  /* A config that gives no shape at all: not an object, or no layer count. */
  function ConfigError(problems) {
    this.problems = problems;
  }

  function whole(v) {
    return typeof v === "number" && Number.isInteger(v);
  }

  function has(cfg, name) {
    return Object.prototype.hasOwnProperty.call(cfg, name);
  }

  function get(cfg, name) {
    return has(cfg, name) ? cfg[name] : undefined;
  }

  function absent(cfg, name) {
    var v = get(cfg, name);
    return v === undefined || v === null;
  }

  function isObject(v) {
    return v !== null && typeof v === "object" && !Array.isArray(v);
  }

  function intField(cfg, name, problems, required) {
    var v = get(cfg, name);
    if (v === undefined || v === null) {
      if (required) report(problems, "missing", { name: name });
      return null;
    }
    if (!whole(v) || v <= 0) {
      report(problems, "not_positive_whole", { name: name });
      return null;
    }
    return v;
  }

  function modelType(cfg) {
    var v = get(cfg, "model_type");
    return typeof v === "string" ? v : "";
  }

  function flag(cfg, ruleValue) {
    if (ruleValue === "yes" || ruleValue === "no") return ruleValue === "yes";
    var v = get(cfg, ruleValue);
    return v === undefined ? false : !!v;
  }

  function windowedLayerCount(cfg, layers, rule, problems) {
    var window = get(cfg, "sliding_window");
    var types = get(cfg, "layer_types");
    if (Array.isArray(types) && types.length) {
      var count = types.filter(function (t) { return t === "sliding_attention"; }).length;
      if (types.length !== layers) {
        report(problems, "layer_types_count", { count: types.length, layers: layers });
        return [0, 0];
      }
      if (count && !(whole(window) && window > 0)) {
        report(problems, "layer_types_without_window");
        return [0, 0];
      }
      return count ? [window, count] : [0, 0];
    }
    if (window === undefined || window === null || window === false) return [0, 0];
    if (!whole(window) || window <= 0) {
      report(problems, "window_not_positive_whole");
      return [0, 0];
    }
    var how = rule ? rule.windowed_layers : null;
    if (how === "none") return [0, 0];
    if (how === "all") return [window, layers];
    if (how === "alternate") return [window, Math.floor((layers + 1) / 2)];
    if (how === "pattern") {
      var pattern = has(cfg, "sliding_window_pattern") ? cfg.sliding_window_pattern : 6;
      if (!whole(pattern) || pattern <= 0) {
        report(problems, "pattern_not_positive_whole");
        return [0, 0];
      }
      var every = layers - Math.floor(layers / pattern);
      return every ? [window, every] : [0, 0];
    }
    if (how === "qwen2") {
      var use = get(cfg, "use_sliding_window");
      if (!use) return [0, 0];
      var first = has(cfg, "max_window_layers") ? cfg.max_window_layers : layers;
      if (!whole(first) || first < 0) {
        report(problems, "max_window_layers_not_whole");
        return [0, 0];
      }
      var from = Math.max(0, layers - first);
      return from ? [window, from] : [0, 0];
    }
    report(problems, "windowed_layers_undeclared", { model_type: modelType(cfg) });
    return [0, 0];
  }

  function mlpParameterCount(rule, cfg, hidden, intermediate) {
    var mlp = 3 * hidden * intermediate;
    if (flag(cfg, rule.mlp_bias)) mlp += 2 * intermediate + hidden;
    return mlp;
  }

  function parameterCount(rule, cfg, s) {
    var q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim, h = s.hidden;
    var attention = h * q + 2 * h * kv + q * h;
    if (flag(cfg, rule.qkv_bias)) attention += q + 2 * kv;
    if (flag(cfg, rule.o_bias)) attention += h;
    if (rule.qk_norm) attention += 2 * s.head_dim;
    var mlp = mlpParameterCount(rule, cfg, h, s.intermediate);
    var experts = rule.experts_field ? cfg[rule.experts_field] : 1;
    if (experts > 1) mlp = experts * mlp + h * experts;
    var perLayer = attention + mlp + rule.norms_per_layer * h;
    var embeddings = s.vocab * h * (s.tied ? 1 : 2);
    return budget.exact(embeddings + s.layers * perLayer + h);
  }

  /* The parameters one token reads: all but the n - k experts a layer its router leaves. */
  function activeParameterCount(params, layers, experts, expertsPerToken, expertParams) {
    return budget.exact(params - layers * (experts - expertsPerToken) * expertParams);
  }

  function expertsPicked(cfg, rule, experts, problems) {
    var picked = intField(cfg, rule.experts_per_token_field, problems, true);
    if (picked !== null && picked > experts) {
      report(problems, "more_experts_picked", { picked_field: rule.experts_per_token_field, picked: picked, experts_field: rule.experts_field, experts: experts });
      return 0;
    }
    return picked || 0;
  }

  /* rules: rows of memory_budget.architectures. Throws ConfigError when no shape at all. */
  function shapeFromConfig(cfg, rules) {
    if (!isObject(cfg)) throw new ConfigError([{ code: "not_an_object", values: {} }]);
    if (!has(cfg, "num_hidden_layers") && isObject(get(cfg, "text_config"))) cfg = cfg.text_config;
    var problems = [];
    var layers = intField(cfg, "num_hidden_layers", problems, true);
    if (layers === null) throw new ConfigError(problems);
    var heads = intField(cfg, "num_attention_heads", problems, true);
    var kvHeads = intField(cfg, "num_key_value_heads", problems, false);
    if (absent(cfg, "num_key_value_heads")) kvHeads = heads; // multi-head attention, as transformers reads it
    var hidden = intField(cfg, "hidden_size", problems, true);
    var headDim = intField(cfg, "head_dim", problems, false);
    if (absent(cfg, "head_dim") && heads && hidden) {
      if (hidden % heads) report(problems, "head_dim_not_a_division", { hidden: hidden, heads: heads });
      else headDim = hidden / heads;
    }
    if (heads && kvHeads && heads % kvHeads) {
      report(problems, "heads_not_a_multiple", { heads: heads, kv_heads: kvHeads });
    }
    var shapeOk = problems.length === 0; // a count from a shape with a problem would be a guess
    var type = modelType(cfg);
    var rule = null;
    (rules || []).forEach(function (r) { if (r.model_type === type) rule = r; });
    var win = windowedLayerCount(cfg, layers, rule, problems);

    var params = null, tied = null, active = null, experts = 0, picked = 0;
    var sizesBefore = problems.length;
    var intermediate = intField(cfg, "intermediate_size", problems, true);
    var vocab = intField(cfg, "vocab_size", problems, true);
    if (rule === null) {
      var known = (rules || []).map(function (r) { return r.model_type; }).sort().join(", ");
      report(problems, "unknown_model_type", { model_type: type, known: known });
    } else if (rule.experts_field && !(whole(get(cfg, rule.experts_field)) && cfg[rule.experts_field] > 0)) {
      report(problems, "missing", { name: rule.experts_field });
    } else if (shapeOk && problems.length === sizesBefore) {
      var t = get(cfg, "tie_word_embeddings");
      tied = t === undefined ? !!rule.tied_default : !!t;
      try {
        params = parameterCount(rule, cfg, {
          hidden: hidden, intermediate: intermediate, vocab: vocab, layers: layers, heads: heads,
          kv_heads: kvHeads, head_dim: headDim, tied: tied,
        });
      } catch (e) {
        if (!e.code) throw e;
        report(problems, "too_many_parameters");
      }
      active = params;
      if (params !== null && rule.experts_field && cfg[rule.experts_field] > 1) { // one expert, no router: dense
        experts = cfg[rule.experts_field];
        picked = expertsPicked(cfg, rule, experts, problems);
        var one = mlpParameterCount(rule, cfg, hidden, intermediate);
        active = picked ? activeParameterCount(params, layers, experts, picked, one) : null;
      }
    }
    return {
      model_type: type, layers: layers, heads: heads || 0, kv_heads: kvHeads || 0, head_dim: headDim || 0,
      window: win[0], windowed_layers: win[1], tied: tied, params: params,
      experts: experts, experts_per_token: picked, active_params: active, problems: problems,
    };
  }

  window.LLMCalculator.modelConfig = {
    windowedLayerCount: windowedLayerCount,
    mlpParameterCount: mlpParameterCount,
    parameterCount: parameterCount,
    activeParameterCount: activeParameterCount,
    shapeFromConfig: shapeFromConfig,
    ConfigError: ConfigError,
  };
})();
