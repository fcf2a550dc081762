"""A long prompt admitted beside requests that are decoding: whole, or in chunks. Pure
Python, no model: every cost is given (measured elsewhere), and the schedule is counted.

The engine runs in iterations. Without a prompt to admit, an iteration is one decode
step of the running batch (``decode_ms``), which gives each running request one token at
its end. A prompt is admitted as a list of prefill passes in order: one pass of the whole
prompt, or one pass per chunk of ``chunk_tokens`` against the cache its earlier chunks
wrote (``chunks``). Each iteration runs the next pass first, then the decode step, one
after the other: the passes are not fused into one forward pass (a fused step, as a
server batches them, reads the weights once and may cost less than the two apart).

* the prompt's first token comes out of its last pass: ``first_token_ms`` is every pass
  and the decode steps of the iterations before the last;
* a running request waits, between two of its tokens, for one whole iteration: the
  longest wait is ``decode_ms`` plus the costliest pass (``longest_gap_ms``);
* while the prompt is prefilled, each running request gets one token per iteration
  (``tokens_meanwhile``) over ``span_ms``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def chunks(prompt_tokens: int, chunk_tokens: int | None) -> list[tuple[int, int]]:
    """(offset, tokens) of each pass that prefills a prompt of ``prompt_tokens``: one pass
    for ``None``, else chunks of ``chunk_tokens``, the last one shorter where they do not
    divide the prompt."""
    if prompt_tokens < 1:
        raise ValueError(f"a prompt needs at least one token, not {prompt_tokens}")
    if chunk_tokens is None:
        return [(0, prompt_tokens)]
    if chunk_tokens < 1:
        raise ValueError(f"a chunk needs at least one token, not {chunk_tokens}")
    return [(o, min(chunk_tokens, prompt_tokens - o)) for o in range(0, prompt_tokens, chunk_tokens)]


@dataclass(frozen=True)
class Admission:
    """What admitting one prompt does, in milliseconds (see the module's docstring)."""

    iterations: int  # iterations the prompt's passes span, one pass each
    first_token_ms: float  # from the prompt's arrival (an iteration's start) to its first token
    longest_gap_ms: float  # the longest wait of a running request between two of its tokens
    span_ms: float  # from the arrival to the end of the last iteration with a pass
    tokens_meanwhile: int  # tokens each running request got over span_ms


def admit(pass_ms: Sequence[float], decode_ms: float) -> Admission:
    """The schedule of one prompt whose prefill passes cost ``pass_ms`` (in order), beside a
    running batch whose decode step costs ``decode_ms``."""
    if not pass_ms:
        raise ValueError("a prompt needs at least one prefill pass")
    if decode_ms <= 0 or min(pass_ms) <= 0:
        raise ValueError("every cost must be positive")
    k = len(pass_ms)
    return Admission(
        iterations=k,
        first_token_ms=sum(pass_ms) + (k - 1) * decode_ms,
        longest_gap_ms=decode_ms + max(pass_ms),
        span_ms=sum(pass_ms) + k * decode_ms,
        tokens_meanwhile=k,
    )


def token_times(pass_ms: Sequence[float], decode_ms: float, *, before: int, after: int) -> list[float]:
    """When a running request gets its tokens (ms, the prompt arriving at 0): ``before``
    plain iterations ending at 0, the iterations that carry the prompt's passes, then
    ``after`` plain ones. What the schedule's figure draws."""
    times = [-(before - 1 - i) * decode_ms for i in range(before)]
    t = 0.0
    for cost in pass_ms:
        t += cost + decode_ms
        times.append(t)
    for _ in range(after):
        t += decode_ms
        times.append(t)
    return times
