/*
 * Every problem the calculator reports, by its code, and the one place a code becomes a
 * text. A problem is {code, field, values}: field (when there is one) the id of the form
 * field it is about, whose label fills {field}; values the rest of its placeholders.
 *
 * text(problem, t, labels) writes it in the page's language (t: the page's lookup, see
 * locale.js); english(problem) writes it as measure/lab/model_config.py does, for the
 * checks that hold a config's problems equal to Python's. The build finds each message
 * below by its literal inside t(...) (sitekit/language/calculator_locale.py).
 */
(function () {
  "use strict";

  var fill = window.LLMCalculator.locale.fill;

  function templates(t) {
    return {
      // a field's text (form.js)
      empty: t("{field}: enter a value."),
      ambiguous: t("{text} is ambiguous here: write {decimal} for a decimal number, or {whole} for a whole number."),
      other_separators: t("{text} is not written this way here: write {number}."),
      not_a_number: t("{field} must be a number (digits, optionally a decimal point or an exponent such as 7e9)."),
      not_finite: t("{field} is too large to be a number."),
      negative: t("{field} cannot be negative."),
      not_above: t("{field} must be greater than {min}."),
      below: t("{field} must be at least {min}."),
      unrealistically_small: t("{field} below {min} is not a realistic value."),
      zero_or_at_least: t("{field} must be 0, or at least {min}."),
      not_whole: t("{field} must be a whole number."),
      unrealistically_large: t("{field} above {max} is not a realistic value."),
      bits_out_of_range: t("{field} must be between {min} (a binary weight) and {max} bits (fp32)."),
      // two fields at once (form.js)
      more_than_layers: t("{field} cannot be more than the number of layers ({layers})."),
      needs_window: t("{field} needs a sliding window (empty or 0 means no window)."),
      above_max_context: t("{field} is longer than the model's maximum context, {max}."),
      more_than_params: t("{field} cannot be more than the parameters ({params})."),
      more_than_experts: t("{field} cannot be more than the experts per layer ({experts})."),
      needs_experts: t("{field}: a model that reads fewer parameters per token than it holds is a mixture of experts; enter its experts per layer."),
      longer_than_context: t("{field} cannot be longer than the context per user ({context})."),
      // values the arithmetic refuses (budget.js)
      too_large_to_compute: t("too large to compute exactly"),
      partial_byte: t("not a whole number of bytes"),
      not_positive: t("a count that must be positive is not"),
      // a pasted config.json (model_config.js; not_json, not_json_end: calculator.js, where form.js finds the place)
      not_json: t("This is not valid JSON: unexpected “{found}” at line {line}, column {column}."),
      not_json_end: t("This is not valid JSON: it ends at line {line}, column {column} before it is complete."),
      not_an_object: t("a config.json is a JSON object ({...})"),
      missing: t("{name} is missing"),
      not_positive_whole: t("{name} must be a positive whole number"),
      layer_types_count: t("layer_types lists {count} layers, num_hidden_layers says {layers}"),
      layer_types_without_window: t("layer_types has sliding layers but sliding_window is not a positive whole number"),
      window_not_positive_whole: t("sliding_window must be a positive whole number or null"),
      pattern_not_positive_whole: t("sliding_window_pattern must be a positive whole number"),
      max_window_layers_not_whole: t("max_window_layers must be a whole number"),
      windowed_layers_undeclared: t("sliding_window: which layers use it is not declared (no layer_types) for model_type '{model_type}'; every layer is counted with full attention"),
      head_dim_not_a_division: t("head_dim is missing and hidden_size {hidden} is not a multiple of {heads} heads"),
      heads_not_a_multiple: t("num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}"),
      more_experts_picked: t("{picked_field} {picked} is more than {experts_field} {experts}"),
      unknown_model_type: t("parameters: model_type '{model_type}' is not one whose layer layout is known here ({known}); type the count from the model card"),
      too_many_parameters: t("parameters: too many to count exactly"),
    };
  }

  function english(message) {
    return message;
  }

  var CODES = Object.keys(templates(english));

  /* The problem's text; labels: field id -> the page's name for it. */
  function text(problem, t, labels) {
    var template = templates(t)[problem.code];
    if (template === undefined) throw new Error("no message for the problem " + problem.code);
    var values = Object.assign({}, problem.values);
    if (problem.field !== undefined) values.field = labels ? labels[problem.field] : problem.field;
    return fill(template, values);
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.messages = {
    CODES: CODES,
    text: text,
    english: function (problem) { return text(problem, english); },
  };
})();
