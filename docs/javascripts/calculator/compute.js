/*
 * What the calculator computes from the form's numbers (form.js's v: a field with a
 * problem has no number there), each result only where every field it needs has one:
 * the cache's bytes per token need the layers, the key-value heads, the head dimension
 * and the cache's precision, not the parameters; a missing peak leaves out the
 * arithmetic's floor and nothing else. A result not computed is undefined; null keeps
 * the budget's own meaning (no limit from memory, does not fit). The arithmetic is
 * budget.js's, measure/lab/budget.py's mirror.
 *
 * Several cards split the weights and every user's cache evenly (tensor-parallel, an
 * ideal split with no cost of communication), each with its own reserve: the budget is
 * counted over all of them, a card's share shown beside it. A mixture of experts holds
 * all its parameters and reads, per step, the shared ones and the experts its tokens
 * pick (budget.paramsReadPerStep, under uniform routing).
 */
(function () {
  "use strict";

  var B = window.LLMCalculator.budget;

  function compute(v) {
    function has() {
      for (var i = 0; i < arguments.length; i++) if (v[arguments[i]] === undefined) return false;
      return true;
    }
    var c = { cards: has("cards") ? v.cards : undefined };
    var shape = has("layers", "kv_heads", "head_dim", "window", "windowed_layers");
    if (has("params", "weight_bits")) c.weights = B.weightBytes(v.params, v.weight_bits);
    if (has("layers", "kv_heads", "head_dim")) c.kv = B.budgetKvBytesPerToken(v.layers, v.kv_heads, v.head_dim, v.kv_bytes);
    if (shape) {
      c.layerToken = B.kvBytesPerLayerToken(v.kv_heads, v.head_dim, v.kv_bytes);
      c.windowed = v.window === 0 ? 0 : v.windowed_layers;
      if (has("context")) c.perUser = B.cacheBytesPerUser(c.layerToken, v.layers, c.windowed, v.window, v.context);
    }
    if (has("vram_gib")) c.vram = B.gibToBytes(v.vram_gib);
    if (has("reserve_gib")) c.reserve = B.gibToBytes(v.reserve_gib);
    if (c.weights !== undefined && c.cards !== undefined) c.weightsPerCard = B.cardShare(c.weights, c.cards);
    if (c.weightsPerCard !== undefined && c.vram !== undefined && c.reserve !== undefined) {
      c.free = B.splitFreeBytes(c.vram, c.reserve, c.weights, c.cards);
      c.fits = c.free >= 0;
      if (shape && c.fits) c.longest = B.longestContext(c.free, c.layerToken, v.layers, c.windowed, v.window);
      if (c.perUser !== undefined) c.usersFit = B.usersAtContext(c.free, c.perUser);
    }
    if (c.perUser !== undefined && has("users")) {
      c.servedCache = B.exact(c.perUser * v.users);
      if (c.cards !== undefined) c.cachePerCard = B.cardShare(c.servedCache, c.cards);
    }
    speed(v, c, has);
    return c;
  }

  /* The decode step's floors (reading; the arithmetic, where a peak is given) and the
     time to the first token: a prefill of the prompt, reading the weights its tokens
     pick and writing its cache, or doing its arithmetic, whichever takes longer. */
  function speed(v, c, has) {
    var mixture = has("params", "active_params", "experts", "experts_per_token");
    if (!mixture || !has("weight_bits")) return;
    var active = v.active_params || v.params;
    var bandwidth = has("bandwidth_gb_s") && c.cards !== undefined ? v.bandwidth_gb_s * c.cards : undefined;
    var peak = has("peak_tflops") && c.cards !== undefined;
    var flopsShape = has("heads", "layers", "head_dim") && c.windowed !== undefined;
    if (has("users")) {
      c.readParams = B.paramsReadPerStep(v.params, active, v.experts, v.experts_per_token, v.users);
      if (v.experts) c.distinctExperts = B.expectedDistinctExperts(v.experts, v.experts_per_token, v.users);
      c.readBytes = B.weightBytes(c.readParams, v.weight_bits);
      if (bandwidth !== undefined && c.perUser !== undefined) c.floor = B.decodeFloor(c.readBytes, c.perUser, v.users, bandwidth);
      if (peak && flopsShape && has("context")) {
        c.computeS = v.peak_tflops ? B.computeFloorS(B.decodeFlops(active, v.heads, v.head_dim, v.layers, c.windowed, v.window, v.context, v.users), v.peak_tflops, c.cards) : null;
      }
      if (c.floor !== undefined && c.computeS !== undefined) c.stepS = Math.max(c.floor.step_s, c.computeS || 0);
    }
    var prompt = v.prompt || v.context; // empty: the whole context is the prompt
    if (has("prompt", "context") && bandwidth !== undefined && c.layerToken !== undefined) {
      c.prompt = prompt;
      var read = B.weightBytes(B.paramsReadPerStep(v.params, active, v.experts, v.experts_per_token, prompt), v.weight_bits);
      var written = B.cacheBytesPerUser(c.layerToken, v.layers, c.windowed, v.window, prompt);
      c.prefillReadS = B.decodeFloor(read, written, 1, bandwidth).step_s;
      if (peak && flopsShape) {
        c.prefillComputeS = v.peak_tflops ? B.computeFloorS(B.prefillFlops(active, v.heads, v.head_dim, v.layers, c.windowed, v.window, prompt), v.peak_tflops, c.cards) : null;
        c.firstTokenS = Math.max(c.prefillReadS, c.prefillComputeS || 0);
      }
    }
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.compute = compute;
})();
