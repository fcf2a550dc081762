/*
 * The calculator's presets: the site_data tables the page carries (models, public
 * configs, precisions, cards, the stated assumptions), the options of its selects, and
 * the fields a chosen preset sets. P is the page (locale.js).
 */
(function () {
  "use strict";

  var CUSTOM = "custom";
  var RATED = "rated"; // the bandwidth's source: the card's datasheet
  var MEASURED = "run:"; // or a run's measured copy bandwidth: run:<run id>

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
      return { name: m.model, params: m.params, heads: m.heads, layers: m.layers, kv_heads: m.kv_heads, head_dim: m.head_dim, window: m.window || 0, windowed_layers: m.windowed_layers || 0,
        max_context: maxContext(configOf(m.model)), experts: 0, experts_per_token: 0, active_params: m.params,
        label: t("{model}: {layers} layers, {kv_heads} KV heads × {head_dim}", {
          model: m.model, layers: P.integer(m.layers), kv_heads: P.integer(m.kv_heads), head_dim: P.integer(m.head_dim),
        }) };
    }).concat(configs.map(function (c) {
      return { name: c.model, params: c.params, heads: c.heads, layers: c.layers, kv_heads: c.kv_heads, head_dim: c.head_dim, window: c.window, windowed_layers: c.windowed_layers,
        max_context: maxContext(c), experts: c.experts || 0, experts_per_token: c.experts_per_token || 0, active_params: c.active_params,
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
      runs: tableRows("calibration.runs").filter(function (r) { return r.start_bandwidth_gb_s > 0; }),
      rules: tableRows("memory_budget.architectures"),
      assumptions: tableRows("memory_budget.assumptions")[0] || {},
      defaults: tableRows("memory_budget.calculator_defaults")[0] || {},
    };
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

  /* A run's machine as calibration.runs names it (measure/lab/devices.py: cpu:<name>:<n>threads
     or cuda:<name>), in words. */
  function machine(device, t) {
    var cpu = /^cpu:(.*):(\d+)threads$/.exec(device);
    if (cpu) return t("{cpu}, {threads} threads", { cpu: cpu[1], threads: cpu[2] });
    return device.replace(/^[a-z]+:/, "");
  }

  /* sel: the selects by kind (model, precision, cache, card, bandwidth); p: read()'s presets. */
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
      return t("{card} ({memory}, {bandwidth} rated)", { card: c.card, memory: P.unit(P.plain(c.memory_gib), "GiB"), bandwidth: P.unit(P.integer(c.bandwidth_gb_s), "GB/s") });
    });
    addCustom(sel.card, t("Your own card"));
    fillSelect(sel.bandwidth, [RATED], function () { return RATED; }, function () { return t("rated: the card's datasheet figure"); });
    fillSelect(sel.bandwidth, p.runs, function (r) { return MEASURED + r.run; }, function (r) {
      return t("measured: {machine}, run of {date} ({bandwidth})", {
        machine: machine(String(r.device), t), date: String(r.run).replace(/^(\d{4})(\d\d)(\d\d).*$/, "$1-$2-$3"),
        bandwidth: P.unit(P.num(r.start_bandwidth_gb_s), "GB/s"),
      });
    });
    addCustom(sel.bandwidth, t("typed"));
  }

  /* The fields the chosen preset of a kind sets (field id -> value, "" for none), or
     null when none is chosen (your own values). The bandwidth's source: the chosen
     card's rating, or a run's measured copy bandwidth (calibration.runs, at the run's
     start, as every floor of the site divides by it). */
  function values(p, kind, name, card) {
    if (kind === "model") {
      var m = find(p.models, "name", name);
      if (!m) return null;
      var mixture = m.experts > 0;
      return {
        params: m.params, active_params: mixture ? m.active_params : "", experts: mixture ? m.experts : "", experts_per_token: mixture ? m.experts_per_token : "",
        heads: m.heads, layers: m.layers, kv_heads: m.kv_heads, head_dim: m.head_dim,
        window: m.window ? m.window : "", windowed_layers: m.window ? m.windowed_layers : "",
        max_context: m.max_context === null ? "" : m.max_context,
      };
    }
    if (kind === "precision") {
      var r = find(p.precisions, "precision", name);
      return r ? { weight_bits: r.weight_bits } : null;
    }
    if (kind === "bandwidth") {
      if (name === RATED) {
        var rated = find(p.cards, "card", card);
        return rated ? { bandwidth_gb_s: rated.bandwidth_gb_s } : null;
      }
      var run = find(p.runs, "run", name.slice(MEASURED.length));
      return name.indexOf(MEASURED) === 0 && run ? { bandwidth_gb_s: run.start_bandwidth_gb_s } : null;
    }
    var c = find(p.cards, "card", name);
    return c ? { vram_gib: c.memory_gib, peak_tflops: c.peak_tflops === null ? "" : c.peak_tflops } : null;
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
      bandwidth: card ? RATED : CUSTOM,
    };
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.presets = { CUSTOM: CUSTOM, RATED: RATED, read: read, fillSelects: fillSelects, find: find, values: values, initial: initial };
})();
