/*
 * The calculator's presets: the site_data tables the page carries (models, public
 * configs, precisions, cards, the stated assumptions), the options of its selects, and
 * the fields a chosen preset sets. P is the page (locale.js).
 */
(function () {
  "use strict";

  var CUSTOM = "custom";

  function tableRows(name) {
    var el = document.querySelector('script[data-json-table="' + name + '"]');
    if (!el) return [];
    try {
      return JSON.parse(el.textContent).rows || [];
    } catch (e) {
      return [];
    }
  }

  function find(rows, key, value) {
    for (var i = 0; i < rows.length; i++) if (rows[i][key] === value) return rows[i];
    return null;
  }

  /* A model's maximum context (its config's max_position_embeddings, the configs
     table's max_position), or null when the data has none: an assumed shape has no
     config, and site_data written before the column existed has no column. */
  function maxContext(row) {
    var x = row ? row.max_position : null;
    return typeof x === "number" && x > 0 ? x : null;
  }

  /* The presets, from the page's tables, each model's with its option's text. */
  function read(P) {
    var t = P.t;
    var models = tableRows("memory_budget.models");
    var allConfigs = tableRows("memory_budget.configs");
    var configs = allConfigs.filter(function (c) { return c.params !== null && c.reference === "published"; });
    // a shape of the budget page that is a real model's (the run's) has that model's config
    function configOf(name) {
      return allConfigs.filter(function (c) { return typeof c.model === "string" && c.model.split("/").pop() === name; })[0] || null;
    }
    // Model presets: the budget page's shapes, then the public configs.
    var modelPresets = models.map(function (m) {
      return { name: m.model, params: m.params, layers: m.layers, kv_heads: m.kv_heads, head_dim: m.head_dim, window: m.window || 0, windowed_layers: m.windowed_layers || 0,
        max_context: maxContext(configOf(m.model)),
        label: t("{model}: {layers} layers, {kv_heads} KV heads × {head_dim}", {
          model: m.model, layers: P.integer(m.layers), kv_heads: P.integer(m.kv_heads), head_dim: P.integer(m.head_dim),
        }) };
    }).concat(configs.map(function (c) {
      return { name: c.model, params: c.params, layers: c.layers, kv_heads: c.kv_heads, head_dim: c.head_dim, window: c.window, windowed_layers: c.windowed_layers,
        max_context: maxContext(c),
        label: c.windowed_layers
          ? t("{model} (window {window} on {windowed_layers} of {layers} layers)", {
              model: c.model, window: P.integer(c.window), windowed_layers: P.integer(c.windowed_layers), layers: P.integer(c.layers),
            })
          : c.model };
    }));
    return {
      models: modelPresets,
      precisions: tableRows("memory_budget.precisions"),
      caches: tableRows("memory_budget.cache_precisions"),
      cards: tableRows("memory_budget.card_presets"),
      rules: tableRows("memory_budget.architectures"),
      assumptions: tableRows("memory_budget.assumptions")[0] || {},
      defaults: tableRows("memory_budget.calculator_defaults")[0] || {},
    };
  }

  /* The page's table of the architectures' rules (the build writes the data's codes) in
     the page's words: a bias column's yes, no or the config field that says, and which
     layers keep a window. A row's first cell is its model_type, a name, left as it is;
     each code keeps its data's spelling in the cell's title. rules: the table's rows. */
  function translateRules(rules, P) {
    var t = P.t;
    var bodies = document.querySelectorAll('[data-table="memory_budget.architectures"] table:not([class]) > tbody');
    var windows = {
      none: t("no layer"),
      all: t("every layer"),
      alternate: t("every other layer"),
      pattern: t("all but one in every {pattern}", { pattern: "sliding_window_pattern" }),
      qwen2: t("from layer {first} on, if {flag}", { first: "max_window_layers", flag: "use_sliding_window" }),
    };
    var biases = { yes: t("yes"), no: t("no") };
    Array.prototype.forEach.call(bodies, function (body) {
      translateRows(body.rows, rules, windows, biases, t);
    });
  }

  /* One half of the rules table (the page splits it in two to fit a window): its rows,
     in the order of rules, each cell's code in the page's words. */
  function translateRows(rows, rules, windows, biases, t) {
    Array.prototype.forEach.call(rows, function (tr, i) {
      var rule = rules[i];
      if (!rule || !tr.cells.length || tr.cells[0].textContent !== rule.model_type) return;
      Array.prototype.slice.call(tr.cells, 1).forEach(function (td) {
        var code = td.textContent, text = null;
        if (code === rule.windowed_layers && windows[code]) text = windows[code];
        else if (code === rule.qkv_bias || code === rule.o_bias || code === rule.mlp_bias) {
          text = biases[code] || t("as {name} says", { name: code });
        }
        if (text === null) return;
        td.textContent = text;
        td.title = code;
        td.setAttribute("data-code", code);
      });
    });
  }

  function fillSelect(select, rows, value, label) {
    rows.forEach(function (row) {
      var opt = document.createElement("option");
      opt.value = value(row);
      opt.textContent = label(row);
      select.appendChild(opt);
    });
  }

  function addCustom(select, text) {
    var opt = document.createElement("option");
    opt.value = CUSTOM;
    opt.textContent = text;
    select.appendChild(opt);
  }

  /* sel: the selects by kind (model, precision, cache, card); p: read()'s presets. */
  function fillSelects(sel, p, P) {
    var t = P.t;
    fillSelect(sel.model, p.models, function (m) { return m.name; }, function (m) { return m.label; });
    addCustom(sel.model, t("Your own values (typed, or from a config.json)"));
    fillSelect(sel.precision, p.precisions, function (r) { return r.precision; }, function (r) {
      return t("{precision} ({bits} bits per weight)", { precision: r.precision, bits: P.plain(r.weight_bits) });
    });
    addCustom(sel.precision, t("Your own bits per weight"));
    fillSelect(sel.cache, p.caches, function (r) { return r.precision; }, function (r) {
      return t("{precision} ({bytes} per element)", { precision: r.precision, bytes: P.unit(P.plain(r.kv_bytes_per_element), "B") });
    });
    fillSelect(sel.card, p.cards, function (c) { return c.card; }, function (c) {
      return t("{card} ({memory}, {bandwidth})", { card: c.card, memory: P.unit(P.plain(c.memory_gib), "GiB"), bandwidth: P.unit(P.integer(c.bandwidth_gb_s), "GB/s") });
    });
    addCustom(sel.card, t("Your own card"));
  }

  /* The fields the chosen preset of a kind sets (field id -> value, "" for none), or
     null when none is chosen (your own values). */
  function values(p, kind, name) {
    if (kind === "model") {
      var m = find(p.models, "name", name);
      if (!m) return null;
      return {
        params: m.params, layers: m.layers, kv_heads: m.kv_heads, head_dim: m.head_dim,
        window: m.window ? m.window : "", windowed_layers: m.window ? m.windowed_layers : "",
        max_context: m.max_context === null ? "" : m.max_context,
      };
    }
    if (kind === "precision") {
      var r = find(p.precisions, "precision", name);
      return r ? { weight_bits: r.weight_bits } : null;
    }
    var c = find(p.cards, "card", name);
    return c ? { vram_gib: c.memory_gib, bandwidth_gb_s: c.bandwidth_gb_s } : null;
  }

  /* The selects' first choices: the first preset of each kind, the stated cache
     precision, the stated card. */
  function initial(p) {
    var a = p.assumptions;
    var fp16 = p.caches.filter(function (r) { return r.kv_bytes_per_element === a.kv_bytes_per_element; })[0];
    var card = find(p.cards, "card", p.defaults.card) || p.cards[0];
    return {
      model: p.models.length ? p.models[0].name : CUSTOM,
      precision: p.precisions.length ? p.precisions[0].precision : CUSTOM,
      cache: fp16 ? fp16.precision : null,
      card: card ? card.card : CUSTOM,
    };
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.presets = { CUSTOM: CUSTOM, read: read, translateRules: translateRules, fillSelects: fillSelects, find: find, values: values, initial: initial };
})();
