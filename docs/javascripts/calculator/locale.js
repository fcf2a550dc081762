/*
 * The page's language, for the calculator: its messages and its numbers, written and
 * read with the page's separators. The one place the calculator formats a number.
 *
 * The build puts a <script type="application/json" data-calculator-locale> on the page
 * (hooks/sitekit/calculator_locale.py): the separators the page's numbers are written
 * with and every message of the calculator's scripts, translated. A message is the
 * English text written inside t(...), placeholders in braces filled after the lookup, so
 * that a translation can put them where its grammar wants them.
 */
(function () {
  "use strict";

  var ENGLISH = { locale: "en", decimal: ".", group: ",", messages: {} };
  var SPACES = /[ \u00a0\u202f]/g; // a group of a locale that groups with a space may be typed with any of them
  var GIB = 1073741824; // 2^30
  var MIB = 1048576; // 2^20

  function read() {
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

  /* `text` with each {name} of `values` filled in; a name without a value stays. */
  function fill(text, values) {
    if (!values) return text;
    return text.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
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

  /* What a page shows, in its language: t(message, values) and its numbers.

     A number as the page shows it: a zero never with a minus sign, and never a number
     that is not finite or longer than a result can be (2^53 bytes with its groups and
     two decimals), which says so instead (a result field then shows only that). What
     was typed or pasted, as a message repeats it (echo): at most `most` characters. */
  var LONGEST = 24;
  var ECHO = 40;

  function page(loc) {
    var N = numbers(loc);

    function t(message, values) {
      var found = Object.prototype.hasOwnProperty.call(loc.messages, message) ? loc.messages[message] : "";
      return fill(found || message, values);
    }

    function shown(text, x) {
      if (!isFinite(x) || text.length > LONGEST) return t("too large to show");
      return /^-[0\D]*$/.test(text) ? text.slice(1) : text;
    }

    function integer(n) {
      return shown(N.integer(n), n);
    }

    function fixed(x, digits) {
      return shown(N.fixed(x, digits), x);
    }

    function plain(x) {
      return shown(N.plain(x), x);
    }

    function gib(bytes) {
      return N.unit(fixed(bytes / GIB, 2), "GiB");
    }

    return {
      t: t,
      tooLarge: function () { return t("too large to show"); },
      integer: integer,
      fixed: fixed,
      plain: plain,
      unit: N.unit,
      input: N.input,
      read: N.read,
      gib: gib,
      /* bytes, MiB or GiB, whichever reads best */
      bytes: function (bytes) {
        if (bytes < MIB) return N.unit(integer(bytes), t("bytes"));
        if (bytes < GIB) return N.unit(fixed(bytes / MIB, 2), "MiB");
        return gib(bytes);
      },
      tokens: function (n) { return N.unit(integer(n), t("tokens")); },
      echo: function (text, most) {
        var chars = Array.from(String(text));
        most = most || ECHO;
        return chars.length > most ? chars.slice(0, most - 1).join("") + "\u2026" : String(text);
      },
    };
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.locale = { read: read, fill: fill, numbers: numbers, page: page };
})();
