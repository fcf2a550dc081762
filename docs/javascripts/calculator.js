/*
 * The memory-budget calculator (docs/calculator.md): the form, its presets, a pasted
 * config.json, the breakdown bar and the page's URL. The arithmetic is budget.js's
 * (the same as measure/lab/budget.py); tests/test_calculator_browser.py holds the
 * results equal to the Python tables.
 */
(function () {
  "use strict";

  var OUTPUTS = ["weights", "kv_per_token", "cache_per_user", "free", "max_tokens", "users_fit", "step_ms", "tokens_per_s_per_user", "tokens_per_s"];
  var SELECTS = { model: "preset_model", precision: "preset_precision", cache: "cache", card: "preset_card" };
  var CUSTOM = "custom";
  var SPACES = /[ \u00a0\u202f]/g; // a group of a locale that groups with a space may be typed with any of them
  var B = window.LLMBudget;

  /* ---- the page's language ----
     The build puts a <script type="application/json" data-calculator-locale> on the page
     (hooks/sitekit/calculator_locale.py): the separators the page's numbers are written
     with and every message below, translated. A message is the English text written
     inside t(...), placeholders in braces filled after the lookup, so that a translation
     can put them where its grammar wants them. */
  var ENGLISH = { locale: "en", decimal: ".", group: ",", messages: {} };
  var L = ENGLISH;
  var N;

  function readLocale() {
    var el = document.querySelector("script[data-calculator-locale]");
    var found = {};
    if (el) {
      try {
        found = JSON.parse(el.textContent) || {};
      } catch (e) {
        found = {};
      }
    }
    return {
      locale: found.locale || ENGLISH.locale,
      decimal: found.decimal || ENGLISH.decimal,
      group: found.group || ENGLISH.group,
      minGrouping: found.min_grouping || 1,
      messages: found.messages || {},
    };
  }

  function fill(text, values) {
    if (!values) return text;
    return text.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
  }

  function t(message, values) {
    var found = Object.prototype.hasOwnProperty.call(L.messages, message) ? L.messages[message] : "";
    return fill(found || message, values);
  }

  /* ---- numbers in the page's format ----
     Written and read by hand with the page's separators, not with toLocaleString, which
     knows only the locales the browser has. Rounding is Intl.NumberFormat's: half away
     from zero, on the shortest decimal text of the double. */
  function numbers(loc) {
    var decimal = loc.decimal, group = loc.group;
    // CLDR's minimum grouping digits: a Spanish page leaves four digits whole (8295)
    var minGrouping = loc.minGrouping || loc.min_grouping || 1;
    var spaceGroup = /^\s$/.test(group);
    var unitSpace = loc.locale === "en" ? " " : "\u00a0"; // the English texts keep a plain space
    var esc = function (c) { return c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); };
    var groupChar = spaceGroup ? "[ \\u00a0\\u202f]" : esc(group);
    var dec = esc(decimal);
    var groupAll = new RegExp(groupChar, "g");
    // digits, or digits grouped in threes with the page's group symbol; then decimals
    var VALID = new RegExp("^(?:(?:\\d+|[1-9]\\d{0,2}(?:" + groupChar + "\\d{3})+)(?:" + dec + "\\d*)?|" + dec + "\\d+)$");

    function zeros(n) {
      return n > 0 ? new Array(n + 1).join("0") : "";
    }

    /* |x| rounded to `digits` decimals: [integer digits, decimal digits]. */
    function rounded(x, digits) {
      var m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)));
      var ds = m[1] + (m[2] || "");
      var point = m[1].length + (m[3] ? Number(m[3]) : 0);
      if (point < 1) {
        ds = zeros(1 - point) + ds;
        point = 1;
      }
      var keep = point + digits;
      if (ds.length < keep) ds += zeros(keep - ds.length);
      var up = ds.length > keep && ds.charAt(keep) >= "5";
      var kept = ds.slice(0, keep).split("");
      if (up) {
        var i = kept.length - 1;
        while (i >= 0 && kept[i] === "9") kept[i--] = "0";
        if (i < 0) {
          kept.unshift("1");
          point += 1;
        } else {
          kept[i] = String(Number(kept[i]) + 1);
        }
      }
      ds = kept.join("");
      return [ds.slice(0, point).replace(/^0+(?=\d)/, ""), ds.slice(point)];
    }

    function grouped(digits) {
      if (digits.length < 3 + minGrouping) return digits;
      var out = "";
      for (var i = 0; i < digits.length; i++) {
        if (i > 0 && (digits.length - i) % 3 === 0) out += group;
        out += digits.charAt(i);
      }
      return out;
    }

    function format(x, digits, trim) {
      if (!isFinite(x)) return String(x);
      var r = rounded(x, digits);
      var frac = trim ? r[1].replace(/0+$/, "") : r[1];
      var sign = x < 0 || (x === 0 && 1 / x < 0) ? "-" : "";
      return sign + grouped(r[0]) + (frac ? decimal + frac : "");
    }

    /* A typed text: {empty}, {value}, {invalid}, or, when its separators could mean
       more than one number or are not the page's, {readings: {decimal, whole}}, the
       number it may be, written as the page writes it (a reading that is not possible
       is absent). */
    function read(raw) {
      var text = String(raw).trim();
      if (text === "") return { empty: true };
      var m = /^([+-]?)(.*?)(?:[eE]([+-]?\d+))?$/.exec(text);
      var sign = m[1], mantissa = m[2], exponent = m[3] === undefined ? "" : "e" + m[3];
      if (VALID.test(mantissa)) {
        var plain = mantissa.replace(groupAll, "").replace(decimal, ".");
        return { value: Number(sign + plain + exponent) };
      }
      var n = mantissa.replace(SPACES, " ");
      if (!/^\d*(?:[., ]\d+)+$/.test(n)) return { invalid: true };
      var parts = n.split(/[., ]/);
      var seps = n.replace(/\d/g, "").split("");
      var last = seps[seps.length - 1], before = seps.slice(0, -1);
      var readings = {};
      // the last separator as a decimal one, every other one (the same, and another) grouping
      if ((last === "." || last === ",") && before.every(function (s) { return s === before[0] && s !== last; })) {
        if (parts[0] !== "" || before.length === 0) {
          var whole = parts.slice(0, -1).join("").replace(/^0+(?=\d)/, "") || "0";
          readings.decimal = sign + grouped(whole) + decimal + parts[parts.length - 1] + exponent;
        }
      }
      // every separator grouping
      if (parts[0] !== "" && parts[0].charAt(0) !== "0" && seps.every(function (s) { return s === seps[0]; })) {
        readings.whole = sign + grouped(parts.join("")) + exponent;
      }
      return readings.decimal || readings.whole ? { readings: readings } : { invalid: true };
    }

    return {
      integer: function (x) { return format(x, 0, true); },
      fixed: function (x, digits) { return format(x, digits, false); },
      plain: function (x) { return format(x, 6, true); },
      /* a value as a field holds it: no groups, the page's decimal symbol */
      input: function (x) { return String(x).replace(".", decimal); },
      unit: function (number, unit) { return unit ? number + unitSpace + unit : number; },
      read: read,
    };
  }

  /* A number as the page shows it: a zero never with a minus sign, and never a number
     that is not finite or longer than a result can be (2^53 bytes with its groups and
     two decimals), which says so instead (a result field then shows only that, setOut). */
  var LONGEST = 24;

  function shown(text, x) {
    if (!isFinite(x) || text.length > LONGEST) return t("too large to show");
    return /^-[0\D]*$/.test(text) ? text.slice(1) : text;
  }

  /* What was typed or pasted, as a message repeats it: at most `most` characters. */
  var ECHO = 40;

  function echo(text, most) {
    var chars = Array.from(String(text));
    most = most || ECHO;
    return chars.length > most ? chars.slice(0, most - 1).join("") + "\u2026" : String(text);
  }

  function fmtInt(n) {
    return shown(N.integer(n), n);
  }

  function fmtFixed(x, digits) {
    return shown(N.fixed(x, digits), x);
  }

  function fmtPlain(x) {
    return shown(N.plain(x), x);
  }

  function fmtGiB(bytes) {
    return N.unit(fmtFixed(bytes / B.GIB, 2), "GiB");
  }

  function fmtBytes(bytes) {
    if (bytes < 1048576) return N.unit(fmtInt(bytes), t("bytes"));
    if (bytes < B.GIB) return N.unit(fmtFixed(bytes / 1048576, 2), "MiB");
    return fmtGiB(bytes);
  }

  function tokens(n) {
    return N.unit(fmtInt(n), t("tokens"));
  }

  /* The fields and their accepted ranges: anything outside is a typing error or not a
     real card or model. least: the smallest realistic value above 0 of a field that
     takes fractions (0.1 bit per weight; 0.001 GiB, about 1 MiB, of memory or reserve;
     0.001 GB/s), so that 1e-300 is refused rather than computed. optional: an empty
     field means 0 (no sliding window). Their names are the page's labels (see fieldLabel). */
  function fieldSpecs() {
    return [
      { id: "params", integer: true, min: 1, max: 1e13, unit: t("parameters"), group: "model" },
      { id: "layers", integer: true, min: 1, max: 1000, unit: "", group: "model" },
      { id: "kv_heads", integer: true, min: 1, max: 1024, unit: "", group: "model" },
      { id: "head_dim", integer: true, min: 1, max: 4096, unit: "", group: "model" },
      { id: "window", integer: true, min: 0, max: 1e8, unit: t("tokens"), group: "model", optional: true },
      { id: "windowed_layers", integer: true, min: 0, max: 1000, unit: "", group: "model", optional: true },
      { id: "weight_bits", integer: false, min: 0, minExclusive: true, least: 0.1, max: 64, unit: t("bits"), group: "precision" },
      { id: "vram_gib", integer: false, min: 0, minExclusive: true, least: 0.001, max: 65536, unit: "GiB", group: "card" },
      { id: "bandwidth_gb_s", integer: false, min: 0, minExclusive: true, least: 0.001, max: 1e5, unit: "GB/s", group: "card" },
      { id: "reserve_gib", integer: false, min: 0, least: 0.001, max: 65536, unit: "GiB" },
      { id: "context", integer: true, min: 1, max: 1e8, unit: t("tokens") },
      { id: "users", integer: true, min: 1, max: 1e6, unit: t("users") },
    ];
  }

  /* A field's name as its page writes it: its label's text, less a symbol in <i>. */
  function fieldLabel(root, id) {
    var label = root.querySelector('label[for="calc-' + id + '"]');
    if (!label) return id;
    var copy = label.cloneNode(true);
    Array.prototype.forEach.call(copy.querySelectorAll("i"), function (i) { i.parentNode.removeChild(i); });
    return copy.textContent.replace(/\s+/g, " ").trim() || id;
  }

  /* One field's text -> {value} or {error}. */
  function parseField(field, raw) {
    var r = N.read(raw);
    var name = field.label;
    if (r.empty && field.optional) return { value: 0 };
    if (r.empty) return { error: t("{field}: enter a value.", { field: name }) };
    var text = echo(String(raw).trim());
    if (r.readings && r.readings.decimal && r.readings.whole) {
      return {
        error: t("{text} is ambiguous here: write {decimal} for a decimal number, or {whole} for a whole number.", {
          text: text, decimal: echo(r.readings.decimal), whole: echo(r.readings.whole),
        }),
      };
    }
    if (r.readings) {
      return { error: t("{text} is not written this way here: write {number}.", { text: text, number: echo(r.readings.decimal || r.readings.whole) }) };
    }
    if (r.invalid) return { error: t("{field} must be a number (digits, optionally a decimal point or an exponent such as 7e9).", { field: name }) };
    var x = r.value;
    if (!isFinite(x)) return { error: t("{field} is too large to be a number.", { field: name }) };
    if (x === 0) x = 0; // -0 is 0
    if (x < 0) return { error: t("{field} cannot be negative.", { field: name }) };
    if (field.minExclusive && x <= field.min) return { error: t("{field} must be greater than {min}.", { field: name, min: fmtPlain(field.min) }) };
    if (!field.minExclusive && x < field.min) return { error: t("{field} must be at least {min}.", { field: name, min: fmtPlain(field.min) }) };
    if (field.least && x > 0 && x < field.least) {
      var least = N.unit(fmtPlain(field.least), field.unit);
      return field.minExclusive
        ? { error: t("{field} below {min} is not a realistic value.", { field: name, min: least }) }
        : { error: t("{field} must be 0, or at least {min}.", { field: name, min: least }) };
    }
    if (field.integer && Math.floor(x) !== x) return { error: t("{field} must be a whole number.", { field: name }) };
    if (x > field.max) {
      return { error: t("{field} above {max} is not a realistic value.", { field: name, max: N.unit(fmtPlain(field.max), field.unit) }) };
    }
    return { value: x };
  }

  /* Errors that need two fields at once, by field; name: the field's name. */
  function crossCheck(v, name) {
    var errors = {};
    if (v.windowed_layers !== undefined && v.layers !== undefined && v.windowed_layers > v.layers) {
      errors.windowed_layers = t("{field} cannot be more than the number of layers ({layers}).", { field: name, layers: fmtInt(v.layers) });
    } else if (v.windowed_layers > 0 && v.window === 0) {
      errors.windowed_layers = t("{field} needs a sliding window (empty or 0 means no window).", { field: name });
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
    el.textContent = text.indexOf(t("too large to show")) >= 0 ? t("too large to show") : text;
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
        ? t("The weights, the reserve and the cache of the users served ({users}) need {over} more than the card's {card}.", {
            users: fmtInt(users), over: fmtGiB(over), card: fmtGiB(c.vram),
          })
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

  /* budget.js's messages about a config.json, in the page's language. */
  function configMessage(note) {
    var v = note.values;
    if (typeof v.model_type === "string") v = Object.assign({}, v, { model_type: echo(v.model_type) });
    switch (note.template) {
      case "{name} is missing":
        return t("{name} is missing", v);
      case "{name} must be a positive whole number":
        return t("{name} must be a positive whole number", v);
      case "layer_types lists {count} layers, num_hidden_layers says {layers}":
        return t("layer_types lists {count} layers, num_hidden_layers says {layers}", v);
      case "layer_types has sliding layers but sliding_window is not a positive whole number":
        return t("layer_types has sliding layers but sliding_window is not a positive whole number", v);
      case "sliding_window must be a positive whole number or null":
        return t("sliding_window must be a positive whole number or null", v);
      case "sliding_window_pattern must be a positive whole number":
        return t("sliding_window_pattern must be a positive whole number", v);
      case "max_window_layers must be a whole number":
        return t("max_window_layers must be a whole number", v);
      case "sliding_window: which layers use it is not declared (no layer_types) for model_type '{model_type}'; every layer is counted with full attention":
        return t("sliding_window: which layers use it is not declared (no layer_types) for model_type '{model_type}'; every layer is counted with full attention", v);
      case "head_dim is missing and hidden_size {hidden} is not a multiple of {heads} heads":
        return t("head_dim is missing and hidden_size {hidden} is not a multiple of {heads} heads", v);
      case "num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}":
        return t("num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}", v);
      case "parameters: model_type '{model_type}' is not one whose layer layout is known here ({known}); type the count from the model card":
        return t("parameters: model_type '{model_type}' is not one whose layer layout is known here ({known}); type the count from the model card", v);
      case "parameters: too many to count exactly":
        return t("parameters: too many to count exactly", v);
      case "a config.json is a JSON object ({...})":
        return t("a config.json is a JSON object ({...})", v);
    }
    return fill(note.template, v);
  }

  /* budget.js's reasons for refusing to compute, in the page's language. */
  function rangeMessage(message) {
    if (message === "too large to compute exactly") return t("too large to compute exactly");
    if (message === "not a whole number of bytes") return t("not a whole number of bytes");
    return message;
  }

  function init(root) {
    if (root.getAttribute("data-ready") === "1") return;
    L = readLocale();
    N = numbers(L);
    var FIELDS = fieldSpecs();
    FIELDS.forEach(function (f) { f.label = fieldLabel(root, f.id); });
    var labels = {};
    FIELDS.forEach(function (f) { labels[f.id] = f.label; });
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
        label: t("{model}: {layers} layers, {kv_heads} KV heads × {head_dim}", {
          model: m.model, layers: fmtInt(m.layers), kv_heads: fmtInt(m.kv_heads), head_dim: fmtInt(m.head_dim),
        }) };
    }).concat(configs.map(function (c) {
      return { name: c.model, params: c.params, layers: c.layers, kv_heads: c.kv_heads, head_dim: c.head_dim, window: c.window, windowed_layers: c.windowed_layers,
        label: c.windowed_layers
          ? t("{model} (window {window} on {windowed_layers} of {layers} layers)", {
              model: c.model, window: fmtInt(c.window), windowed_layers: fmtInt(c.windowed_layers), layers: fmtInt(c.layers),
            })
          : c.model };
    }));
    fillSelect(sel.model, modelPresets, function (m) { return m.name; }, function (m) { return m.label; });
    addCustom(sel.model, t("Your own values (typed, or from a config.json)"));
    fillSelect(sel.precision, precisions, function (p) { return p.precision; }, function (p) {
      return t("{precision} ({bits} bits per weight)", { precision: p.precision, bits: fmtPlain(p.weight_bits) });
    });
    addCustom(sel.precision, t("Your own bits per weight"));
    fillSelect(sel.cache, caches, function (p) { return p.precision; }, function (p) {
      return t("{precision} ({bytes} per element)", { precision: p.precision, bytes: N.unit(fmtPlain(p.kv_bytes_per_element), "B") });
    });
    fillSelect(sel.card, cards, function (c) { return c.card; }, function (c) {
      return t("{card} ({memory}, {bandwidth})", { card: c.card, memory: N.unit(fmtPlain(c.memory_gib), "GiB"), bandwidth: N.unit(fmtInt(c.bandwidth_gb_s), "GB/s") });
    });
    addCustom(sel.card, t("Your own card"));

    function find(rows, key, value) {
      for (var i = 0; i < rows.length; i++) if (rows[i][key] === value) return rows[i];
      return null;
    }
    // What a preset or a config writes into a field is in the page's own format.
    function put(id, x) {
      inputs[id].value = x === null || x === undefined || x === "" ? "" : N.input(x);
    }
    function applyModel() {
      var m = find(modelPresets, "name", sel.model.value);
      if (!m) return;
      ["params", "layers", "kv_heads", "head_dim"].forEach(function (k) { put(k, m[k]); });
      put("window", m.window ? m.window : "");
      put("windowed_layers", m.window ? m.windowed_layers : "");
    }
    function applyPrecision() {
      var p = find(precisions, "precision", sel.precision.value);
      if (p) put("weight_bits", p.weight_bits);
    }
    function applyCard() {
      var c = find(cards, "card", sel.card.value);
      if (!c) return;
      put("vram_gib", c.memory_gib);
      put("bandwidth_gb_s", c.bandwidth_gb_s);
    }

    function configError(text) {
      configStatus.textContent = text;
      configStatus.setAttribute("data-state", "error");
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
        return configError(t("Not valid JSON: {error}", { error: echo(e.message, 120) }));
      }
      var s;
      try {
        s = B.shapeFromConfig(cfg, rules);
      } catch (e) {
        if (!(e instanceof B.ConfigError)) throw e;
        return configError(t("No model shape in this config: {reason}.", { reason: e.notes.map(configMessage).join("; ") }));
      }
      put("layers", s.layers);
      put("kv_heads", s.kv_heads ? s.kv_heads : "");
      put("head_dim", s.head_dim ? s.head_dim : "");
      put("params", s.params === null ? "" : s.params);
      put("window", s.window ? s.window : "");
      put("windowed_layers", s.window ? s.windowed_layers : "");
      sel.model.value = CUSTOM;
      var parts = [
        t("{model_type}: {layers} layers, {kv_heads} key-value heads × {head_dim}", {
          model_type: s.model_type ? echo(s.model_type) : t("unknown model_type"), layers: fmtInt(s.layers), kv_heads: fmtInt(s.kv_heads), head_dim: fmtInt(s.head_dim),
        }),
      ];
      if (s.window) {
        parts.push(t("a {window}-token window on {windowed_layers} of them", { window: fmtInt(s.window), windowed_layers: fmtInt(s.windowed_layers) }));
      }
      if (s.tied !== null) parts.push(s.tied ? t("tied embeddings") : t("separate output embeddings"));
      if (s.params !== null) parts.push(N.unit(fmtInt(s.params), t("parameters")));
      var summary = parts.join(", ") + ".";
      if (s.problems.length) summary += " " + t("Not derived: {problems}.", { problems: s.notes.map(configMessage).join("; ") });
      configStatus.textContent = summary;
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
      var cross = crossCheck(v, labels.windowed_layers);
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

    function noResult() {
      OUTPUTS.forEach(function (k) { setOut(root, k, null, "—"); });
      clearBar(root);
    }

    function showError(errors) {
      var ids = Object.keys(errors);
      noResult();
      var first = FIELDS.filter(function (f) { return errors[f.id]; })[0];
      // the field's own message stands beside it; the status names the field, not repeating what was typed
      status.textContent = ids.length === 1
        ? t("Fix the highlighted field: {field}.", { field: first.label })
        : t("Fix the highlighted fields ({count}).", { count: fmtInt(ids.length) });
      status.setAttribute("data-state", "error");
    }

    function say(state, text) {
      status.textContent = text;
      status.setAttribute("data-state", state);
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
        noResult();
        return say("error", t("These values are too large to compute to the byte: {reason}.", { reason: rangeMessage(e.message) }));
      }
      var bytes = N.unit(fmtInt(c.weights), t("bytes"));
      setOut(root, "weights", c.weights, fmtGiB(c.weights) + " (" + bytes + ")");
      setOut(root, "kv_per_token", c.kv, N.unit(fmtInt(c.kv), t("bytes")) + (c.windowed ? " " + t("(while the context is shorter than the window)") : ""));
      setOut(root, "cache_per_user", c.perUser, t("{size} at {context}", { size: fmtBytes(c.perUser), context: tokens(v.context) }));
      setOut(root, "step_ms", c.floor.step_s * 1e3, N.unit(fmtFixed(c.floor.step_s * 1e3, 2), "ms"));
      setOut(root, "tokens_per_s_per_user", c.floor.tokens_per_s_per_user, N.unit(fmtFixed(c.floor.tokens_per_s_per_user, 1), t("tokens/s")));
      setOut(root, "tokens_per_s", c.floor.tokens_per_s, N.unit(fmtFixed(c.floor.tokens_per_s, 1), t("tokens/s")));
      drawBar(root, c, v.users);
      if (!c.fits) {
        setOut(root, "free", c.free, t("none: short by {size}", { size: fmtGiB(-c.free) }));
        setOut(root, "max_tokens", null, t("does not fit"));
        setOut(root, "users_fit", null, t("does not fit"));
        return say("nofit", t("Does not fit: the weights ({weights}) and the reserve ({reserve}) need more than the card's {card}.", {
          weights: fmtGiB(c.weights), reserve: fmtGiB(c.reserve), card: fmtGiB(c.vram),
        }));
      }
      setOut(root, "free", c.free, fmtGiB(c.free));
      if (c.longest === null) {
        setOut(root, "max_tokens", null, t("no limit: every layer keeps at most {window}", { window: tokens(v.window) }));
      } else {
        setOut(root, "max_tokens", c.longest, tokens(c.longest));
      }
      setOut(root, "users_fit", c.usersFit, fmtInt(c.usersFit));
      if (c.longest === 0) {
        say("nocache", t("The weights fit, but no room is left for even one token of cache."));
      } else if (c.usersFit === 0) {
        say("nouser", t("Not one full context fits: one user needs {size} of cache at {context} and {free} is left.", {
          size: fmtBytes(c.perUser), context: tokens(v.context), free: fmtGiB(c.free),
        }));
      } else if (c.usersFit < v.users) {
        say("overserved", t("Users that fit at {context} each: {fit}, fewer than the users served ({users}): the speed shown assumes memory the card does not have.", {
          context: tokens(v.context), fit: fmtInt(c.usersFit), users: fmtInt(v.users),
        }));
      } else {
        say("ok", t("Users that fit at {context} each: {fit}. Users served: {users}; a decode step can take no less than {step}.", {
          context: tokens(v.context), fit: fmtInt(c.usersFit), users: fmtInt(v.users), step: N.unit(fmtFixed(c.floor.step_s * 1e3, 2), "ms"),
        }));
      }
    }

    // A typed value no longer matches its preset: the preset says so.
    var groupSelect = { model: sel.model, precision: sel.precision, card: sel.card };
    root.addEventListener("input", function (e) {
      var target = e.target;
      if (!target) return;
      if (target === configBox) { applyConfig(); update(); return; }
      if (target.tagName !== "INPUT") return;
      FIELDS.forEach(function (f) {
        if (f.id === target.name && f.group && groupSelect[f.group]) groupSelect[f.group].value = CUSTOM;
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
    if (assumptions.reserve_gib !== undefined) put("reserve_gib", assumptions.reserve_gib);
    if (assumptions.context_per_user !== undefined) put("context", assumptions.context_per_user);
    put("users", defaults.users_served || 1);
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
  // The number format, for a page's own checks: numbers({decimal: ",", group: "."}).read("1.234")
  window.LLMCalculator = { numbers: numbers };
})();
