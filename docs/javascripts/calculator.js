/*
 * The memory-budget calculator (docs/calculator.md).
 *
 * The same arithmetic, in the same order, as measure/lab/formulas.py:
 *   bytes of V GiB      = floor(V * 2^30)
 *   weights             = ceil(params * bits / 8)
 *   KV bytes per token  = ceil(2 * layers * kv_heads * head_dim * bytes_per_element)
 *   max tokens          = floor((VRAM - reserve - weights) / KV bytes per token),
 *                         "does not fit" when VRAM - reserve - weights < 0
 *   users               = floor(max tokens / context per user)
 * Every quantity stays below 2^53 within the accepted input ranges, so doubles hold
 * them exactly; the floor of a quotient is corrected to the exact integer quotient.
 * tests/test_calculator_browser.py holds the results equal to the Python tables.
 */
(function () {
  "use strict";

  var GIB = 1073741824; // 2^30: GiB is a power of two

  // Accepted ranges: anything outside is a typing error or not a real card or model.
  var FIELDS = [
    { id: "params", label: "Parameters", integer: true, min: 1, max: 1e13, unit: "parameters" },
    { id: "layers", label: "Layers", integer: true, min: 1, max: 1000, unit: "" },
    { id: "kv_heads", label: "Key-value heads", integer: true, min: 1, max: 1024, unit: "" },
    { id: "head_dim", label: "Head dimension", integer: true, min: 1, max: 4096, unit: "" },
    { id: "weight_bits", label: "Bits per weight", integer: false, min: 0, minExclusive: true, max: 64, unit: "bits" },
    { id: "kv_bytes", label: "KV bytes per element", integer: false, min: 0, minExclusive: true, max: 8, unit: "bytes" },
    { id: "vram_gib", label: "Card memory", integer: false, min: 0, minExclusive: true, max: 65536, unit: "GiB" },
    { id: "reserve_gib", label: "Runtime reserve", integer: false, min: 0, minExclusive: false, max: 65536, unit: "GiB" },
    { id: "context", label: "Context per user", integer: true, min: 1, max: 1e8, unit: "tokens" },
  ];
  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

  function fmtInt(n) {
    return n.toLocaleString("en-US", { maximumFractionDigits: 0 });
  }

  function fmtGiB(bytes) {
    return (bytes / GIB).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }) + " GiB";
  }

  function fmtPlain(x) {
    return x.toLocaleString("en-US", { maximumFractionDigits: 6 });
  }

  /* One field's text -> {value} or {error}. */
  function parseField(field, raw) {
    var text = String(raw).trim().replace(/,/g, "");
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

  /* floor(a / b) for non-negative integers a, b > 0 held exactly in doubles. */
  function floorDiv(a, b) {
    var q = Math.floor(a / b);
    while (q * b > a) q -= 1;
    while ((q + 1) * b <= a) q += 1;
    return q;
  }

  /* The budget, from parsed values. Mirrors measure/lab/formulas.py. */
  function budget(v) {
    var vram = Math.floor(v.vram_gib * GIB);
    var reserve = Math.floor(v.reserve_gib * GIB);
    var weights = Math.ceil((v.params * v.weight_bits) / 8);
    var kv = Math.ceil(2 * v.layers * v.kv_heads * v.head_dim * v.kv_bytes);
    var free = vram - reserve - weights;
    var tokens = free < 0 ? null : floorDiv(free, kv);
    var users = tokens === null ? null : floorDiv(tokens, v.context);
    return { vram: vram, reserve: reserve, weights: weights, kv: kv, free: free, tokens: tokens, users: users };
  }

  function setOut(root, name, value, text) {
    var el = root.querySelector('[data-out="' + name + '"]');
    if (!el) return;
    el.textContent = text;
    el.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
  }

  function presetRows(name) {
    var el = document.querySelector('script[data-json-table="' + name + '"]');
    if (!el) return [];
    try {
      return JSON.parse(el.textContent).rows || [];
    } catch (e) {
      return [];
    }
  }

  function fillSelect(select, rows, label) {
    rows.forEach(function (row, i) {
      var opt = document.createElement("option");
      opt.value = String(i);
      opt.textContent = label(row);
      select.appendChild(opt);
    });
  }

  function init(root) {
    if (root.getAttribute("data-ready") === "1") return;
    var models = presetRows("memory_budget.models");
    var precisions = presetRows("memory_budget.precisions");
    var cards = presetRows("memory_budget.cards");
    var assumptions = presetRows("memory_budget.assumptions")[0] || {};
    var inputs = {};
    FIELDS.forEach(function (f) {
      inputs[f.id] = root.querySelector('[name="' + f.id + '"]');
    });
    var selModel = root.querySelector('[name="preset_model"]');
    var selPrecision = root.querySelector('[name="preset_precision"]');
    var selCard = root.querySelector('[name="preset_card"]');
    var status = root.querySelector("[data-status]");

    fillSelect(selModel, models, function (m) {
      return m.model + ": " + m.layers + " layers, " + m.kv_heads + " KV heads × " + m.head_dim;
    });
    fillSelect(selPrecision, precisions, function (p) {
      return p.precision + " (" + fmtPlain(p.weight_bits) + " bits per weight)";
    });
    fillSelect(selCard, cards, function (c) {
      return fmtPlain(c.card_gib) + " GiB";
    });

    function applyModel() {
      var m = models[Number(selModel.value)];
      if (!m) return;
      inputs.params.value = String(m.params);
      inputs.layers.value = String(m.layers);
      inputs.kv_heads.value = String(m.kv_heads);
      inputs.head_dim.value = String(m.head_dim);
      inputs.kv_bytes.value = String(m.kv_bytes_per_element);
    }
    function applyPrecision() {
      var p = precisions[Number(selPrecision.value)];
      if (p) inputs.weight_bits.value = String(p.weight_bits);
    }
    function applyCard() {
      var c = cards[Number(selCard.value)];
      if (c) inputs.vram_gib.value = String(c.card_gib);
    }

    function update() {
      var values = {};
      var errors = [];
      FIELDS.forEach(function (f) {
        var r = parseField(f, inputs[f.id].value);
        var msg = root.querySelector('[data-error-for="' + f.id + '"]');
        if (r.error) {
          errors.push(r.error);
          inputs[f.id].setAttribute("aria-invalid", "true");
          if (msg) msg.textContent = r.error;
        } else {
          values[f.id] = r.value;
          inputs[f.id].removeAttribute("aria-invalid");
          if (msg) msg.textContent = "";
        }
      });
      var dash = "—";
      if (errors.length) {
        ["weights", "kv_per_token", "free", "max_tokens", "users"].forEach(function (k) {
          setOut(root, k, null, dash);
        });
        status.textContent = errors.length === 1 ? "Fix the highlighted field: " + errors[0] : "Fix the " + errors.length + " highlighted fields.";
        status.setAttribute("data-state", "error");
        return;
      }
      var b = budget(values);
      setOut(root, "weights", b.weights, fmtGiB(b.weights) + " (" + fmtInt(b.weights) + " bytes)");
      setOut(root, "kv_per_token", b.kv, fmtInt(b.kv) + " bytes");
      if (b.tokens === null) {
        setOut(root, "free", b.free, "none: short by " + fmtGiB(-b.free));
        setOut(root, "max_tokens", null, "does not fit");
        setOut(root, "users", null, "does not fit");
        status.textContent =
          "Does not fit: the weights (" + fmtGiB(b.weights) + ") and the reserve (" + fmtGiB(b.reserve) +
          ") need more than the card's " + fmtGiB(b.vram) + ".";
        status.setAttribute("data-state", "nofit");
        return;
      }
      setOut(root, "free", b.free, fmtGiB(b.free));
      setOut(root, "max_tokens", b.tokens, fmtInt(b.tokens) + " tokens");
      setOut(root, "users", b.users, fmtInt(b.users));
      if (b.tokens === 0) {
        status.textContent = "The weights fit, but no room is left for even one token of cache.";
        status.setAttribute("data-state", "nocache");
      } else if (b.users === 0) {
        status.textContent =
          "Not one full context fits: the cache holds " + fmtInt(b.tokens) + " tokens and one user needs " + fmtInt(values.context) + ".";
        status.setAttribute("data-state", "nouser");
      } else {
        status.textContent =
          fmtInt(b.users) + " users at " + fmtInt(values.context) + " tokens each, " + fmtInt(b.tokens) + " tokens resident in all.";
        status.setAttribute("data-state", "ok");
      }
    }

    selModel.addEventListener("change", function () { applyModel(); update(); });
    selPrecision.addEventListener("change", function () { applyPrecision(); update(); });
    selCard.addEventListener("change", function () { applyCard(); update(); });
    root.addEventListener("input", function (e) {
      if (e.target && e.target.tagName === "INPUT") update();
    });
    root.addEventListener("submit", function (e) { e.preventDefault(); });

    // Defaults: the first preset of each kind, the stated reserve and context.
    selModel.value = "0";
    selPrecision.value = "0";
    selCard.value = String(Math.max(0, cards.findIndex(function (c) { return c.card_gib === 24; })));
    applyModel();
    applyPrecision();
    applyCard();
    if (assumptions.reserve_gib !== undefined) inputs.reserve_gib.value = String(assumptions.reserve_gib);
    if (assumptions.context_per_user !== undefined) inputs.context.value = String(assumptions.context_per_user);
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
