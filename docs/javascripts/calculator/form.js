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
     (no sliding window; no maximum context given). group: the preset a typed value
     departs from. Each field's name is the page's label (label()). */
  function fields(t) {
    return [
      { id: "params", integer: true, min: 1, max: 1e13, unit: t("parameters"), group: "model" },
      { id: "layers", integer: true, min: 1, max: 1000, unit: "", group: "model" },
      { id: "kv_heads", integer: true, min: 1, max: 1024, unit: "", group: "model" },
      { id: "head_dim", integer: true, min: 1, max: 4096, unit: "", group: "model" },
      { id: "window", integer: true, min: 0, max: 1e8, unit: t("tokens"), group: "model", optional: true },
      { id: "windowed_layers", integer: true, min: 0, max: 1000, unit: "", group: "model", optional: true },
      { id: "max_context", integer: true, min: 1, max: 1e8, unit: t("tokens"), group: "model", optional: true },
      { id: "weight_bits", integer: false, min: 1, max: 32, range: true, unit: t("bits"), group: "precision" },
      { id: "vram_gib", integer: false, min: 0, minExclusive: true, least: 0.001, max: 65536, unit: "GiB", group: "card" },
      { id: "bandwidth_gb_s", integer: false, min: 0, minExclusive: true, least: 0.001, max: 1e5, unit: "GB/s", group: "card" },
      { id: "reserve_gib", integer: false, min: 0, least: 0.001, max: 65536, unit: "GiB" },
      { id: "context", integer: true, min: 1, max: 1e8, unit: t("tokens") },
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
    if (v.windowed_layers !== undefined && v.layers !== undefined && v.windowed_layers > v.layers) {
      errors.windowed_layers = { code: "more_than_layers", field: "windowed_layers", values: { layers: P.integer(v.layers) } };
    } else if (v.windowed_layers > 0 && v.window === 0) {
      errors.windowed_layers = { code: "needs_window", field: "windowed_layers", values: {} };
    }
    if (v.max_context > 0 && v.context > v.max_context) {
      errors.context = { code: "above_max_context", field: "context", values: { max: P.tokens(v.max_context) } };
    }
    return errors;
  }

  /* Every field's text read: {v: id -> number, errors: id -> problem}. */
  function readAll(specs, inputs, P) {
    var v = {}, errors = {};
    specs.forEach(function (f) {
      var r = parse(f, inputs[f.id].value, P);
      if (r.error) errors[f.id] = r.error;
      else v[f.id] = r.value;
    });
    var cross = crossCheck(v, P);
    Object.keys(cross).forEach(function (k) { if (!errors[k]) errors[k] = cross[k]; });
    return { v: v, errors: errors };
  }

  /* Where a pasted text stops being JSON, as JSON.parse reads it (RFC 8259): {line,
     column, found}, found the character there ("" past the end), or null when it is
     JSON. The calculator says so in the page's words, not in the browser's. Iterative:
     any depth of nesting. */
  var NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  var LITERALS = ["true", "false", "null"];

  function jsonError(text) {
    var i = 0, n = text.length, open = [], expect = "value";
    function ws() {
      while (i < n && " \t\n\r".indexOf(text.charAt(i)) >= 0) i++;
    }
    function at(k) {
      var before = text.slice(0, k), start = before.lastIndexOf("\n") + 1;
      var c = k < n ? String.fromCodePoint(text.codePointAt(k)) : "";
      if (c !== "" && c.charCodeAt(0) < 32) c = "U+" + ("000" + c.charCodeAt(0).toString(16).toUpperCase()).slice(-4);
      return { line: before.split("\n").length, column: Array.from(before.slice(start)).length + 1, found: c };
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
  window.LLMCalculator.form = { fields: fields, label: label, parse: parse, crossCheck: crossCheck, readAll: readAll, jsonError: jsonError };
})();
