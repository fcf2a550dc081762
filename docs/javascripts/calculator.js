/*
 * The memory-budget calculator (docs/calculator.md): the form, its presets, a pasted
 * config.json, the breakdown bar and the page's URL. The arithmetic is budget.js's
 * (the same as measure/lab/budget.py); tests/test_calculator_browser.py holds the
 * results equal to the Python tables.
 */
(function () {
  "use strict";

  // Accepted ranges: anything outside is a typing error or not a real card or model.
  // optional: an empty field means 0 (no sliding window).
  var FIELDS = [
    { id: "params", label: "Parameters", integer: true, min: 1, max: 1e13, unit: "parameters", group: "model" },
    { id: "layers", label: "Layers", integer: true, min: 1, max: 1000, unit: "", group: "model" },
    { id: "kv_heads", label: "Key-value heads", integer: true, min: 1, max: 1024, unit: "", group: "model" },
    { id: "head_dim", label: "Head dimension", integer: true, min: 1, max: 4096, unit: "", group: "model" },
    { id: "window", label: "Sliding window", integer: true, min: 0, max: 1e8, unit: "tokens", group: "model", optional: true },
    { id: "windowed_layers", label: "Layers with the window", integer: true, min: 0, max: 1000, unit: "", group: "model", optional: true },
    { id: "weight_bits", label: "Bits per weight", integer: false, min: 0, minExclusive: true, max: 64, unit: "bits", group: "precision" },
    { id: "vram_gib", label: "Card memory", integer: false, min: 0, minExclusive: true, max: 65536, unit: "GiB", group: "card" },
    { id: "bandwidth_gb_s", label: "Memory bandwidth", integer: false, min: 0, minExclusive: true, max: 1e5, unit: "GB/s", group: "card" },
    { id: "reserve_gib", label: "Runtime reserve", integer: false, min: 0, max: 65536, unit: "GiB" },
    { id: "context", label: "Context per user", integer: true, min: 1, max: 1e8, unit: "tokens" },
    { id: "users", label: "Users served", integer: true, min: 1, max: 1e6, unit: "users" },
  ];
  var OUTPUTS = ["weights", "kv_per_token", "cache_per_user", "free", "max_tokens", "users_fit", "step_ms", "tokens_per_s_per_user", "tokens_per_s"];
  var SELECTS = { model: "preset_model", precision: "preset_precision", cache: "cache", card: "preset_card" };
  var CUSTOM = "custom";
  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
  var B = window.LLMBudget;

  function fmtInt(n) {
    return n.toLocaleString("en-US", { maximumFractionDigits: 0 });
  }

  function fmtFixed(x, digits) {
    return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }

  function fmtGiB(bytes) {
    return fmtFixed(bytes / B.GIB, 2) + " GiB";
  }

  function fmtBytes(bytes) {
    if (bytes < 1048576) return fmtInt(bytes) + " bytes";
    if (bytes < B.GIB) return fmtFixed(bytes / 1048576, 2) + " MiB";
    return fmtGiB(bytes);
  }

  function fmtPlain(x) {
    return x.toLocaleString("en-US", { maximumFractionDigits: 6 });
  }

  /* One field's text -> {value} or {error}. */
  function parseField(field, raw) {
    var text = String(raw).trim().replace(/,/g, "");
    if (text === "" && field.optional) return { value: 0 };
    if (text === "") return { error: field.label + ": enter a value." };
    if (!NUMBER.test(text)) return { error: field.label + " must be a number (digits, optionally a decimal point or an exponent such as 7e9)." };
    var x = Number(text);
    if (!isFinite(x)) return { error: field.label + " is too large to be a number." };
    if (x < 0) return { error: field.label + " cannot be negative." };
    if (field.minExclusive && x <= field.min) return { error: field.label + " must be greater than " + fmtPlain(field.min) + "." };
    if (!field.minExclusive && x < field.min) return { error: field.label + " must be at least " + fmtPlain(field.min) + "." };
    if (field.integer && Math.floor(x) !== x) return { error: field.label + " must be a whole number." };
    if (x > field.max) {
      return { error: field.label + " above " + fmtPlain(field.max) + (field.unit ? " " + field.unit : "") + " is not a realistic value." };
    }
    return { value: x };
  }

  /* Errors that need two fields at once, by field. */
  function crossCheck(v) {
    var errors = {};
    if (v.windowed_layers !== undefined && v.layers !== undefined && v.windowed_layers > v.layers) {
      errors.windowed_layers = "Layers with the window cannot be more than the " + fmtInt(v.layers) + " layers.";
    } else if (v.windowed_layers > 0 && v.window === 0) {
      errors.windowed_layers = "Layers with the window needs a sliding window (empty or 0 means no window).";
    }
    return errors;
  }

  /* Everything the page shows, from parsed values; mirrors measure/lab/budget.py. */
  function compute(v) {
    var vram = B.gibToBytes(v.vram_gib);
    var reserve = B.gibToBytes(v.reserve_gib);
    var weights = B.weightBytes(v.params, v.weight_bits);
    var kv = B.kvBytesPerToken(v.layers, v.kv_heads, v.head_dim, v.kv_bytes);
    var layerToken = B.layerTokenBytes(v.kv_heads, v.head_dim, v.kv_bytes);
    var windowed = v.window === 0 ? 0 : v.windowed_layers;
    var perUser = B.cacheBytesPerUser(layerToken, v.layers, windowed, v.window, v.context);
    var free = vram - reserve - weights;
    var fits = free >= 0;
    var floor = B.decodeFloor(weights, perUser, v.users, v.bandwidth_gb_s);
    return {
      vram: vram, reserve: reserve, weights: weights, kv: kv, perUser: perUser, free: free, fits: fits,
      longest: fits ? B.longestContext(free, layerToken, v.layers, windowed, v.window) : null,
      usersFit: B.usersAtContext(free, perUser),
      servedCache: B.exact(perUser * v.users),
      floor: floor,
      windowed: windowed,
    };
  }

  function setOut(root, name, value, text) {
    var el = root.querySelector('[data-out="' + name + '"]');
    if (!el) return;
    el.textContent = text;
    el.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
  }

  function tableRows(name) {
    var el = document.querySelector('script[data-json-table="' + name + '"]');
    if (!el) return [];
    try {
      return JSON.parse(el.textContent).rows || [];
    } catch (e) {
      return [];
    }
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

  /* The breakdown bar: the card's bytes as weights, reserve, the served users' cache and
     what is left; when they need more than the card, the bar spans what they need and
     the part past the card is marked. */
  function drawBar(root, c, users) {
    var bar = root.querySelector("[data-bar]");
    if (!bar) return;
    var parts = [
      ["weights", c.weights],
      ["reserve", c.reserve],
      ["cache", c.servedCache],
      ["free", Math.max(0, c.vram - c.weights - c.reserve - c.servedCache)],
    ];
    var need = c.weights + c.reserve + c.servedCache;
    var span = Math.max(c.vram, need);
    parts.forEach(function (p) {
      var seg = bar.querySelector('[data-part="' + p[0] + '"]');
      seg.style.width = ((100 * p[1]) / span).toFixed(3) + "%";
      seg.setAttribute("data-bytes", String(p[1]));
      seg.title = seg.getAttribute("data-label") + ": " + fmtGiB(p[1]);
      var legend = root.querySelector('[data-legend="' + p[0] + '"]');
      if (legend) legend.textContent = fmtGiB(p[1]);
    });
    var over = need - c.vram;
    var mark = bar.querySelector("[data-card-edge]");
    mark.style.left = ((100 * c.vram) / span).toFixed(3) + "%";
    bar.setAttribute("data-over", over > 0 ? String(over) : "0");
    var note = root.querySelector("[data-bar-note]");
    note.textContent =
      over > 0
        ? fmtInt(users) + (users === 1 ? " user needs " : " users need ") + fmtGiB(over) + " more than the card's " + fmtGiB(c.vram) + "."
        : "";
  }

  function clearBar(root) {
    var bar = root.querySelector("[data-bar]");
    if (!bar) return;
    Array.prototype.forEach.call(bar.querySelectorAll("[data-part]"), function (seg) {
      seg.style.width = "0";
      seg.setAttribute("data-bytes", "");
    });
    Array.prototype.forEach.call(root.querySelectorAll("[data-legend]"), function (l) { l.textContent = "—"; });
    root.querySelector("[data-bar-note]").textContent = "";
  }

  function init(root) {
    if (root.getAttribute("data-ready") === "1") return;
    var models = tableRows("memory_budget.models");
    var configs = tableRows("memory_budget.configs").filter(function (c) { return c.params !== null && c.reference === "published"; });
    var precisions = tableRows("memory_budget.precisions");
    var caches = tableRows("memory_budget.cache_precisions");
    var cards = tableRows("memory_budget.card_presets");
    var rules = tableRows("memory_budget.architectures");
    var assumptions = tableRows("memory_budget.assumptions")[0] || {};
    var defaults = tableRows("memory_budget.calculator_defaults")[0] || {};
    var inputs = {};
    FIELDS.forEach(function (f) {
      inputs[f.id] = root.querySelector('[name="' + f.id + '"]');
    });
    var sel = {};
    Object.keys(SELECTS).forEach(function (k) {
      sel[k] = root.querySelector('[name="' + SELECTS[k] + '"]');
    });
    var status = root.querySelector("[data-status]");
    var configBox = root.querySelector('[name="config"]');
    var configStatus = root.querySelector("[data-config-status]");

    // Model presets: the budget page's shapes, then the public configs.
    var modelPresets = models.map(function (m) {
      return { name: m.model, params: m.params, layers: m.layers, kv_heads: m.kv_heads, head_dim: m.head_dim, window: m.window || 0, windowed_layers: m.windowed_layers || 0,
        label: m.model + ": " + m.layers + " layers, " + m.kv_heads + " KV heads × " + m.head_dim };
    }).concat(configs.map(function (c) {
      return { name: c.model, params: c.params, layers: c.layers, kv_heads: c.kv_heads, head_dim: c.head_dim, window: c.window, windowed_layers: c.windowed_layers,
        label: c.model + (c.windowed_layers ? " (window " + fmtInt(c.window) + " on " + c.windowed_layers + " of " + c.layers + " layers)" : "") };
    }));
    fillSelect(sel.model, modelPresets, function (m) { return m.name; }, function (m) { return m.label; });
    addCustom(sel.model, "Your own values (typed, or from a config.json)");
    fillSelect(sel.precision, precisions, function (p) { return p.precision; }, function (p) {
      return p.precision + " (" + fmtPlain(p.weight_bits) + " bits per weight)";
    });
    addCustom(sel.precision, "Your own bits per weight");
    fillSelect(sel.cache, caches, function (p) { return p.precision; }, function (p) {
      return p.precision + " (" + fmtPlain(p.kv_bytes_per_element) + (p.kv_bytes_per_element === 1 ? " byte" : " bytes") + " per element)";
    });
    fillSelect(sel.card, cards, function (c) { return c.card; }, function (c) {
      return c.card + " (" + fmtPlain(c.memory_gib) + " GiB, " + fmtInt(c.bandwidth_gb_s) + " GB/s)";
    });
    addCustom(sel.card, "Your own card");

    function find(rows, key, value) {
      for (var i = 0; i < rows.length; i++) if (rows[i][key] === value) return rows[i];
      return null;
    }
    function applyModel() {
      var m = find(modelPresets, "name", sel.model.value);
      if (!m) return;
      ["params", "layers", "kv_heads", "head_dim"].forEach(function (k) { inputs[k].value = String(m[k]); });
      inputs.window.value = m.window ? String(m.window) : "";
      inputs.windowed_layers.value = m.window ? String(m.windowed_layers) : "";
    }
    function applyPrecision() {
      var p = find(precisions, "precision", sel.precision.value);
      if (p) inputs.weight_bits.value = String(p.weight_bits);
    }
    function applyCard() {
      var c = find(cards, "card", sel.card.value);
      if (!c) return;
      inputs.vram_gib.value = String(c.memory_gib);
      inputs.bandwidth_gb_s.value = String(c.bandwidth_gb_s);
    }

    function applyConfig() {
      var text = configBox.value.trim();
      configStatus.removeAttribute("data-params");
      if (text === "") {
        configStatus.textContent = "";
        configStatus.setAttribute("data-state", "empty");
        return;
      }
      var cfg;
      try {
        cfg = JSON.parse(text);
      } catch (e) {
        configStatus.textContent = "Not valid JSON: " + e.message;
        configStatus.setAttribute("data-state", "error");
        return;
      }
      var s;
      try {
        s = B.shapeFromConfig(cfg, rules);
      } catch (e) {
        if (!(e instanceof B.ConfigError)) throw e;
        configStatus.textContent = "No model shape in this config: " + e.message + ".";
        configStatus.setAttribute("data-state", "error");
        return;
      }
      inputs.layers.value = String(s.layers);
      inputs.kv_heads.value = s.kv_heads ? String(s.kv_heads) : "";
      inputs.head_dim.value = s.head_dim ? String(s.head_dim) : "";
      inputs.params.value = s.params === null ? "" : String(s.params);
      inputs.window.value = s.window ? String(s.window) : "";
      inputs.windowed_layers.value = s.window ? String(s.windowed_layers) : "";
      sel.model.value = CUSTOM;
      var summary =
        (s.model_type || "unknown model_type") + ": " + fmtInt(s.layers) + " layers, " + s.kv_heads + " key-value heads × " + s.head_dim +
        (s.window ? ", a " + fmtInt(s.window) + "-token window on " + s.windowed_layers + " of them" : "") +
        (s.tied === null ? "" : s.tied ? ", tied embeddings" : ", separate output embeddings") +
        (s.params === null ? "" : ", " + fmtInt(s.params) + " parameters") + ".";
      configStatus.textContent = summary + (s.problems.length ? " Not derived: " + s.problems.join("; ") + "." : "");
      configStatus.setAttribute("data-state", s.problems.length ? "partial" : "ok");
      configStatus.setAttribute("data-params", s.params === null ? "" : String(s.params));
      configStatus.setAttribute("data-shape", JSON.stringify(s));
    }

    function values() {
      var v = {}, errors = {};
      FIELDS.forEach(function (f) {
        var r = parseField(f, inputs[f.id].value);
        if (r.error) errors[f.id] = r.error;
        else v[f.id] = r.value;
      });
      var cross = crossCheck(v);
      Object.keys(cross).forEach(function (k) { if (!errors[k]) errors[k] = cross[k]; });
      var cache = find(caches, "precision", sel.cache.value);
      v.kv_bytes = cache ? cache.kv_bytes_per_element : 2;
      return { v: v, errors: errors };
    }

    function writeUrl() {
      var q = new URLSearchParams();
      Object.keys(SELECTS).forEach(function (k) { q.set(k, sel[k].value); });
      FIELDS.forEach(function (f) { q.set(f.id, inputs[f.id].value.trim()); });
      var url = location.pathname + "?" + q.toString() + location.hash;
      try {
        history.replaceState(history.state, "", url);
      } catch (e) { /* a file:// page may refuse; the calculator still works */ }
      var link = root.querySelector("[data-share]");
      if (link) link.setAttribute("href", url);
    }

    function readUrl() {
      var q = new URLSearchParams(location.search);
      var any = false;
      Object.keys(SELECTS).forEach(function (k) {
        var want = q.get(k);
        if (want === null) return;
        var ok = Array.prototype.some.call(sel[k].options, function (o) { return o.value === want; });
        if (ok) sel[k].value = want;
        any = true;
      });
      FIELDS.forEach(function (f) {
        var want = q.get(f.id);
        if (want === null) return;
        inputs[f.id].value = want;
        any = true;
      });
      return any;
    }

    function showError(errors) {
      var ids = Object.keys(errors);
      OUTPUTS.forEach(function (k) { setOut(root, k, null, "—"); });
      clearBar(root);
      var first = FIELDS.filter(function (f) { return errors[f.id]; })[0];
      status.textContent = ids.length === 1 ? "Fix the highlighted field: " + errors[first.id] : "Fix the " + ids.length + " highlighted fields.";
      status.setAttribute("data-state", "error");
    }

    function update() {
      var parsed = values();
      var v = parsed.v, errors = parsed.errors;
      FIELDS.forEach(function (f) {
        var msg = root.querySelector('[data-error-for="' + f.id + '"]');
        if (errors[f.id]) {
          inputs[f.id].setAttribute("aria-invalid", "true");
          if (msg) msg.textContent = errors[f.id];
        } else {
          inputs[f.id].removeAttribute("aria-invalid");
          if (msg) msg.textContent = "";
        }
      });
      writeUrl();
      if (Object.keys(errors).length) return showError(errors);
      var c;
      try {
        c = compute(v);
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        OUTPUTS.forEach(function (k) { setOut(root, k, null, "—"); });
        clearBar(root);
        status.textContent = "These values are too large to compute to the byte: " + e.message + ".";
        status.setAttribute("data-state", "error");
        return;
      }
      setOut(root, "weights", c.weights, fmtGiB(c.weights) + " (" + fmtInt(c.weights) + " bytes)");
      setOut(root, "kv_per_token", c.kv, fmtInt(c.kv) + " bytes" + (c.windowed ? " (while the context is shorter than the window)" : ""));
      setOut(root, "cache_per_user", c.perUser, fmtBytes(c.perUser) + " at " + fmtInt(v.context) + " tokens");
      setOut(root, "step_ms", c.floor.step_s * 1e3, fmtFixed(c.floor.step_s * 1e3, 2) + " ms");
      setOut(root, "tokens_per_s_per_user", c.floor.tokens_per_s_per_user, fmtFixed(c.floor.tokens_per_s_per_user, 1) + " tokens/s");
      setOut(root, "tokens_per_s", c.floor.tokens_per_s, fmtFixed(c.floor.tokens_per_s, 1) + " tokens/s");
      drawBar(root, c, v.users);
      if (!c.fits) {
        setOut(root, "free", c.free, "none: short by " + fmtGiB(-c.free));
        setOut(root, "max_tokens", null, "does not fit");
        setOut(root, "users_fit", null, "does not fit");
        status.textContent =
          "Does not fit: the weights (" + fmtGiB(c.weights) + ") and the reserve (" + fmtGiB(c.reserve) + ") need more than the card's " + fmtGiB(c.vram) + ".";
        status.setAttribute("data-state", "nofit");
        return;
      }
      setOut(root, "free", c.free, fmtGiB(c.free));
      if (c.longest === null) {
        setOut(root, "max_tokens", null, "no limit: every layer keeps at most " + fmtInt(v.window) + " tokens");
      } else {
        setOut(root, "max_tokens", c.longest, fmtInt(c.longest) + " tokens");
      }
      setOut(root, "users_fit", c.usersFit, fmtInt(c.usersFit));
      var served = fmtInt(v.users) + (v.users === 1 ? " user" : " users");
      if (c.longest === 0) {
        status.textContent = "The weights fit, but no room is left for even one token of cache.";
        status.setAttribute("data-state", "nocache");
      } else if (c.usersFit === 0) {
        status.textContent = "Not one full context fits: one user needs " + fmtBytes(c.perUser) + " of cache at " + fmtInt(v.context) + " tokens and " + fmtGiB(c.free) + " is left.";
        status.setAttribute("data-state", "nouser");
      } else if (c.usersFit < v.users) {
        status.textContent = fmtInt(c.usersFit) + " users fit at " + fmtInt(v.context) + " tokens each, fewer than the " + served + " served: the speed shown assumes memory the card does not have.";
        status.setAttribute("data-state", "overserved");
      } else {
        status.textContent =
          fmtInt(c.usersFit) + " users fit at " + fmtInt(v.context) + " tokens each; serving " + served + ", a decode step can take no less than " +
          fmtFixed(c.floor.step_s * 1e3, 2) + " ms.";
        status.setAttribute("data-state", "ok");
      }
    }

    // A typed value no longer matches its preset: the preset says so.
    var groupSelect = { model: sel.model, precision: sel.precision, card: sel.card };
    root.addEventListener("input", function (e) {
      var t = e.target;
      if (!t) return;
      if (t === configBox) { applyConfig(); update(); return; }
      if (t.tagName !== "INPUT") return;
      FIELDS.forEach(function (f) {
        if (f.id === t.name && f.group && groupSelect[f.group]) groupSelect[f.group].value = CUSTOM;
      });
      update();
    });
    sel.model.addEventListener("change", function () { applyModel(); update(); });
    sel.precision.addEventListener("change", function () { applyPrecision(); update(); });
    sel.cache.addEventListener("change", update);
    sel.card.addEventListener("change", function () { applyCard(); update(); });
    root.addEventListener("submit", function (e) { e.preventDefault(); });

    // Defaults: the first preset of each kind, the stated reserve, context and users;
    // then whatever the page's URL says.
    sel.model.value = modelPresets.length ? modelPresets[0].name : CUSTOM;
    sel.precision.value = precisions.length ? precisions[0].precision : CUSTOM;
    var fp16 = caches.filter(function (p) { return p.kv_bytes_per_element === assumptions.kv_bytes_per_element; })[0];
    if (fp16) sel.cache.value = fp16.precision;
    var card = find(cards, "card", defaults.card) || cards[0];
    sel.card.value = card ? card.card : CUSTOM;
    applyModel();
    applyPrecision();
    applyCard();
    if (assumptions.reserve_gib !== undefined) inputs.reserve_gib.value = String(assumptions.reserve_gib);
    if (assumptions.context_per_user !== undefined) inputs.context.value = String(assumptions.context_per_user);
    inputs.users.value = String(defaults.users_served || 1);
    readUrl();
    update();
    root.setAttribute("data-ready", "1");
  }

  function start() {
    var roots = document.querySelectorAll("form[data-calculator]");
    for (var i = 0; i < roots.length; i++) init(roots[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  // Material's instant navigation swaps pages without a load event; it announces each page on document$.
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) window.document$.subscribe(start);
})();
