/*
 * The calculator's fields: what each accepts, and a field's text read as a number or
 * refused with a problem (a code, see messages.js) to show beside it.
 */
(function () {
  "use strict";

  /* The fields and their accepted ranges: anything outside is a typing error or not a
     real card or model. least: the smallest realistic value above 0 of a field that
     takes fractions (0.001 GiB, about 1 MiB, of memory or reserve; 0.001 GB/s), so that
     1e-300 is refused rather than computed. range: a field whose every value outside
     min to max gets one message naming both: bits per weight from 1 (a binary weight,
     the fewest bits a weight can be stored in) to 32 (fp32, the widest format model
     weights are kept in; no model is served in fp64). optional: an empty field means 0
     (no sliding window; no maximum context given; no mixture of experts, every
     parameter read; no peak given; a prompt of the whole context). group: the preset a typed value departs from.
     Each field's name is the page's label (label()). A mixture has at least two
     experts; a card count is that of a server's cards, at most 1,024. */
  function fields(t) {
    return [
      { id: "params", integer: true, min: 1, max: 1e13, unit: t("parameters"), group: "model" },
      { id: "active_params", integer: true, min: 1, max: 1e13, unit: t("parameters"), group: "model", optional: true },
      { id: "experts", integer: true, min: 2, max: 1e5, unit: "", group: "model", optional: true },
      { id: "experts_per_token", integer: true, min: 1, max: 1e5, unit: "", group: "model", optional: true },
      { id: "layers", integer: true, min: 1, max: 1000, unit: "", group: "model" },
      { id: "heads", integer: true, min: 1, max: 1e4, unit: "", group: "model" },
      { id: "kv_heads", integer: true, min: 1, max: 1024, unit: "", group: "model" },
      { id: "head_dim", integer: true, min: 1, max: 4096, unit: "", group: "model" },
      { id: "window", integer: true, min: 0, max: 1e8, unit: t("tokens"), group: "model", optional: true },
      { id: "windowed_layers", integer: true, min: 0, max: 1000, unit: "", group: "model", optional: true },
      { id: "max_context", integer: true, min: 1, max: 1e8, unit: t("tokens"), group: "model", optional: true },
      { id: "weight_bits", integer: false, min: 1, max: 32, range: true, unit: t("bits"), group: "precision" },
      { id: "vram_gib", integer: false, min: 0, minExclusive: true, least: 0.001, max: 65536, unit: "GiB", group: "card" },
      { id: "bandwidth_gb_s", integer: false, min: 0, minExclusive: true, least: 0.001, max: 1e5, unit: "GB/s", group: "bandwidth" },
      { id: "peak_tflops", integer: false, min: 0, minExclusive: true, least: 0.001, max: 1e6, unit: "TFLOP/s", group: "card", optional: true },
      { id: "cards", integer: true, min: 1, max: 1024, unit: "" },
      { id: "reserve_gib", integer: false, min: 0, least: 0.001, max: 65536, unit: "GiB" },
      { id: "context", integer: true, min: 1, max: 1e8, unit: t("tokens") },
      { id: "prompt", integer: true, min: 1, max: 1e8, unit: t("tokens"), optional: true },
      { id: "users", integer: true, min: 1, max: 1e6, unit: t("users") },
    ];
  }

  /* A field's name as its page writes it: its label's text, less a symbol in <i>. */
  function label(root, id) {
    var el = root.querySelector('label[for="calc-' + id + '"]');
    if (!el) return id;
    var copy = el.cloneNode(true);
    Array.prototype.forEach.call(copy.querySelectorAll("i"), function (i) { i.parentNode.removeChild(i); });
    return copy.textContent.replace(/\s+/g, " ").trim() || id;
  }

  /* One field's text -> {value} or {error: a problem}; P: the page (locale.js). */
  function parse(field, raw, P) {
    var r = P.read(raw);
    function refuse(code, values) {
      return { error: { code: code, field: field.id, values: values || {} } };
    }
    if (r.empty && field.optional) return { value: 0 };
    if (r.empty) return refuse("empty");
    var text = P.echo(String(raw).trim());
    if (r.readings && r.readings.decimal && r.readings.whole) {
      return refuse("ambiguous", { text: text, decimal: P.echo(r.readings.decimal), whole: P.echo(r.readings.whole) });
    }
    if (r.readings) return refuse("other_separators", { text: text, number: P.echo(r.readings.decimal || r.readings.whole) });
    if (r.invalid) return refuse("not_a_number");
    var x = r.value;
    if (!isFinite(x)) return refuse("not_finite");
    if (x === 0) x = 0; // -0 is 0
    if (x < 0) return refuse("negative");
    if (field.range && (x < field.min || x > field.max)) {
      return refuse("bits_out_of_range", { min: P.plain(field.min), max: P.plain(field.max) });
    }
    if (field.minExclusive && x <= field.min) return refuse("not_above", { min: P.plain(field.min) });
    if (!field.minExclusive && x < field.min) return refuse("below", { min: P.plain(field.min) });
    if (field.least && x > 0 && x < field.least) {
      var least = P.unit(P.plain(field.least), field.unit);
      return refuse(field.minExclusive ? "unrealistically_small" : "zero_or_at_least", { min: least });
    }
    if (field.integer && Math.floor(x) !== x) return refuse("not_whole");
    if (x > field.max) return refuse("unrealistically_large", { max: P.unit(P.plain(field.max), field.unit) });
    return { value: x };
  }

  /* Problems that need two fields at once, by field. */
  function crossCheck(v, P) {
    var errors = {};
    function refuse(code, id, values) {
      if (!errors[id]) errors[id] = { code: code, field: id, values: values || {} };
    }
    if (v.windowed_layers !== undefined && v.layers !== undefined && v.windowed_layers > v.layers) {
      refuse("more_than_layers", "windowed_layers", { layers: P.integer(v.layers) });
    } else if (v.windowed_layers > 0 && v.window === 0) {
      refuse("needs_window", "windowed_layers");
    }
    if (v.max_context > 0 && v.context > v.max_context) {
      refuse("above_max_context", "context", { max: P.tokens(v.max_context) });
    }
    if (v.prompt > 0 && v.prompt > v.context) refuse("longer_than_context", "prompt", { context: P.tokens(v.context) });
    mixtureCheck(v, P, refuse);
    return errors;
  }

  /* A mixture of experts needs its three counts to agree: k of n experts a token, and
     fewer parameters read than held exactly when k < n. Empty counts are 0 (none). */
  function mixtureCheck(v, P, refuse) {
    if (v.active_params > v.params) refuse("more_than_params", "active_params", { params: P.integer(v.params) });
    if (v.experts === undefined || v.experts_per_token === undefined) return;
    if (v.experts_per_token > 0 && v.experts === 0) refuse("empty", "experts");
    else if (v.experts > 0 && v.experts_per_token === 0) refuse("empty", "experts_per_token");
    else if (v.experts_per_token > v.experts) refuse("more_than_experts", "experts_per_token", { experts: P.integer(v.experts) });
    if (v.active_params === undefined || v.params === undefined) return;
    var fewer = v.active_params > 0 && v.active_params < v.params;
    if (fewer && v.experts === 0) refuse("needs_experts", "experts");
    else if (v.experts_per_token < v.experts && v.active_params === 0) refuse("empty", "active_params");
  }

  /* Every field's text read: {v: id -> number, errors: id -> problem}; a field with a
     problem has no number in v. */
  function readAll(specs, inputs, P) {
    var v = {}, errors = {};
    specs.forEach(function (f) {
      var r = parse(f, inputs[f.id].value, P);
      if (r.error) errors[f.id] = r.error;
      else v[f.id] = r.value;
    });
    var cross = crossCheck(v, P);
    Object.keys(cross).forEach(function (k) {
      if (!errors[k]) errors[k] = cross[k];
      delete v[k]; // a value its field refuses is no value: what needs it is not computed
    });
    return { v: v, errors: errors };
  }

  /* Where a pasted text stops being JSON, as JSON.parse reads it (RFC 8259): {line,
     column, found}, found the character there ("" past the end), or null when it is
     JSON. The calculator says so in the page's words, not in the browser's. Iterative:
     any depth of nesting. */
  var NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

  /* The line and column (in characters, a surrogate pair one) of the code unit k of
     text: one pass, no copy of the text. */
  function place(text, k) {
    var line = 1, column = 1;
    for (var i = 0; i < k; i++) {
      var c = text.charCodeAt(i);
      if (c === 10) {
        line++;
        column = 1;
      } else if (!(c >= 0xdc00 && c <= 0xdfff && i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800)) {
        column++; // the second half of a surrogate pair is no character of its own
      }
    }
    return { line: line, column: column };
  }
  var LITERALS = ["true", "false", "null"];

  function jsonError(text) {
    var i = 0, n = text.length, open = [], expect = "value";
    function ws() {
      while (i < n && " \t\n\r".indexOf(text.charAt(i)) >= 0) i++;
    }
    function at(k) {
      var c = k < n ? String.fromCodePoint(text.codePointAt(k)) : "";
      if (c !== "" && c.charCodeAt(0) < 32) c = "U+" + ("000" + c.charCodeAt(0).toString(16).toUpperCase()).slice(-4);
      var where = place(text, k);
      return { line: where.line, column: where.column, found: c };
    }
    function string() { // at a quote: true when the string closes
      for (i++; i < n; i++) {
        var c = text.charCodeAt(i);
        if (c === 34) {
          i++;
          return true;
        }
        if (c < 32) return false;
        if (c === 92) {
          var e = text.charAt(++i);
          if (e === "u") {
            for (var k = 0; k < 4; k++) if (!/[0-9a-fA-F]/.test(text.charAt(++i))) return false;
          } else if (e === "" || '"\\/bfnrt'.indexOf(e) < 0) {
            return false;
          }
        }
      }
      return false;
    }
    function value() { // true when a whole value (or an opening bracket) was read
      var c = text.charAt(i);
      if (c === '"') return string();
      if (c === "{" || c === "[") {
        open.push(c);
        i++;
        expect = "first";
        return true;
      }
      if (c === "-" || (c >= "0" && c <= "9")) {
        NUMBER.lastIndex = i;
        if (!NUMBER.test(text)) {
          i++; // a minus sign with no digit after it: the error is after it
          return false;
        }
        i = NUMBER.lastIndex;
        return true;
      }
      for (var w = 0; w < LITERALS.length; w++) {
        if (c === LITERALS[w].charAt(0)) {
          var j = 0;
          while (j < LITERALS[w].length && text.charAt(i + j) === LITERALS[w].charAt(j)) j++;
          i += j;
          return j === LITERALS[w].length;
        }
      }
      return false;
    }
    for (;;) {
      ws();
      var top = open[open.length - 1], c = text.charAt(i);
      if (expect === "first" && c === (top === "{" ? "}" : "]")) {
        open.pop();
        i++;
        expect = "after";
        continue;
      }
      if (expect !== "after") {
        if (top === "{") { // a key and its colon first
          if (c !== '"' || !string()) return at(i);
          ws();
          if (text.charAt(i) !== ":") return at(i);
          i++;
          ws();
        }
        expect = "after";
        if (!value()) return at(i);
        continue;
      }
      if (!open.length) return i === n ? null : at(i);
      if (c === ",") expect = "value";
      else if (c === (top === "{" ? "}" : "]")) open.pop();
      else return at(i);
      i++;
    }
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.form = { fields: fields, label: label, parse: parse, crossCheck: crossCheck, readAll: readAll, jsonError: jsonError, place: place };
})();
