/*
 * The page's language, for the calculator: its messages and its numbers, written and
 * read with the page's separators. The one place the calculator formats a number.
 *
 * The build puts a <script type="application/json" data-calculator-locale> on the page
 * (sitekit/language/calculator_locale.py): the separators the page's numbers are written
 * with and every message of the calculator's scripts, translated. A message is the
 * English text written inside t(...), placeholders in braces filled after the lookup, so
 * that a translation can put them where its grammar wants them.
 */
(function () {
  "use strict";

  var ENGLISH = { locale: "en", decimal: ".", group: ",", messages: {} };
  var SPACES = /[ \u00a0\u202f]/g; // a group of a locale that groups with a space may be typed with any of them
  var SUPERSCRIPT = { "-": "\u207b", 0: "\u2070", 1: "\u00b9", 2: "\u00b2", 3: "\u00b3", 4: "\u2074", 5: "\u2075", 6: "\u2076", 7: "\u2077", 8: "\u2078", 9: "\u2079" };
  var IEC = [["TiB", 1099511627776], ["GiB", 1073741824], ["MiB", 1048576], ["KiB", 1024]];
  // A number in a link: the canonical form every edition writes and reads (no group, "." for decimals)
  var CANONICAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

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
      // every edition's number format, for a link written in another's (link.js)
      formats: Array.isArray(found.formats) ? found.formats : [],
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

    /* The digits `ds` with the decimal point after `point` of them, rounded to `digits`
       decimals: [integer digits, decimal digits]. up(next, rest, last): whether to round
       up, from the first digit dropped, the ones after it and the last digit kept. */
    function roundDigits(ds, point, digits, up) {
      if (point < 1) {
        ds = zeros(1 - point) + ds;
        point = 1;
      }
      var keep = point + digits;
      if (ds.length < keep) ds += zeros(keep - ds.length);
      var kept = ds.slice(0, keep).split("");
      if (ds.length > keep && up(ds.charAt(keep), ds.slice(keep + 1), kept[kept.length - 1])) {
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

    /* |x| rounded to `digits` decimals as Intl.NumberFormat rounds: half away from zero,
       on the shortest decimal text of the double. */
    function rounded(x, digits) {
      var m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)));
      var point = m[1].length + (m[3] ? Number(m[3]) : 0);
      return roundDigits(m[1] + (m[2] || ""), point, digits, function (next) { return next >= "5"; });
    }

    /* |x| rounded to `digits` decimals as Python's round() does (the site's tables,
       sitekit/language/formatting.py): on the double's exact value, a tie to the even digit.
       toFixed(100) writes that value whole below 10^21 (the calculator's values are). */
    function roundedEven(x, digits) {
      var s = Math.abs(x).toFixed(100);
      var point = s.indexOf(".");
      return roundDigits(s.slice(0, point) + s.slice(point + 1), point, digits, function (next, rest, last) {
        if (next !== "5") return next > "5";
        return /[1-9]/.test(rest) || Number(last) % 2 === 1;
      });
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

    /* `digits` significant digits, as formatting.number() writes them: a zero that is
       one of them is kept (13.0 for 13.04) unless `of` (x itself, or the number whose
       mantissa x is) ends there exactly (13, 1.5). */
    function significant(x, digits, of) {
      if (x === 0) return "0";
      var whole = of === undefined ? x : of;
      var exact = Number(whole.toPrecision(digits)) === whole;
      var magnitude = Math.floor(Math.log10(Math.abs(x)));
      var r = roundedEven(x, Math.max(0, digits - 1 - magnitude));
      var frac = r[1];
      var back = Number(r[0] + "." + (frac || "0"));
      if (back !== 0 && Math.floor(Math.log10(back)) > magnitude) frac = frac.slice(0, -1); // 99.96 is 100
      if (exact) frac = frac.replace(/0+$/, "");
      return (x < 0 ? "-" : "") + grouped(r[0]) + (frac ? decimal + frac : "");
    }

    /* formatting.scientific(): a power of ten outside 10^-3 to 10^6 */
    function scientific(x, digits) {
      if (x === 0) return "0";
      var exp = Math.floor(Math.log10(Math.abs(x)));
      if (exp >= -3 && exp < 6) return significant(x, digits);
      var mant = x / Number("1e" + exp); // Python's 10**exp: exact, or the nearest double
      if (Math.abs(Number(mant.toFixed(digits - 1))) >= 10) { exp += 1; mant /= 10; } // 9.996e8 is 1.00 × 10⁹
      return significant(mant, digits, x) + " \u00d7 10" + String(exp).replace(/./g, function (c) { return SUPERSCRIPT[c]; });
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
      /* as the site's tables write a measurement: formatting.format_value(x, style="num") */
      num: function (x) {
        if (!isFinite(x)) return String(x);
        return Math.abs(x) > 0 && Math.abs(x) < 1e-3 ? scientific(x, 3) : significant(x, 3);
      },
      /* bytes as the site's tables write them: formatting.iec(), less its unit */
      iec: function (bytes) {
        for (var i = 0; i < IEC.length; i++) {
          if (Math.abs(bytes) >= IEC[i][1]) return [significant(bytes / IEC[i][1], 3), IEC[i][0]];
        }
        return [format(bytes, 0, true), "B"];
      },
      /* a value as a field holds it: no groups, the page's decimal symbol */
      input: function (x) { return String(x).replace(".", decimal); },
      unit: function (number, unit) { return unit ? number + unitSpace + unit : number; },
      read: read,
      /* a number in a link, the same in every edition: write(x) its text, read(text) the
         number, or null when the text is not in that form (a link of the page's own format) */
      canonical: {
        write: function (x) { return String(x); },
        read: function (text) { return CANONICAL.test(text) ? Number(text) : null; },
      },
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

    return {
      t: t,
      tooLarge: function () { return t("too large to show"); },
      integer: integer,
      fixed: fixed,
      plain: plain,
      unit: N.unit,
      input: N.input,
      read: N.read,
      canonical: N.canonical,
      /* a measurement, to the tables' precision (3 significant digits) */
      num: function (x) { return shown(N.num(x), x); },
      /* bytes with their IEC unit (B, KiB, MiB, GiB, TiB), as the tables write them */
      iec: function (bytes) {
        var r = N.iec(bytes);
        return N.unit(shown(r[0], bytes), r[1]);
      },
      tokens: function (n) { return N.unit(integer(n), t("tokens")); },
      echo: function (text, most) {
        // only the characters it may show are split (a character is at most two code
        // units): a pasted name of megabytes costs no more than a short one
        text = String(text);
        most = most || ECHO;
        var chars = Array.from(text.slice(0, 2 * most + 2));
        return chars.length > most ? chars.slice(0, most - 1).join("") + "\u2026" : text;
      },
    };
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.locale = { read: read, fill: fill, numbers: numbers, page: page };
})();
