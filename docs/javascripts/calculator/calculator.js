/*
 * The memory-budget calculator (docs/calculator.md): a pasted config.json, the page's
 * URL, and what happens as one types. Loaded last, after the scripts it uses (mkdocs.yml):
 * locale.js (the page's messages and numbers), budget.js and model_config.js (mirrors of
 * measure/lab/budget.py and model_config.py), messages.js (problems as texts), form.js
 * (the fields), presets.js (the presets), paste.js (a pasted config.json), compute.js
 * (the results' arithmetic), results.js (the results, the bar, the status) and link.js
 * (the inputs in the page's address and the language selector's links).
 * tests/test_calculator_browser.py holds the results equal to the Python tables.
 */
(function () {
  "use strict";

  var C = window.LLMCalculator;
  // The selects by kind, and their names in the form and the address
  var SELECTS = { model: "preset_model", precision: "preset_precision", cache: "cache", card: "preset_card", bandwidth: "bandwidth_from" };
  // the order a link's choices are set in: a card before the source of its bandwidth
  var ORDER = ["model", "precision", "cache", "card", "bandwidth"];
  // the kinds whose choice sets fields (form.js: each field's group)
  var GROUPS = ["model", "precision", "card", "bandwidth"];
  var CUSTOM = C.presets.CUSTOM;

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
    var linkStatus = root.querySelector("[data-link-status]");
    var configBox = root.querySelector('[name="config"]');
    var configStatus = root.querySelector("[data-config-status]");
    var held = false; // the address is a link the page could not wholly restore, kept as it came
    C.presets.fillSelects(sel, p, P);

    // What a preset or a config writes into a field is in the page's own format.
    function put(id, x) {
      inputs[id].value = x === null || x === undefined || x === "" ? "" : P.input(x);
    }
    function preset(kind) {
      return C.presets.values(p, kind, sel[kind].value, sel.card.value);
    }
    // A chosen preset's values into its fields; a card brings its rated bandwidth.
    function apply(kind) {
      var values = preset(kind);
      if (values) Object.keys(values).forEach(function (id) { put(id, values[id]); });
      if (kind === "card" && values) {
        sel.bandwidth.value = C.presets.RATED;
        apply("bandwidth");
      }
    }
    // A preset whose fields no longer hold its values is one's own (a link may say so).
    function departed() {
      GROUPS.forEach(function (kind) {
        var values = preset(kind);
        if (!values) return;
        var same = Object.keys(values).every(function (id) {
          var want = values[id] === "" ? "" : P.input(values[id]);
          return inputs[id].value.trim() === want;
        });
        if (!same) sel[kind].value = CUSTOM;
      });
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
      C.link.write(root, sel, inputs, FIELDS, v, P, held);
      var note = root.querySelector('[data-note-for="max_context"]');
      if (note) {
        note.textContent = inputs.max_context.value.trim() === "" && !errors.max_context
          ? t("No maximum given: the context is not checked against the model's own.")
          : "";
      }
      var ids = Object.keys(errors);
      // what the fields with a value give is shown; what needs a field with a problem is not
      var shown = C.results.show(root, P, v, ids.length === 0);
      if (!ids.length || (shown && shown.state === "error")) return say(shown.state, shown.text);
      var first = FIELDS.filter(function (f) { return errors[f.id]; })[0];
      // the field's own message stands beside it; the status names the field, not repeating what was typed
      say("error", ids.length === 1
        ? t("Fix the highlighted field: {field}.", { field: first.label })
        : t("Fix the highlighted fields ({count}).", { count: P.integer(ids.length) }));
    }

    /* A link's choices and fields; what it could not restore, in one line, and the
       address kept as it came until a value is changed. */
    function restore() {
      var link = C.link.read(sel, FIELDS, P, loc.formats);
      ORDER.forEach(function (kind) {
        if (link.selects[kind] === undefined) return;
        sel[kind].value = link.selects[kind];
        if (GROUPS.indexOf(kind) >= 0) apply(kind);
      });
      // one's own values the link does not give (a field newer than the link) are not guessed
      FIELDS.forEach(function (f) {
        var own = link.selects[f.group] === CUSTOM;
        inputs[f.id].value = link.fields[f.id] !== undefined ? link.fields[f.id] : own ? "" : inputs[f.id].value;
      });
      departed();
      var lost = link.unknown.map(function (u) {
        return t("{what} “{value}” is no choice of this page", { what: C.form.label(root, SELECTS[u.kind].replace("preset_", "preset-")), value: P.echo(u.value) });
      });
      var refused = C.form.readAll(FIELDS, inputs, P).errors;
      Object.keys(link.fields).forEach(function (id) {
        if (refused[id]) lost.push(t("{what} “{value}”: see the message beside it", { what: labels[id], value: P.echo(link.fields[id]) }));
      });
      held = lost.length > 0;
      linkStatus.textContent = held ? t("Not restored from this link: {items}. The address keeps the link as it came until you change a value.", { items: lost.join("; ") }) : "";
    }

    function edited() {
      if (held) {
        held = false;
        linkStatus.textContent = "";
      }
    }

    // A typed value no longer matches its preset: the preset says so.
    root.addEventListener("input", function (e) {
      var target = e.target;
      if (!target) return;
      edited();
      if (target === configBox) {
        if (C.paste.apply(configBox.value, put, configStatus, p, P)) sel.model.value = CUSTOM;
        update();
        return;
      }
      if (target.tagName !== "INPUT") return;
      FIELDS.forEach(function (f) {
        if (f.id === target.name && f.group && sel[f.group]) sel[f.group].value = CUSTOM;
      });
      update();
    });
    GROUPS.forEach(function (kind) {
      sel[kind].addEventListener("change", function () { edited(); apply(kind); update(); });
    });
    sel.cache.addEventListener("change", function () { edited(); update(); });
    root.addEventListener("submit", function (e) { e.preventDefault(); });

    // Defaults: the first preset of each kind, the stated reserve, context and users, one
    // card (the prompt's field left empty: the whole context); then what the URL says.
    var a = p.assumptions, first = C.presets.initial(p);
    ORDER.forEach(function (kind) {
      if (first[kind] === null) return;
      sel[kind].value = first[kind];
      if (GROUPS.indexOf(kind) >= 0) apply(kind);
    });
    if (a.reserve_gib !== undefined) put("reserve_gib", a.reserve_gib);
    if (a.context_per_user !== undefined) put("context", a.context_per_user);
    put("users", p.defaults.users_served || 1);
    put("cards", 1);
    restore();
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
