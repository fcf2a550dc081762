/*
 * The memory budget's arithmetic, for the calculator: a mirror of measure/lab/budget.py,
 * function for function, each with its Python twin's name in camelCase
 * (tests/test_calculator_mirror.py holds the names, tests/test_calculator_browser.py the
 * results: every budget to the byte, every floor to the last digit).
 *
 * Integers stay below 2^53 within the calculator's accepted inputs (too large a product
 * is refused, see exact()), so doubles hold them exactly. A refusal is a RangeError with
 * a code (see docs/javascripts/calculator/messages.js), never an English text.
 */
(function () {
  "use strict";

  var GIB = 1073741824; // 2^30

  function refused(code) {
    var e = new RangeError(code);
    e.code = code;
    e.values = {};
    return e;
  }

  /* JavaScript only: Python's // on integers. */
  function floorDiv(a, b) {
    var q = Math.floor(a / b);
    while (q * b > a) q -= 1;
    while ((q + 1) * b <= a) q += 1;
    return q;
  }

  /* JavaScript only: x, refused past 2^53, where a double no longer holds every integer
     (Python's integers have no such limit). */
  function exact(x) {
    if (!(Math.abs(x) <= Number.MAX_SAFE_INTEGER)) throw refused("too_large_to_compute");
    return x;
  }

  function gibToBytes(gib) {
    return Math.floor(gib * GIB);
  }

  function weightBytes(params, bitsPerWeight) {
    return exact(Math.ceil((params * bitsPerWeight) / 8));
  }

  function budgetKvBytesPerToken(layers, kvHeads, headDim, bytesPerElement) {
    return exact(Math.ceil(2 * layers * kvHeads * headDim * bytesPerElement));
  }

  /* What is left for the cache once the weights and the reserve are on the card;
     negative when they do not fit. */
  function freeBytes(cardBytes, reserveBytes, weightBytes) {
    return cardBytes - reserveBytes - weightBytes;
  }

  function kvBytesPerLayerToken(kvHeads, headDim, bytesPerElement) {
    var x = 2 * kvHeads * headDim * bytesPerElement;
    if (x !== Math.floor(x)) throw refused("partial_byte");
    return x;
  }

  function cacheBytesPerUser(layerTokenBytes, layers, windowedLayers, window, context) {
    var held = window === 0 ? context : Math.min(context, window);
    return exact(layerTokenBytes * exact((layers - windowedLayers) * context + windowedLayers * held));
  }

  /* null: no limit (every layer keeps only a window, and the window fits). */
  function longestContext(freeBytes, layerTokenBytes, layers, windowedLayers, window) {
    var perToken = layerTokenBytes * layers;
    if (window === 0 || windowedLayers === 0) return floorDiv(freeBytes, perToken);
    var upToWindow = floorDiv(freeBytes, perToken);
    if (upToWindow < window) return upToWindow;
    var fullLayers = layers - windowedLayers;
    if (fullLayers === 0) return null;
    return floorDiv(freeBytes - layerTokenBytes * windowedLayers * window, layerTokenBytes * fullLayers);
  }

  function usersAtContext(freeBytes, cacheBytes) {
    return freeBytes < 0 ? null : floorDiv(freeBytes, cacheBytes);
  }

  function decodeFloor(weightBytes, cacheBytesPerUser, users, bandwidthGbS) {
    var stepS = exact(weightBytes + exact(users * cacheBytesPerUser)) / (bandwidthGbS * 1e9);
    return { step_s: stepS, tokens_per_s_per_user: 1 / stepS, tokens_per_s: users / stepS };
  }

  /* Several cards, tensor-parallel: an ideal split of the weights and every user's cache. */
  function cardShare(totalBytes, cards) {
    if (!(cards > 0)) throw refused("not_positive");
    return -floorDiv(-totalBytes, cards);
  }

  function splitFreeBytes(cardBytes, reserveBytes, weightBytes, cards) {
    return exact(cards * freeBytes(cardBytes, reserveBytes, cardShare(weightBytes, cards)));
  }

  /* JavaScript's twin of Python's _power: base ** exponent by repeated squaring, so that
     both give the same double (their pow() may differ in the last bit). */
  function power(base, exponent) {
    var result = 1;
    while (exponent > 0) {
      if (exponent % 2) result *= base;
      base *= base;
      exponent = Math.floor(exponent / 2);
    }
    return result;
  }

  /* A mixture of experts: n (1 - (1 - k/n)^B) distinct experts a layer, under uniform routing. */
  function expectedDistinctExperts(experts, expertsPerToken, tokens) {
    if (!(expertsPerToken > 0 && expertsPerToken <= experts && tokens > 0)) throw refused("not_positive");
    return experts * (1 - power(1 - expertsPerToken / experts, tokens));
  }

  function paramsReadPerStep(params, activeParams, experts, expertsPerToken, tokens) {
    if (experts === 0 || expertsPerToken === experts) return params;
    var routed = ((params - activeParams) / (experts - expertsPerToken)) * experts;
    var distinct = expectedDistinctExperts(experts, expertsPerToken, tokens);
    return params - routed + (routed * distinct) / experts;
  }

  /* The arithmetic's floor, in the order Python computes it. */
  function keysAttended(layers, windowedLayers, window, tokens) {
    var t = tokens, w = window;
    var full = (t * (t + 1)) / 2;
    var held = window === 0 || t <= w ? full : (w * (w + 1)) / 2 + (t - w) * w;
    return (layers - windowedLayers) * full + windowedLayers * held;
  }

  function prefillFlops(activeParams, heads, headDim, layers, windowedLayers, window, tokens) {
    var pairs = keysAttended(layers, windowedLayers, window, tokens);
    return 2 * activeParams * tokens + 4 * heads * headDim * pairs;
  }

  function decodeFlops(activeParams, heads, headDim, layers, windowedLayers, window, context, users) {
    var held = window === 0 ? context : Math.min(context, window);
    var keys = (layers - windowedLayers) * context + windowedLayers * held;
    return users * (2 * activeParams + 4 * heads * headDim * keys);
  }

  function computeFloorS(flops, peakTflops, cards) {
    if (!(flops >= 0 && peakTflops > 0 && cards > 0)) throw refused("not_positive");
    return flops / (peakTflops * 1e12 * cards);
  }

  window.LLMCalculator = window.LLMCalculator || {};
  window.LLMCalculator.budget = {
    GIB: GIB,
    exact: exact,
    floorDiv: floorDiv,
    gibToBytes: gibToBytes,
    weightBytes: weightBytes,
    budgetKvBytesPerToken: budgetKvBytesPerToken,
    freeBytes: freeBytes,
    kvBytesPerLayerToken: kvBytesPerLayerToken,
    cacheBytesPerUser: cacheBytesPerUser,
    longestContext: longestContext,
    usersAtContext: usersAtContext,
    decodeFloor: decodeFloor,
    cardShare: cardShare,
    splitFreeBytes: splitFreeBytes,
    expectedDistinctExperts: expectedDistinctExperts,
    paramsReadPerStep: paramsReadPerStep,
    keysAttended: keysAttended,
    prefillFlops: prefillFlops,
    decodeFlops: decodeFlops,
    computeFloorS: computeFloorS,
  };
})();
