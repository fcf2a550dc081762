/*
 * A pasted config.json into the model's fields (model_config.js reads it as
 * measure/lab/model_config.py does), and what was found, or why nothing was, into the
 * line under the box. A text longer than LIMIT is refused before anything else is done
 * with it: a config.json is a few kilobytes, and a page must not freeze on a paste of
 * megabytes. Nothing here walks the whole text more than once (JSON.parse, and on an
 * error one pass to find where), and what a message repeats of it is cut first
 * (locale.js's echo).
 */
(function () {
  "use strict";

  var C = window.LLMCalculator;
  var LIMIT = 1000000; // bytes of UTF-8: 1 MB

  /* Whether the text is longer than LIMIT bytes; the exact count only when it could
     be (a UTF-16 code unit is one to three bytes of UTF-8). */
  function tooLong(text) {
    if (text.length > LIMIT) return true;
    return text.length * 3 > LIMIT && new TextEncoder().encode(text).length > LIMIT;
  }

  /* The shape's fields as a preset gives them: a model that is no mixture leaves the
     mixture's three fields empty (every parameter read). */
  function fieldsOf(s, max) {
    var mixture = s.experts > 0;
    return {
      layers: s.layers, heads: s.heads || "", kv_heads: s.kv_heads || "", head_dim: s.head_dim || "",
      params: s.params === null ? "" : s.params,
      active_params: mixture && s.active_params !== null ? s.active_params : "",
      experts: mixture ? s.experts : "", experts_per_token: mixture && s.experts_per_token ? s.experts_per_token : "",
      window: s.window ? s.window : "", windowed_layers: s.window ? s.windowed_layers : "",
      max_context: max,
    };
  }

  /* text: the box's text; put(id, value): into a field; box: the line under it; p: the
     presets (their architecture rules); P: the page. Returns whether fields were set. */
  function apply(text, put, box, p, P) {
    var t = P.t;
    function problems(list) {
      return list.map(function (problem) {
        var values = problem.values;
        if (typeof values.model_type === "string") values = Object.assign({}, values, { model_type: P.echo(values.model_type) });
        return C.messages.text({ code: problem.code, values: values }, t);
      }).join("; ");
    }
    function failed(message) {
      box.textContent = message;
      box.setAttribute("data-state", "error");
      return false;
    }
    box.removeAttribute("data-params");
    box.removeAttribute("data-shape");
    if (tooLong(text)) return failed(t("This text is longer than {limit}, and a config.json is a few kilobytes: nothing of it was read.", { limit: P.unit(P.integer(LIMIT / 1e6), "MB") }));
    text = text.trim();
    if (text === "") {
      box.textContent = "";
      box.setAttribute("data-state", "empty");
      return false;
    }
    var cfg, s;
    try {
      cfg = JSON.parse(text);
    } catch (e) {
      // where the text stops being JSON, in the page's words (the browser's message is English)
      var at = C.form.jsonError(text);
      if (!at) at = Object.assign({ found: "" }, C.form.place(text, text.length));
      var where = { line: P.integer(at.line), column: P.integer(at.column) };
      return failed(at.found === ""
        ? C.messages.text({ code: "not_json_end", values: where }, t)
        : C.messages.text({ code: "not_json", values: Object.assign({ found: at.found }, where) }, t));
    }
    try {
      s = C.modelConfig.shapeFromConfig(cfg, p.rules);
    } catch (e) {
      if (!(e instanceof C.modelConfig.ConfigError)) throw e;
      return failed(t("No model shape in this config: {reason}.", { reason: problems(e.problems) }));
    }
    // the longest context the model takes: its config's max_position_embeddings (the
    // text model's, in a config that nests one), as the configs table reads it
    var nested = cfg.text_config !== null && typeof cfg.text_config === "object" && !Array.isArray(cfg.text_config);
    var from = !Object.prototype.hasOwnProperty.call(cfg, "num_hidden_layers") && nested ? cfg.text_config : cfg;
    var max = from.max_position_embeddings;
    var maxProblem = max !== undefined && max !== null && !(Number.isInteger(max) && max > 0);
    var values = fieldsOf(s, maxProblem || max === undefined || max === null ? "" : max);
    Object.keys(values).forEach(function (id) { put(id, values[id]); });
    var notDerived = s.problems.concat(maxProblem ? [{ code: "not_positive_whole", values: { name: "max_position_embeddings" } }] : []);
    box.textContent = summary(s, max, maxProblem, P) + (notDerived.length ? " " + t("Not derived: {problems}.", { problems: problems(notDerived) }) : "");
    box.setAttribute("data-state", notDerived.length ? "partial" : "ok");
    box.setAttribute("data-params", s.params === null ? "" : String(s.params));
    // the shape as Python's shape_from_config gives it, its problems in English, for checks
    box.setAttribute("data-shape", JSON.stringify(Object.assign({}, s, { problems: s.problems.map(C.messages.english) })));
    return true;
  }

  /* What was found, in a sentence. */
  function summary(s, max, maxProblem, P) {
    var t = P.t;
    var parts = [
      t("{model_type}: {layers} layers, {kv_heads} key-value heads × {head_dim}", {
        model_type: s.model_type ? P.echo(s.model_type) : t("unknown model_type"), layers: P.integer(s.layers), kv_heads: P.integer(s.kv_heads), head_dim: P.integer(s.head_dim),
      }),
    ];
    if (s.window) {
      parts.push(t("a {window}-token window on {windowed_layers} of them", { window: P.integer(s.window), windowed_layers: P.integer(s.windowed_layers) }));
    }
    if (s.tied !== null) parts.push(s.tied ? t("tied embeddings") : t("separate output embeddings"));
    if (s.params !== null) parts.push(P.unit(P.integer(s.params), t("parameters")));
    if (s.active_params !== null && s.experts) {
      parts.push(t("{active} of them read per token ({picked} of {experts} experts a layer)", {
        active: P.integer(s.active_params), picked: P.integer(s.experts_per_token), experts: P.integer(s.experts),
      }));
    }
    if (!maxProblem && max) parts.push(t("a context of at most {max}", { max: P.tokens(max) }));
    return parts.join(", ") + ".";
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.paste = { LIMIT: LIMIT, apply: apply };
})();
