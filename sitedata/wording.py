"""Sentences a run records in English and every edition writes in its own language.

A run fills one of these templates (``WEIGHTS_EMBEDDED.format(...)``) and records the
sentence in meta.json or a table, where whoever opens the data file reads it as it is.
The site reads a recorded sentence back into its template and fields (``parse``) and
writes the edition's translation of the template (hooks/locales/*.po) with the same
fields, numbers as the edition writes them. A sentence no template matches is shown as
recorded, and the editions' English-words test finds it.

Torch-free: ``measure`` writes with these templates, the hooks read with them.
"""

from __future__ import annotations

import re
from functools import cache

# The model's weights (provenance: model.weights)
WEIGHTS_EMBEDDED = (
    "trained {model} weights, distributed already quantized ({format}, package {package}) and dequantized to {dtype}"
)
WEIGHTS_RANDOM = "random weights (seed {seed}) in the {arch} architecture: valid for time and memory, not quality"
WEIGHTS_LOCAL = "trained weights from the local folder {name}, loaded as {dtype}"
WEIGHTS_HUB = "trained weights from the hub, {name}, loaded as {dtype}"
WEIGHTS_HUB_REVISION = "trained weights from the hub, {name} at revision {revision}, loaded as {dtype}"

# How peak memory was read (provenance: memory_method)
MEMORY_CUDA = "CUDA caching allocator: torch.cuda.max_memory_allocated, reset before each point"
MEMORY_CPU = "process peak resident set size (Linux VmHWM, reset through /proc/self/clear_refs before each point)"

# The quality page's evaluation protocol (quality.protocol, column setting)
PROTOCOL_TOKENS = "{scored} scored: book tokens {first} to {last}, each given those before it from token {start}"
PROTOCOL_WINDOW = "{tokens} tokens"
PROTOCOL_STRIDE = "{tokens} tokens ({passes} forward passes)"
PROTOCOL_STRIDE_ONE = "{tokens} tokens (one forward pass)"
PROTOCOL_QUANTIZED = "the {count} projection matrices; embeddings, output head and norms as loaded"
PROTOCOL_BATTERY = "{count} questions, chat template, '{instruction}' before each, at most {tokens} new tokens"
PROTOCOL_DECODING = "greedy (argmax) by hand, batched with left padding; CTRL repetition penalty over prompt and answer"
PROTOCOL_SCORING = (
    "strict, after normalising case, punctuation, articles and number words: an accepted answer comes first, "
    "as whole words, with no other answer offered after it ({source})"
)
PROTOCOL_DIVERGENCE = (
    "KL divergence from the reference's next-token distribution, top-1 agreement and perplexity minus the "
    "reference's, over the same scored tokens; {confidence} intervals: percentile bootstrap, {resamples} resamples "
    "(seed {seed}) of blocks of {block} consecutive positions, paired with the reference"
)
PROTOCOL_PENALTY = "{penalty} ({source})"
PROTOCOL_AGREEMENT = "{tokens} greedy reference tokens after '{prompt}'; argmax given identical prefixes"

# The activation-outliers page: a prompt taken from the book, and the settings of INT8's scale
PROMPT_BOOK = "book {percent}%"
ACTIVATION_TOP_EXCLUDED = "top {count} dimensions excluded"
# the tensors it quantizes: a projection's input (the projections that read it, by their
# module names), or the residual stream, at one layer or at every layer
ACTIVATION_INPUT = "input of {projections}"
ACTIVATION_INPUT_AT = "input of {projections}, layer {layer}"
ACTIVATION_RESIDUAL_AT = "residual stream, layer {layer}"

# The calculator's architecture rules in words (memory_budget.architectures)
RULE_AS_FIELD = "as {field} says"
RULE_WINDOW_PATTERN = "all but one in every {field}"
RULE_WINDOW_FROM = "from layer {field} on, if {flag}"

TEMPLATES = (
    WEIGHTS_EMBEDDED,
    WEIGHTS_RANDOM,
    WEIGHTS_LOCAL,
    WEIGHTS_HUB_REVISION,
    WEIGHTS_HUB,
    MEMORY_CUDA,
    MEMORY_CPU,
    PROTOCOL_TOKENS,
    PROTOCOL_STRIDE,
    PROTOCOL_STRIDE_ONE,
    PROTOCOL_WINDOW,
    PROTOCOL_QUANTIZED,
    PROTOCOL_BATTERY,
    PROTOCOL_DECODING,
    PROTOCOL_SCORING,
    PROTOCOL_DIVERGENCE,
    PROTOCOL_PENALTY,
    PROTOCOL_AGREEMENT,
    PROMPT_BOOK,
    ACTIVATION_TOP_EXCLUDED,
    ACTIVATION_INPUT,
    ACTIVATION_INPUT_AT,
    ACTIVATION_RESIDUAL_AT,
    RULE_AS_FIELD,
    RULE_WINDOW_PATTERN,
    RULE_WINDOW_FROM,
)

_FIELD = re.compile(r"\{([a-z_]+)\}")
# Fields that hold a number (as a run writes it: "2,048", "1.1"); a sentence whose field is
# no number was not written with that template ("GQA (actual)" is no "{penalty} ({source})").
NUMBERS = frozenset({"scored", "first", "last", "start", "tokens", "passes", "count", "resamples", "seed", "block"})
NUMBERS |= {"penalty", "percent", "layer"}
# Fields an edition writes with their unit, which agrees with the count (Czech "2 průchody
# vpřed", "5 průchodů vpřed"): a template's translation leaves that unit out, "({passes})".
COUNTED = {"passes": "forward passes"}
_NUMBER = r"-?\d[\d,]*(?:\.\d+)?"


@cache
def _pattern(template: str) -> re.Pattern:
    parts, at = [], 0
    for m in _FIELD.finditer(template):
        field = _NUMBER if m.group(1) in NUMBERS else ".+?"
        parts += [re.escape(template[at : m.start()]), f"(?P<{m.group(1)}>{field})"]
        at = m.end()
    return re.compile("".join([*parts, re.escape(template[at:])]), re.S)


def _literal(template: str) -> int:
    return len(_FIELD.sub("", template))


# The most specific first: "{tokens} tokens" would also read "16 questions, ... 16 new
# tokens", and "{name}, loaded as" a name "x at revision y".
_BY_SPECIFICITY = sorted(TEMPLATES, key=_literal, reverse=True)


def parse(text: str) -> tuple[str, dict[str, str]] | None:
    """The template a recorded sentence was written with and its fields, or None."""
    for template in _BY_SPECIFICITY:
        m = _pattern(template).fullmatch(text)
        if m:
            return template, m.groupdict()
    return None
