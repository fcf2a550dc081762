"""KV-cache memory of a batch of requests under two allocators: pure Python, no model.

* ``ContiguousAllocator``: each admitted request reserves one contiguous region for the
  longest context it may reach, held until it finishes.
* ``BlockAllocator``: memory is cut into fixed-size blocks of ``block_tokens`` tokens;
  each request has a block table (its logical blocks -> physical block ids) and takes a
  new block only when its last one is full. A common prefix (a system prompt) can be
  stored once and its full blocks shared by every request, with reference counts.

Both count in tokens; bytes are tokens x bytes per token, applied by the caller.
``reserved`` is what the allocator set aside, ``stored`` the tokens actually held in it
(shared ones counted once); ``stored <= reserved`` always.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


class OutOfBlocks(MemoryError):
    pass


@dataclass
class ContiguousAllocator:
    max_tokens: int
    tokens: dict[int, int] = field(default_factory=dict)  # request -> tokens held

    def admit(self, request: int, tokens: int) -> None:
        if request in self.tokens:
            raise ValueError(f"request {request} is already admitted")
        if tokens > self.max_tokens:
            raise ValueError(f"{tokens} tokens exceed the reservation of {self.max_tokens}")
        self.tokens[request] = tokens

    def append(self, request: int, n: int = 1) -> None:
        if self.tokens[request] + n > self.max_tokens:
            raise ValueError(f"request {request} outgrew its reservation of {self.max_tokens} tokens")
        self.tokens[request] += n

    def free(self, request: int) -> None:
        del self.tokens[request]

    @property
    def reserved_tokens(self) -> int:
        return len(self.tokens) * self.max_tokens

    @property
    def stored_tokens(self) -> int:
        return sum(self.tokens.values())


@dataclass(frozen=True)
class Prefix:
    """A prefix stored once: its full blocks (shareable) and its length."""

    tokens: int
    blocks: tuple[int, ...]


class BlockAllocator:
    def __init__(self, *, block_tokens: int, num_blocks: int | None = None) -> None:
        if block_tokens < 1:
            raise ValueError("block_tokens must be at least 1")
        self.block_tokens = block_tokens
        self.num_blocks = num_blocks  # None: unbounded (count what a workload needs)
        self._free: list[int] = []
        self._next = 0
        self.refcount: dict[int, int] = {}  # physical block -> references
        self.filled: dict[int, int] = {}  # physical block -> tokens written in it
        self.tables: dict[int, list[int]] = {}  # request -> block table
        self.length: dict[int, int] = {}  # request -> tokens in its context

    def _take(self) -> int:
        if self._free:
            block = self._free.pop()
        elif self.num_blocks is None or self._next < self.num_blocks:
            block, self._next = self._next, self._next + 1
        else:
            raise OutOfBlocks(f"all {self.num_blocks} blocks are in use")
        self.refcount[block] = 1
        self.filled[block] = 0
        return block

    def _release(self, block: int) -> None:
        self.refcount[block] -= 1
        if self.refcount[block] == 0:
            del self.refcount[block], self.filled[block]
            self._free.append(block)

    def _write(self, request: int, n: int) -> None:
        table = self.tables[request]
        for _ in range(n):
            if not table or self.filled[table[-1]] == self.block_tokens:
                table.append(self._take())
            self.filled[table[-1]] += 1
            self.length[request] += 1

    def store_prefix(self, tokens: int) -> Prefix:
        """Store a common prefix once. Only its full blocks can be shared; the tokens of
        a partial last block are written again by each request that uses it."""
        full = tokens // self.block_tokens
        blocks = []
        for _ in range(full):
            b = self._take()
            self.filled[b] = self.block_tokens
            blocks.append(b)
        return Prefix(tokens, tuple(blocks))

    def release_prefix(self, prefix: Prefix) -> None:
        for b in prefix.blocks:
            self._release(b)

    def admit(self, request: int, tokens: int, prefix: Prefix | None = None) -> None:
        """A request whose context starts with ``tokens`` tokens (its prompt, including
        ``prefix`` when given)."""
        if request in self.tables:
            raise ValueError(f"request {request} is already admitted")
        shared = list(prefix.blocks) if prefix else []
        if prefix and tokens < prefix.tokens:
            raise ValueError("the prompt is shorter than the prefix it shares")
        for b in shared:
            self.refcount[b] += 1
        self.tables[request] = shared
        self.length[request] = len(shared) * self.block_tokens
        try:
            self._write(request, tokens - self.length[request])
        except OutOfBlocks:
            self.free(request)
            raise

    def append(self, request: int, n: int = 1) -> None:
        self._write(request, n)

    def free(self, request: int) -> None:
        for b in self.tables.pop(request):
            self._release(b)
        del self.length[request]

    def block_table(self, request: int) -> list[int]:
        return list(self.tables[request])

    @property
    def blocks_in_use(self) -> int:
        return len(self.refcount)

    @property
    def reserved_tokens(self) -> int:
        return self.blocks_in_use * self.block_tokens

    @property
    def stored_tokens(self) -> int:
        return sum(self.filled.values())


@dataclass(frozen=True)
class MemoryStep:
    """Tokens after one step of a schedule: the requests' contexts (each counted in
    full, as if unshared), and per scheme (reserved, stored)."""

    step: int
    context_tokens: int
    schemes: dict[str, tuple[int, int]]


SCHEMES = ("contiguous", "paged", "paged, shared prefix")


def simulate_memory(
    spans: Sequence,
    *,
    prompt_tokens: int,
    shared_prefix_tokens: int,
    block_tokens: int,
    max_context_tokens: int,
) -> list[MemoryStep]:
    """Drive the three schemes through a schedule of ``spans`` (objects with ``request``,
    ``start``, ``finish``, ``release`` in steps, as ``measure.sim.scheduler.Span``).

    A request is admitted at its ``start`` holding its prompt (its prefill), gains one
    token per step until ``finish`` and is freed at ``release``. Memory is read at the
    end of every step, before that step's finished requests are freed.
    """
    contiguous = ContiguousAllocator(max_tokens=max_context_tokens)
    paged = BlockAllocator(block_tokens=block_tokens)
    shared = BlockAllocator(block_tokens=block_tokens)
    prefix = shared.store_prefix(shared_prefix_tokens)
    allocators = {"contiguous": contiguous, "paged": paged, "paged, shared prefix": shared}
    steps = max(sp.release for sp in spans)
    by_start: dict[int, list] = {}
    by_release: dict[int, list] = {}
    for sp in spans:
        by_start.setdefault(sp.start, []).append(sp)
        by_release.setdefault(sp.release, []).append(sp)
    context: dict[int, int] = {}
    out = []
    for step in range(steps):
        for sp in by_start.get(step, []):
            contiguous.admit(sp.request, prompt_tokens)
            paged.admit(sp.request, prompt_tokens)
            shared.admit(sp.request, prompt_tokens, prefix)
            context[sp.request] = prompt_tokens
        for sp in spans:
            if sp.request in context and sp.start <= step < sp.finish:
                for a in allocators.values():
                    a.append(sp.request)
                context[sp.request] += 1
        out.append(
            MemoryStep(
                step=step,
                context_tokens=sum(context.values()),
                schemes={name: (a.reserved_tokens, a.stored_tokens) for name, a in allocators.items()},
            )
        )
        for sp in by_release.get(step + 1, []):
            for a in allocators.values():
                a.free(sp.request)
            del context[sp.request]
    return out
