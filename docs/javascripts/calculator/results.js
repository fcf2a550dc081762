/*
 * What the calculator shows from the form's values: every result, the breakdown bar and
 * the status line. The arithmetic is budget.js's (measure/lab/budget.py's mirror);
 * P is the page (locale.js), its messages and its numbers.
 */
(function () {
  "use strict";

  var B = window.LLMCalculator.budget;
  var M = window.LLMCalculator.messages;
  var OUTPUTS = ["weights", "kv_per_token", "cache_per_user", "free", "max_tokens", "users_fit", "step_ms", "tokens_per_s_per_user", "tokens_per_s"];

  /* Everything the page shows, from parsed values; throws a RangeError with a code when
     the values are too large to compute to the byte. */
  function compute(v) {
    var vram = B.gibToBytes(v.vram_gib);
    var reserve = B.gibToBytes(v.reserve_gib);
    var weights = B.weightBytes(v.params, v.weight_bits);
    var kv = B.budgetKvBytesPerToken(v.layers, v.kv_heads, v.head_dim, v.kv_bytes);
    var layerToken = B.kvBytesPerLayerToken(v.kv_heads, v.head_dim, v.kv_bytes);
    var windowed = v.window === 0 ? 0 : v.windowed_layers;
    var perUser = B.cacheBytesPerUser(layerToken, v.layers, windowed, v.window, v.context);
    var free = B.freeBytes(vram, reserve, weights);
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

  function setOut(root, P, name, value, text) {
    var el = root.querySelector('[data-out="' + name + '"]');
    if (!el) return;
    el.textContent = text.indexOf(P.tooLarge()) >= 0 ? P.tooLarge() : text;
    el.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
  }

  /* The breakdown bar: the card's bytes as weights, reserve, the served users' cache and
     what is left; when they need more than the card, the bar spans what they need and
     the part past the card is marked. (Its widths are CSS, not numbers a reader reads.) */
  function drawBar(root, P, c, users) {
    var bar = root.querySelector("[data-bar]");
    if (!bar) return;
    var parts = [
      ["weights", c.weights],
      ["reserve", c.reserve],
      ["cache", c.servedCache],
      ["free", Math.max(0, c.free - c.servedCache)],
    ];
    var need = c.weights + c.reserve + c.servedCache;
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
    note.textContent =
      over > 0
        ? P.t("The weights, the reserve and the cache of the users served ({users}) need {over} more than the card's {card}.", {
            users: P.integer(users), over: P.iec(over), card: P.iec(c.vram),
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

  /* No result: every output a dash, the bar empty. */
  function clear(root, P) {
    OUTPUTS.forEach(function (k) { setOut(root, P, k, null, "—"); });
    clearBar(root);
  }

  /* The decode floor's outputs: the speed when the setup fits; when it does not (the
     weights and the reserve alone, a single user's cache at the context, or the cache of
     the users served), no speed at all, and by how much it does not fit instead. */
  function showSpeed(out, P, c, short) {
    var t = P.t;
    if (short === null) {
      out("step_ms", c.floor.step_s * 1e3, P.unit(P.num(c.floor.step_s * 1e3), "ms"));
      out("tokens_per_s_per_user", c.floor.tokens_per_s_per_user, P.unit(P.num(c.floor.tokens_per_s_per_user), t("tokens/s")));
      out("tokens_per_s", c.floor.tokens_per_s, P.unit(P.num(c.floor.tokens_per_s), t("tokens/s")));
      return;
    }
    out("step_ms", null, t("does not fit: short by {size}", { size: P.iec(short) }));
    out("tokens_per_s_per_user", null, "—");
    out("tokens_per_s", null, "—");
  }

  /* The longest context one user can have: memory's limit, the window's "no limit" in
     words, and the model's own maximum where one is given (v.max_context, 0: none). */
  function showLongest(out, P, c, v) {
    var t = P.t, max = v.max_context ? P.tokens(v.max_context) : null;
    if (c.longest === null) {
      out("max_tokens", null, max
        ? t("no limit from memory: the cache stops growing at the window ({window}); the model's own maximum context, {max}, still applies", { window: P.tokens(v.window), max: max })
        : t("no limit from memory: the cache stops growing at the window ({window}); the model's own maximum context still applies", { window: P.tokens(v.window) }));
    } else if (max && c.longest > v.max_context) {
      out("max_tokens", c.longest, t("{tokens}, past the model's maximum context, {max}", { tokens: P.tokens(c.longest), max: max }));
    } else {
      out("max_tokens", c.longest, P.tokens(c.longest));
    }
  }

  /* Every result of the values v, drawn; returns the status: {state, text}. */
  function show(root, P, v) {
    var t = P.t;
    var c;
    try {
      c = compute(v);
    } catch (e) {
      if (!(e instanceof RangeError) || !e.code) throw e;
      clear(root, P);
      var reason = M.text(e, t);
      return { state: "error", text: t("These values are too large to compute to the byte: {reason}.", { reason: reason }) };
    }
    var out = function (name, value, text) { setOut(root, P, name, value, text); };
    var bytes = P.unit(P.integer(c.weights), t("bytes"));
    out("weights", c.weights, P.iec(c.weights) + " (" + bytes + ")");
    out("kv_per_token", c.kv, P.unit(P.integer(c.kv), t("bytes")) + (c.windowed ? " " + t("(while the context is shorter than the window)") : ""));
    out("cache_per_user", c.perUser, t("{size} at {context}", { size: P.iec(c.perUser), context: P.tokens(v.context) }));
    drawBar(root, P, c, v.users);
    if (!c.fits) {
      out("free", c.free, t("none: short by {size}", { size: P.iec(-c.free) }));
      out("max_tokens", null, t("does not fit"));
      out("users_fit", null, t("does not fit"));
      showSpeed(out, P, c, -c.free);
      return { state: "nofit", text: t("Does not fit: the weights ({weights}) and the reserve ({reserve}) need more than the card's {card}.", {
        weights: P.iec(c.weights), reserve: P.iec(c.reserve), card: P.iec(c.vram),
      }) };
    }
    out("free", c.free, P.iec(c.free));
    showLongest(out, P, c, v);
    out("users_fit", c.usersFit, P.integer(c.usersFit));
    // short by: one user's cache past what is left, or the cache of all the users served
    var short = c.usersFit === 0 ? c.perUser - c.free : c.usersFit < v.users ? c.servedCache - c.free : null;
    showSpeed(out, P, c, short);
    if (c.longest === 0) {
      return { state: "nocache", text: t("The weights fit, but no room is left for even one token of cache.") };
    }
    if (c.usersFit === 0) {
      return { state: "nouser", text: t("Not one full context fits: one user needs {size} of cache at {context} and {free} is left.", {
        size: P.iec(c.perUser), context: P.tokens(v.context), free: P.iec(c.free),
      }) };
    }
    if (c.usersFit < v.users) {
      return { state: "overserved", text: t("Users that fit at {context} each: {fit}, fewer than the users served ({users}): serving them all needs {over} more than the card's {card}.", {
        context: P.tokens(v.context), fit: P.integer(c.usersFit), users: P.integer(v.users), over: P.iec(short), card: P.iec(c.vram),
      }) };
    }
    return { state: "ok", text: t("Users that fit at {context} each: {fit}. Users served: {users}; a decode step can take no less than {step}.", {
      context: P.tokens(v.context), fit: P.integer(c.usersFit), users: P.integer(v.users), step: P.unit(P.num(c.floor.step_s * 1e3), "ms"),
    }) };
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.results = { compute: compute, clear: clear, show: show };
})();
