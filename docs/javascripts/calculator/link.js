/*
 * The calculator's state in the page's address, so that a copied link, or the language
 * selector's link to another edition, opens the same setup. A number is written in one
 * canonical form that every edition reads (plain ASCII digits, "." for decimals, no
 * groups); a text that is no number (a field with its message) as typed.
 *
 * A link of an earlier version wrote numbers in its page's own format ("4,5" on the
 * Galician page). Such a text is read as the page reads a typed one; failing that, as
 * the site's other editions read it, when they agree on one number the field takes
 * ("4,5" on the English page, where it could be 4.5 or 45, is 4.5 everywhere else).
 * Otherwise it is left as it came, and the field says what is wrong with it. P is the
 * page (locale.js), specs the form's fields (form.js).
 */
(function () {
  "use strict";

  var C = window.LLMCalculator;

  /* x, when the field takes it as written on this page; else null. */
  function accepted(field, x, P) {
    if (x === null || x === undefined || !isFinite(x)) return null;
    return C.form.parse(field, P.input(x), P).error ? null : x;
  }

  /* A field's text from a link -> the text its field is given. formats: the site's
     editions' number formats (the locale element's), this page's among them. */
  function fromLink(field, text, P, formats) {
    var x = accepted(field, P.canonical.read(text.trim()), P);
    if (x !== null) return P.input(x);
    var own = P.read(text);
    if (own.empty || accepted(field, own.value, P) !== null) return text;
    var found = [];
    formats.forEach(function (f) {
      var y = accepted(field, C.locale.numbers(f).read(text).value, P);
      if (y !== null && found.indexOf(y) < 0) found.push(y);
    });
    return found.length === 1 ? P.input(found[0]) : text;
  }

  /* Every input into the page's address, the share link and the language selector's
     links; sel: the selects by the name they have in the address; v: the fields'
     numbers. hold: the address came from a link the page could not wholly restore, and
     is kept as it came (the share link and the selector's links follow the page). */
  function write(root, sel, inputs, specs, v, P, hold) {
    var q = new URLSearchParams();
    Object.keys(sel).forEach(function (k) { q.set(k, sel[k].value); });
    specs.forEach(function (f) {
      var typed = inputs[f.id].value.trim();
      q.set(f.id, typed !== "" && v[f.id] !== undefined ? P.canonical.write(v[f.id]) : typed);
    });
    var url = location.pathname + "?" + q.toString() + location.hash;
    if (!hold) {
      try {
        history.replaceState(history.state, "", url);
      } catch (e) { /* a file:// page may refuse; the calculator still works */ }
    }
    var link = root.querySelector("[data-share]");
    if (link) link.setAttribute("href", url);
    Array.prototype.forEach.call(document.querySelectorAll("a[hreflang]"), function (a) {
      a.setAttribute("href", a.getAttribute("href").split(/[?#]/)[0] + "?" + q.toString());
    });
  }

  /* What the page's address says: {selects: kind -> a value its select offers,
     fields: id -> the text its field is given, unknown: [{kind, value}] the choices no
     select offers}. The caller sets the selects first (a preset's fields with them),
     then the fields. */
  function read(sel, specs, P, formats) {
    var q = new URLSearchParams(location.search);
    var found = { selects: {}, fields: {}, unknown: [] };
    Object.keys(sel).forEach(function (k) {
      var want = q.get(k);
      if (want === null) return;
      var ok = Array.prototype.some.call(sel[k].options, function (o) { return o.value === want; });
      if (ok) found.selects[k] = want;
      else found.unknown.push({ kind: k, value: want });
    });
    specs.forEach(function (f) {
      var want = q.get(f.id);
      if (want !== null) found.fields[f.id] = fromLink(f, want, P, formats);
    });
    return found;
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.link = { write: write, read: read, fromLink: fromLink };
})();
