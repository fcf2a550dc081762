/*
 * What the calculator shows from the form's values: every result it could compute
 * (compute.js; a dash for one whose fields have a problem), the breakdown bar and the
 * status line. P is the page (locale.js), its messages and its numbers.
 */
(function () {
  "use strict";

  var M = window.LLMCalculator.messages;
  var OUTPUTS = [
    "weights", "kv_per_token", "cache_per_user", "free", "max_tokens", "users_fit", "params_read",
    "step_read_ms", "step_compute_ms", "step_ms", "tokens_per_s_per_user", "tokens_per_s", "first_token_ms",
  ];

  function setOut(root, P, name, value, text) {
    var el = root.querySelector('[data-out="' + name + '"]');
    if (!el) return;
    el.textContent = text.indexOf(P.tooLarge()) >= 0 ? P.tooLarge() : text;
    el.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
  }

  /* One card's memory: its share of the weights, its reserve, its share of the served
     users' cache and what is left; when they need more than the card, the bar spans what
     they need and the part past the card is marked. (Its widths are CSS, not numbers a
     reader reads.) */
  function drawBar(root, P, c, users) {
    var bar = root.querySelector("[data-bar]");
    if (!bar) return;
    var parts = [
      ["weights", c.weightsPerCard],
      ["reserve", c.reserve],
      ["cache", c.cachePerCard],
      ["free", Math.max(0, c.vram - c.reserve - c.weightsPerCard - c.cachePerCard)],
    ];
    var need = c.weightsPerCard + c.reserve + c.cachePerCard;
    var span = Math.max(c.vram, need);
    parts.forEach(function (p) {
      var seg = bar.querySelector('[data-part="' + p[0] + '"]');
      seg.style.width = ((100 * p[1]) / span).toFixed(3) + "%";
      seg.setAttribute("data-bytes", String(p[1]));
      seg.title = seg.getAttribute("data-label") + ": " + P.iec(p[1]);
      var legend = root.querySelector('[data-legend="' + p[0] + '"]');
      if (legend) legend.textContent = P.iec(p[1]);
    });
    var over = need - c.vram;
    var mark = bar.querySelector("[data-card-edge]");
    mark.style.left = ((100 * c.vram) / span).toFixed(3) + "%";
    bar.setAttribute("data-over", over > 0 ? String(over) : "0");
    var note = root.querySelector("[data-bar-note]");
    var values = { users: P.integer(users), over: P.iec(over), card: P.iec(c.vram) };
    note.textContent = over <= 0 ? "" : c.cards > 1
      ? P.t("On each card, the weights, the reserve and the cache of the users served ({users}) need {over} more than its {card}.", values)
      : P.t("The weights, the reserve and the cache of the users served ({users}) need {over} more than the card's {card}.", values);
  }

  function clearBar(root) {
    var bar = root.querySelector("[data-bar]");
    if (!bar) return;
    Array.prototype.forEach.call(bar.querySelectorAll("[data-part]"), function (seg) {
      seg.style.width = "0";
      seg.setAttribute("data-bytes", "");
    });
    bar.setAttribute("data-over", "0");
    Array.prototype.forEach.call(root.querySelectorAll("[data-legend]"), function (l) { l.textContent = "—"; });
    root.querySelector("[data-bar-note]").textContent = "";
  }

  /* No result: every output a dash, the bar empty. */
  function clear(root, P) {
    OUTPUTS.forEach(function (k) { setOut(root, P, k, null, "—"); });
    clearBar(root);
  }

  /* The longest context one user can have: memory's limit, the window's "no limit" in
     words, and the model's own maximum where one is given (v.max_context, 0: none). */
  function longestText(P, c, v) {
    var t = P.t, max = v.max_context ? P.tokens(v.max_context) : null;
    if (c.longest === null) {
      return max
        ? t("no limit from memory: the cache stops growing at the window ({window}); the model's own maximum context, {max}, still applies", { window: P.tokens(v.window), max: max })
        : t("no limit from memory: the cache stops growing at the window ({window}); the model's own maximum context still applies", { window: P.tokens(v.window) });
    }
    if (max && c.longest > v.max_context) return t("{tokens}, past the model's maximum context, {max}", { tokens: P.tokens(c.longest), max: max });
    return P.tokens(c.longest);
  }

  /* The memory's results, each where it could be computed. */
  function showMemory(out, P, c, v) {
    var t = P.t, several = c.cards > 1;
    if (c.weights !== undefined) {
      var whole = P.iec(c.weights) + " (" + P.unit(P.integer(c.weights), t("bytes")) + ")";
      out("weights", c.weights, several ? t("{size}; {each} on each card", { size: whole, each: P.iec(c.weightsPerCard) }) : whole);
    }
    if (c.kv !== undefined) out("kv_per_token", c.kv, P.unit(P.integer(c.kv), t("bytes")) + (c.windowed ? " " + t("(while the context is shorter than the window)") : ""));
    if (c.perUser !== undefined) out("cache_per_user", c.perUser, t("{size} at {context}", { size: P.iec(c.perUser), context: P.tokens(v.context) }));
    if (c.free === undefined) return;
    if (!c.fits) {
      out("free", c.free, t("none: short by {size}", { size: P.iec(-c.free) }));
      out("max_tokens", null, t("does not fit"));
      out("users_fit", null, t("does not fit"));
      return;
    }
    out("free", c.free, several ? t("{size} in all, {each} on each card", { size: P.iec(c.free), each: P.iec(c.free / c.cards) }) : P.iec(c.free));
    if (c.longest !== undefined) out("max_tokens", c.longest, longestText(P, c, v));
    if (c.usersFit !== undefined) out("users_fit", c.usersFit, P.integer(c.usersFit));
  }

  /* By how much the setup does not fit, or null: the weights and the reserve alone, one
     user's cache at the context, or the cache of all the users served. */
  function shortBy(c, v) {
    if (c.free === undefined) return undefined;
    if (!c.fits) return -c.free;
    if (c.usersFit === undefined) return undefined;
    if (c.usersFit === 0) return c.perUser - c.free;
    return c.usersFit < v.users ? c.servedCache - c.free : null;
  }

  /* The speed: the parameters a step reads, its two floors and the larger, tokens per
     second and the first token's time, when the setup fits; when it does not, no speed,
     and by how much it does not fit instead. */
  function showSpeed(out, P, c, v, short) {
    var t = P.t;
    var ms = function (s) { return P.unit(P.num(s * 1e3), "ms"); };
    if (c.readParams !== undefined) {
      var read = P.unit(P.integer(Math.round(c.readParams)), t("parameters"));
      out("params_read", c.readParams, c.distinctExperts === undefined ? read : t("{params}: the shared ones, and {distinct} of the {experts} experts of each layer on average", {
        params: read, distinct: P.num(c.distinctExperts), experts: P.integer(v.experts),
      }));
    }
    if (short === undefined) return;
    if (short !== null) {
      out("step_ms", null, t("does not fit: short by {size}", { size: P.iec(short) }));
      return;
    }
    if (c.floor !== undefined) out("step_read_ms", c.floor.step_s * 1e3, ms(c.floor.step_s));
    if (c.computeS !== undefined) out("step_compute_ms", c.computeS === null ? null : c.computeS * 1e3, c.computeS === null ? t("no peak given") : ms(c.computeS));
    if (c.stepS !== undefined) {
      out("step_ms", c.stepS * 1e3, ms(c.stepS));
      out("tokens_per_s_per_user", 1 / c.stepS, P.unit(P.num(1 / c.stepS), t("tokens/s")));
      out("tokens_per_s", v.users / c.stepS, P.unit(P.num(v.users / c.stepS), t("tokens/s")));
    }
    if (c.firstTokenS !== undefined) {
      out("first_token_ms", c.firstTokenS * 1e3, c.prefillComputeS === null
        ? t("{time}, reading only: no peak given", { time: ms(c.firstTokenS) })
        : ms(c.firstTokenS));
    }
  }

  /* The status of a setup whose every field has a value: {state, text}. */
  function status(P, c, v, short) {
    var t = P.t;
    var several = c.cards > 1;
    if (!c.fits) {
      var parts = { weights: P.iec(c.weightsPerCard), reserve: P.iec(c.reserve), card: P.iec(c.vram) };
      return { state: "nofit", text: several
        ? t("Does not fit: a card's share of the weights ({weights}) and its reserve ({reserve}) need more than its {card}.", parts)
        : t("Does not fit: the weights ({weights}) and the reserve ({reserve}) need more than the card's {card}.", parts) };
    }
    if (c.longest === 0) return { state: "nocache", text: t("The weights fit, but no room is left for even one token of cache.") };
    if (c.usersFit === 0) {
      return { state: "nouser", text: t("Not one full context fits: one user needs {size} of cache at {context} and {free} is left.", {
        size: P.iec(c.perUser), context: P.tokens(v.context), free: P.iec(c.free),
      }) };
    }
    if (short !== null) {
      var values = { context: P.tokens(v.context), fit: P.integer(c.usersFit), users: P.integer(v.users), over: P.iec(short), card: P.iec(c.vram) };
      return { state: "overserved", text: several
        ? t("Users that fit at {context} each: {fit}, fewer than the users served ({users}): serving them all needs {over} more than the cards hold.", values)
        : t("Users that fit at {context} each: {fit}, fewer than the users served ({users}): serving them all needs {over} more than the card's {card}.", values) };
    }
    return { state: "ok", text: t("Users that fit at {context} each: {fit}. Users served: {users}; a decode step can take no less than {step}.", {
      context: P.tokens(v.context), fit: P.integer(c.usersFit), users: P.integer(v.users), step: P.unit(P.num(c.stepS * 1e3), "ms"),
    }) };
  }

  /* Every result the values v give, drawn; returns the status when every field has a
     value ({state, text}), else null (the caller names the fields to fix). */
  function show(root, P, v, complete) {
    var c;
    clear(root, P);
    try {
      c = window.LLMCalculator.compute(v);
    } catch (e) {
      if (!(e instanceof RangeError) || !e.code) throw e;
      return { state: "error", text: P.t("These values are too large to compute to the byte: {reason}.", { reason: M.text(e, P.t) }) };
    }
    var out = function (name, value, text) { setOut(root, P, name, value, text); };
    showMemory(out, P, c, v);
    var short = shortBy(c, v);
    showSpeed(out, P, c, v, short);
    if (c.cachePerCard !== undefined && c.free !== undefined) drawBar(root, P, c, v.users);
    return complete ? status(P, c, v, short) : null;
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.results = { clear: clear, show: show };
})();
