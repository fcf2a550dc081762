/*
 * The memory-budget calculator (docs/calculator.md): a pasted config.json, the page's
 * URL, and what happens as one types. Loaded last, after the scripts it uses (mkdocs.yml):
 * locale.js (the page's messages and numbers), budget.js and model_config.js (mirrors of
 * measure/lab/budget.py and model_config.py), messages.js (problems as texts), form.js
 * (the fields), presets.js (the presets), results.js (the results, the bar, the status)
 * and link.js (the inputs in the page's address and the language selector's links).
 * tests/test_calculator_browser.py holds the results equal to the Python tables.
 */
(function () {
  "use strict";

  var C = window.LLMCalculator;
  var SELECTS = { model: "preset_model", precision: "preset_precision", cache: "cache", card: "preset_card" };
  var CUSTOM = C.presets.CUSTOM;

  /* A pasted config.json into the model's fields, and what was found into its status. */
  function applyConfig(text, put, configStatus, p, P) {
    var t = P.t;
    function problems(list) {
      return list.map(function (problem) {
        var values = problem.values;
        if (typeof values.model_type === "string") values = Object.assign({}, values, { model_type: P.echo(values.model_type) });
        return C.messages.text({ code: problem.code, values: values }, t);
      }).join("; ");
    }
    function failed(message) {
      configStatus.textContent = message;
      configStatus.setAttribute("data-state", "error");
    }
    configStatus.removeAttribute("data-params");
    if (text === "") {
      configStatus.textContent = "";
      configStatus.setAttribute("data-state", "empty");
      return false;
    }
    var cfg, s;
    try {
      cfg = JSON.parse(text);
    } catch (e) {
      // where the text stops being JSON, in the page's words (the browser's message is English)
      var at = C.form.jsonError(text) || { line: text.split("\n").length, column: text.length - text.lastIndexOf("\n"), found: "" };
      var place = { line: P.integer(at.line), column: P.integer(at.column) };
      return failed(at.found === ""
        ? C.messages.text({ code: "not_json_end", values: place }, t)
        : C.messages.text({ code: "not_json", values: Object.assign({ found: at.found }, place) }, t));
    }
    try {
      s = C.modelConfig.shapeFromConfig(cfg, p.rules);
    } catch (e) {
      if (!(e instanceof C.modelConfig.ConfigError)) throw e;
      return failed(t("No model shape in this config: {reason}.", { reason: problems(e.problems) }));
    }
    put("layers", s.layers);
    put("kv_heads", s.kv_heads ? s.kv_heads : "");
    put("head_dim", s.head_dim ? s.head_dim : "");
    put("params", s.params === null ? "" : s.params);
    put("window", s.window ? s.window : "");
    put("windowed_layers", s.window ? s.windowed_layers : "");
    // the longest context the model takes: its config's max_position_embeddings (the
    // text model's, in a config that nests one), as the configs table reads it
    var nested = cfg.text_config !== null && typeof cfg.text_config === "object" && !Array.isArray(cfg.text_config);
    var from = !Object.prototype.hasOwnProperty.call(cfg, "num_hidden_layers") && nested ? cfg.text_config : cfg;
    var max = from.max_position_embeddings;
    var maxProblem = max !== undefined && max !== null && !(Number.isInteger(max) && max > 0);
    put("max_context", maxProblem || max === undefined || max === null ? "" : max);
    var parts = [
      t("{model_type}: {layers} layers, {kv_heads} key-value heads × {head_dim}", {
        model_type: s.model_type ? P.echo(s.model_type) : t("unknown model_type"), layers: P.integer(s.layers), kv_heads: P.integer(s.kv_heads), head_dim: P.integer(s.head_dim),
      }),
    ];
    if (s.window) {
      parts.push(t("a {window}-token window on {windowed_layers} of them", { window: P.integer(s.window), windowed_layers: P.integer(s.windowed_layers) }));
    }
    if (s.tied !== null) parts.push(s.tied ? t("tied embeddings") : t("separate output embeddings"));
    if (s.params !== null) parts.push(P.unit(P.integer(s.params), t("parameters")));
    if (!maxProblem && max) parts.push(t("a context of at most {max}", { max: P.tokens(max) }));
    var summary = parts.join(", ") + ".";
    var notDerived = s.problems.concat(maxProblem ? [{ code: "not_positive_whole", values: { name: "max_position_embeddings" } }] : []);
    if (notDerived.length) summary += " " + t("Not derived: {problems}.", { problems: problems(notDerived) });
    configStatus.textContent = summary;
    configStatus.setAttribute("data-state", notDerived.length ? "partial" : "ok");
    configStatus.setAttribute("data-params", s.params === null ? "" : String(s.params));
    // the shape as Python's shape_from_config gives it, its problems in English, for checks
    configStatus.setAttribute("data-shape", JSON.stringify(Object.assign({}, s, { problems: s.problems.map(C.messages.english) })));
    return true;
  }

  function init(root) {
    if (root.getAttribute("data-ready") === "1") return;
    var loc = C.locale.read();
    var P = C.locale.page(loc);
    var t = P.t;
    var FIELDS = C.form.fields(t);
    var labels = {};
    FIELDS.forEach(function (f) { labels[f.id] = f.label = C.form.label(root, f.id); });
    var p = C.presets.read(P);
    var inputs = {};
    FIELDS.forEach(function (f) { inputs[f.id] = root.querySelector('[name="' + f.id + '"]'); });
    var sel = {};
    Object.keys(SELECTS).forEach(function (k) { sel[k] = root.querySelector('[name="' + SELECTS[k] + '"]'); });
    var status = root.querySelector("[data-status]");
    var configBox = root.querySelector('[name="config"]');
    var configStatus = root.querySelector("[data-config-status]");
    C.presets.fillSelects(sel, p, P);
    C.presets.translateRules(p.rules, P);

    // What a preset or a config writes into a field is in the page's own format.
    function put(id, x) {
      inputs[id].value = x === null || x === undefined || x === "" ? "" : P.input(x);
    }
    // A chosen preset's values into its fields.
    function apply(kind) {
      var values = C.presets.values(p, kind, sel[kind].value);
      if (values) Object.keys(values).forEach(function (id) { put(id, values[id]); });
    }

    function say(state, text) {
      status.textContent = text;
      status.setAttribute("data-state", state);
    }

    function update() {
      var parsed = C.form.readAll(FIELDS, inputs, P);
      var v = parsed.v, errors = parsed.errors;
      var cache = C.presets.find(p.caches, "precision", sel.cache.value);
      v.kv_bytes = cache ? cache.kv_bytes_per_element : 2;
      FIELDS.forEach(function (f) {
        var msg = root.querySelector('[data-error-for="' + f.id + '"]');
        if (errors[f.id]) {
          inputs[f.id].setAttribute("aria-invalid", "true");
          if (msg) msg.textContent = C.messages.text(errors[f.id], t, labels);
        } else {
          inputs[f.id].removeAttribute("aria-invalid");
          if (msg) msg.textContent = "";
        }
      });
      C.link.write(root, sel, inputs, FIELDS, v, P);
      var note = root.querySelector('[data-note-for="max_context"]');
      if (note) {
        note.textContent = inputs.max_context.value.trim() === "" && !errors.max_context
          ? t("No maximum given: the context is not checked against the model's own.")
          : "";
      }
      var ids = Object.keys(errors);
      if (ids.length) {
        C.results.clear(root, P);
        var first = FIELDS.filter(function (f) { return errors[f.id]; })[0];
        // the field's own message stands beside it; the status names the field, not repeating what was typed
        return say("error", ids.length === 1
          ? t("Fix the highlighted field: {field}.", { field: first.label })
          : t("Fix the highlighted fields ({count}).", { count: P.integer(ids.length) }));
      }
      var shown = C.results.show(root, P, v);
      say(shown.state, shown.text);
    }

    // A typed value no longer matches its preset: the preset says so.
    var groupSelect = { model: sel.model, precision: sel.precision, card: sel.card };
    root.addEventListener("input", function (e) {
      var target = e.target;
      if (!target) return;
      if (target === configBox) {
        if (applyConfig(configBox.value.trim(), put, configStatus, p, P)) sel.model.value = CUSTOM;
        update();
        return;
      }
      if (target.tagName !== "INPUT") return;
      FIELDS.forEach(function (f) {
        if (f.id === target.name && f.group && groupSelect[f.group]) groupSelect[f.group].value = CUSTOM;
      });
      update();
    });
    sel.model.addEventListener("change", function () { apply("model"); update(); });
    sel.precision.addEventListener("change", function () { apply("precision"); update(); });
    sel.cache.addEventListener("change", update);
    sel.card.addEventListener("change", function () { apply("card"); update(); });
    root.addEventListener("submit", function (e) { e.preventDefault(); });

    // Defaults: the first preset of each kind, the stated reserve, context and users;
    // then whatever the page's URL says.
    var a = p.assumptions, first = C.presets.initial(p);
    sel.model.value = first.model;
    sel.precision.value = first.precision;
    if (first.cache !== null) sel.cache.value = first.cache;
    sel.card.value = first.card;
    apply("model");
    apply("precision");
    apply("card");
    if (a.reserve_gib !== undefined) put("reserve_gib", a.reserve_gib);
    if (a.context_per_user !== undefined) put("context", a.context_per_user);
    put("users", p.defaults.users_served || 1);
    C.link.read(sel, inputs, FIELDS, P, loc.formats);
    update();
    root.setAttribute("data-ready", "1");
  }

  function start() {
    var roots = document.querySelectorAll("form[data-calculator]");
    for (var i = 0; i < roots.length; i++) init(roots[i]);
  }

  // The number format, for a page's own checks: LLMCalculator.numbers({decimal: ",", group: "."}).read("1.234")
  C.numbers = C.locale.numbers;
  C.start = start;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  // Material's instant navigation swaps pages without a load event; it announces each page on document$.
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) window.document$.subscribe(start);
})();
