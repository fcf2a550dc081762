"""The KV memory of requests that share a prompt's prefix, in paged blocks: counted, not
timed. Pure arithmetic on a model's shape, each count worked by hand in the tests.

A paged cache (vLLM's PagedAttention) keeps each request's keys and values in blocks of
``block_tokens`` tokens. Requests whose prompts begin with the same prefix can point at
the same blocks for it, but only at whole blocks: a block holds one request's tokens
after the prefix as soon as one of them lands in it, so a block that the prefix fills
only in part is each request's own (a copy, as copy-on-write makes it). Without sharing,
every request holds every block of its prompt.
"""

from __future__ import annotations

import math


def blocks_private(*, requests: int, prompt_tokens: int, block_tokens: int) -> int:
    """Blocks of ``requests`` prompts of ``prompt_tokens``, none shared."""
    _positive(requests=requests, prompt_tokens=prompt_tokens, block_tokens=block_tokens)
    return requests * math.ceil(prompt_tokens / block_tokens)


def blocks_shared(*, requests: int, prefix_tokens: int, prompt_tokens: int, block_tokens: int) -> int:
    """Blocks of ``requests`` prompts of ``prompt_tokens`` whose first ``prefix_tokens`` are
    the same: the prefix's whole blocks once, every other block once per request."""
    _positive(requests=requests, prompt_tokens=prompt_tokens, block_tokens=block_tokens)
    if not 0 <= prefix_tokens <= prompt_tokens:
        raise ValueError(f"a prefix of {prefix_tokens} tokens does not fit a prompt of {prompt_tokens}")
    shared = prefix_tokens // block_tokens
    return shared + requests * (math.ceil(prompt_tokens / block_tokens) - shared)


def _positive(**counts: int) -> None:
    for name, n in counts.items():
        if n < 1:
            raise ValueError(f"{name} must be at least 1, not {n}")


def shared_block_rows(
    *, requests: tuple[int, ...], prefix_tokens: int, prompt_tokens: int, block_tokens: int, kv_bytes_per_token: int
) -> list[dict]:
    """One row per request count: the blocks and MiB of its prompts, none shared and the
    prefix shared, and the share of the memory sharing saves."""
    block_bytes = block_tokens * kv_bytes_per_token
    rows = []
    for n in requests:
        private = blocks_private(requests=n, prompt_tokens=prompt_tokens, block_tokens=block_tokens)
        shared = blocks_shared(
            requests=n, prefix_tokens=prefix_tokens, prompt_tokens=prompt_tokens, block_tokens=block_tokens
        )
        rows.append(
            {
                "requests": n,
                "private_blocks": private,
                "shared_blocks": shared,
                "private_mib": private * block_bytes / 2**20,
                "shared_mib": shared * block_bytes / 2**20,
                "saved_fraction": 1 - shared / private,
            }
        )
    return rows
