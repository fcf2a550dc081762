/*
 * The memory budget's arithmetic and a config.json's shape, for the calculator
 * (docs/javascripts/calculator.js). The same functions, in the same order, as
 * measure/lab/budget.py and measure/lab/model_config.py; the architecture rules are the
 * site_data table memory_budget.architectures, written from model_config.py, so there is
 * one copy of them. tests/test_calculator_browser.py holds this file equal to Python:
 * every budget to the byte, every floor to the last digit, every derived shape and
 * every message about a config.
 *
 * Integers stay below 2^53 within the calculator's accepted inputs (too large a
 * product is refused, see exact()), so doubles hold them exactly.
 */
(function () {
  "use strict";

  var GIB = 1073741824; // 2^30

  function floorDiv(a, b) {
    var q = Math.floor(a / b);
    while (q * b > a) q -= 1;
    while ((q + 1) * b <= a) q += 1;
    return q;
  }

  function exact(x) {
    if (!(Math.abs(x) <= Number.MAX_SAFE_INTEGER)) throw new RangeError("too large to compute exactly");
    return x;
  }

  function gibToBytes(gib) {
    return Math.floor(gib * GIB);
  }

  function weightBytes(params, bits) {
    return exact(Math.ceil((params * bits) / 8));
  }

  function kvBytesPerToken(layers, kvHeads, headDim, bytes) {
    return exact(Math.ceil(2 * layers * kvHeads * headDim * bytes));
  }

  function layerTokenBytes(kvHeads, headDim, bytes) {
    var x = 2 * kvHeads * headDim * bytes;
    if (x !== Math.floor(x)) throw new RangeError("not a whole number of bytes");
    return x;
  }

  function cacheBytesPerUser(layerToken, layers, windowedLayers, window, context) {
    var held = window === 0 ? context : Math.min(context, window);
    return exact(layerToken * exact((layers - windowedLayers) * context + windowedLayers * held));
  }

  /* null: no limit (every layer keeps only a window, and the window fits). */
  function longestContext(free, layerToken, layers, windowedLayers, window) {
    var perToken = layerToken * layers;
    if (window === 0 || windowedLayers === 0) return floorDiv(free, perToken);
    var upToWindow = floorDiv(free, perToken);
    if (upToWindow < window) return upToWindow;
    var fullLayers = layers - windowedLayers;
    if (fullLayers === 0) return null;
    return floorDiv(free - layerToken * windowedLayers * window, layerToken * fullLayers);
  }

  function usersAtContext(free, cacheBytes) {
    return free < 0 ? null : floorDiv(free, cacheBytes);
  }

  function decodeFloor(weights, cachePerUser, users, bandwidthGBs) {
    var stepS = exact(weights + exact(users * cachePerUser)) / (bandwidthGBs * 1e9);
    return { step_s: stepS, tokens_per_s_per_user: 1 / stepS, tokens_per_s: users / stepS };
  }

  /* ---- config.json -> shape (measure/lab/model_config.py) ---- */

  /* A list of problems: each one's English text, the same as Python's, in the list, and
     its template with the values filled in, in list.notes, for the page's language. */
  function problemList() {
    var list = [];
    list.notes = [];
    return list;
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
  }

  function report(problems, template, values) {
    values = values || {};
    problems.push(fill(template, values));
    problems.notes.push({ template: template, values: values });
  }

  /* notes: the problems' templates and values (see problemList). */
  function ConfigError(message, notes) {
    this.message = message;
    this.notes = notes || [{ template: message, values: {} }];
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
      if (required) report(problems, "{name} is missing", { name: name });
      return null;
    }
    if (!whole(v) || v <= 0) {
      report(problems, "{name} must be a positive whole number", { name: name });
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
        report(problems, "layer_types lists {count} layers, num_hidden_layers says {layers}", { count: types.length, layers: layers });
        return [0, 0];
      }
      if (count && !(whole(window) && window > 0)) {
        report(problems, "layer_types has sliding layers but sliding_window is not a positive whole number");
        return [0, 0];
      }
      return count ? [window, count] : [0, 0];
    }
    if (window === undefined || window === null || window === false) return [0, 0];
    if (!whole(window) || window <= 0) {
      report(problems, "sliding_window must be a positive whole number or null");
      return [0, 0];
    }
    var how = rule ? rule.windowed_layers : null;
    if (how === "none") return [0, 0];
    if (how === "all") return [window, layers];
    if (how === "alternate") return [window, Math.floor((layers + 1) / 2)];
    if (how === "pattern") {
      var pattern = has(cfg, "sliding_window_pattern") ? cfg.sliding_window_pattern : 6;
      if (!whole(pattern) || pattern <= 0) {
        report(problems, "sliding_window_pattern must be a positive whole number");
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
        report(problems, "max_window_layers must be a whole number");
        return [0, 0];
      }
      var from = Math.max(0, layers - first);
      return from ? [window, from] : [0, 0];
    }
    report(
      problems,
      "sliding_window: which layers use it is not declared (no layer_types) for model_type '{model_type}'; every layer is counted with full attention",
      { model_type: modelType(cfg) }
    );
    return [0, 0];
  }

  function parameterCount(rule, cfg, s) {
    var q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim, h = s.hidden;
    var attention = h * q + 2 * h * kv + q * h;
    if (flag(cfg, rule.qkv_bias)) attention += q + 2 * kv;
    if (flag(cfg, rule.o_bias)) attention += h;
    if (rule.qk_norm) attention += 2 * s.head_dim;
    var mlp = 3 * h * s.intermediate;
    if (flag(cfg, rule.mlp_bias)) mlp += 2 * s.intermediate + h;
    var experts = rule.experts_field ? cfg[rule.experts_field] : 1;
    if (experts > 1) mlp = experts * mlp + h * experts;
    var perLayer = attention + mlp + rule.norms_per_layer * h;
    var embeddings = s.vocab * h * (s.tied ? 1 : 2);
    return exact(embeddings + s.layers * perLayer + h);
  }

  /* rules: rows of memory_budget.architectures. Throws ConfigError when no shape at all. */
  function shapeFromConfig(cfg, rules) {
    if (!isObject(cfg)) throw new ConfigError("a config.json is a JSON object ({...})", [{ template: "a config.json is a JSON object ({...})", values: {} }]);
    if (!has(cfg, "num_hidden_layers") && isObject(get(cfg, "text_config"))) cfg = cfg.text_config;
    var problems = problemList();
    var layers = intField(cfg, "num_hidden_layers", problems, true);
    if (layers === null) throw new ConfigError(problems.join("; "), problems.notes);
    var heads = intField(cfg, "num_attention_heads", problems, true);
    var kvHeads = intField(cfg, "num_key_value_heads", problems, false);
    if (absent(cfg, "num_key_value_heads")) kvHeads = heads; // multi-head attention, as transformers reads it
    var hidden = intField(cfg, "hidden_size", problems, true);
    var headDim = intField(cfg, "head_dim", problems, false);
    if (absent(cfg, "head_dim") && heads && hidden) {
      if (hidden % heads) {
        report(problems, "head_dim is missing and hidden_size {hidden} is not a multiple of {heads} heads", { hidden: hidden, heads: heads });
      }
      else headDim = hidden / heads;
    }
    if (heads && kvHeads && heads % kvHeads) {
      report(problems, "num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}", { heads: heads, kv_heads: kvHeads });
    }
    var shapeOk = problems.length === 0; // a count from a shape with a problem would be a guess
    var type = modelType(cfg);
    var rule = null;
    (rules || []).forEach(function (r) { if (r.model_type === type) rule = r; });
    var win = windowedLayerCount(cfg, layers, rule, problems);

    var params = null, tied = null;
    var sizesBefore = problems.length;
    var intermediate = intField(cfg, "intermediate_size", problems, true);
    var vocab = intField(cfg, "vocab_size", problems, true);
    if (rule === null) {
      var known = (rules || []).map(function (r) { return r.model_type; }).sort().join(", ");
      report(
        problems,
        "parameters: model_type '{model_type}' is not one whose layer layout is known here ({known}); type the count from the model card",
        { model_type: type, known: known }
      );
    } else if (rule.experts_field && !(whole(get(cfg, rule.experts_field)) && cfg[rule.experts_field] > 0)) {
      report(problems, "{name} is missing", { name: rule.experts_field });
    } else if (shapeOk && problems.length === sizesBefore) {
      var t = get(cfg, "tie_word_embeddings");
      tied = t === undefined ? !!rule.tied_default : !!t;
      try {
        params = parameterCount(rule, cfg, {
          hidden: hidden, intermediate: intermediate, vocab: vocab, layers: layers, heads: heads,
          kv_heads: kvHeads, head_dim: headDim, tied: tied,
        });
      } catch (e) {
        report(problems, "parameters: too many to count exactly");
      }
    }
    return {
      model_type: type, layers: layers, heads: heads || 0, kv_heads: kvHeads || 0, head_dim: headDim || 0,
      window: win[0], windowed_layers: win[1], tied: tied, params: params, problems: problems, notes: problems.notes,
    };
  }

  window.LLMBudget = {
    GIB: GIB,
    exact: exact,
    floorDiv: floorDiv,
    gibToBytes: gibToBytes,
    weightBytes: weightBytes,
    kvBytesPerToken: kvBytesPerToken,
    layerTokenBytes: layerTokenBytes,
    cacheBytesPerUser: cacheBytesPerUser,
    longestContext: longestContext,
    usersAtContext: usersAtContext,
    decodeFloor: decodeFloor,
    shapeFromConfig: shapeFromConfig,
    ConfigError: ConfigError,
  };
})();
