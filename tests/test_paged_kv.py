"""The block allocator and the memory simulation: cases worked by hand, and invariants."""

import pytest

from measure.sim.paged_kv import SCHEMES, BlockAllocator, ContiguousAllocator, OutOfBlocks, simulate_memory
from measure.sim.scheduler import Span, continuous_schedule, skewed_lengths


def test_blocks_are_taken_only_when_the_last_is_full():
    a = BlockAllocator(block_tokens=4)
    a.admit(0, 5)  # 4 + 1: two blocks
    assert len(a.block_table(0)) == 2 and a.reserved_tokens == 8 and a.stored_tokens == 5
    a.append(0, 3)  # 8 tokens: the second block fills up, no new one
    assert len(a.block_table(0)) == 2 and a.stored_tokens == 8
    a.append(0)  # the ninth token opens a third block
    assert len(a.block_table(0)) == 3 and a.reserved_tokens == 12


def test_free_returns_blocks_for_reuse():
    a = BlockAllocator(block_tokens=4, num_blocks=3)
    a.admit(0, 8)
    a.admit(1, 1)
    with pytest.raises(OutOfBlocks):
        a.admit(2, 5)
    assert 2 not in a.tables and a.blocks_in_use == 3  # a failed admission leaves nothing behind
    a.free(0)
    assert a.blocks_in_use == 1
    a.admit(2, 5)
    assert sorted(a.block_table(2)) == [0, 1]  # the freed physical blocks, reused
    assert a.blocks_in_use == 3


def test_prefix_sharing_by_hand():
    # Prefix of 6 tokens with 4-token blocks: one full block shared, 2 tokens each request writes itself.
    a = BlockAllocator(block_tokens=4)
    p = a.store_prefix(6)
    assert len(p.blocks) == 1 and a.reserved_tokens == 4 and a.stored_tokens == 4
    a.admit(0, 9, p)  # shared block + 5 own tokens (2 of the prefix, 3 of its own) = 2 own blocks
    a.admit(1, 7, p)  # shared block + 3 own tokens = 1 own block
    assert a.block_table(0)[0] == a.block_table(1)[0] == p.blocks[0]
    assert a.refcount[p.blocks[0]] == 3
    assert a.blocks_in_use == 1 + 2 + 1
    assert a.stored_tokens == 4 + 5 + 3  # the shared block counted once
    a.free(0)
    a.free(1)
    assert a.blocks_in_use == 1 and a.refcount[p.blocks[0]] == 1  # the prefix itself stays
    a.release_prefix(p)
    assert a.blocks_in_use == 0


def test_contiguous_reserves_the_maximum():
    c = ContiguousAllocator(max_tokens=10)
    c.admit(0, 3)
    c.admit(1, 9)
    assert c.reserved_tokens == 20 and c.stored_tokens == 12
    c.append(1)
    with pytest.raises(ValueError, match="outgrew"):
        c.append(1)
    c.free(0)
    assert c.reserved_tokens == 10


def test_simulation_by_hand():
    # Two requests, prompt 4 tokens (2 shared), blocks of 2, reservation 8:
    # r0 generates in steps 0-1, r1 in step 0 only.
    spans = [Span(0, 0, 0, 2, 2), Span(1, 1, 0, 1, 1)]
    steps = simulate_memory(spans, prompt_tokens=4, shared_prefix_tokens=2, block_tokens=2, max_context_tokens=8)
    assert [s.context_tokens for s in steps] == [10, 6]  # (4+1)+(4+1), then r0 alone at 4+2
    assert steps[0].schemes["contiguous"] == (16, 10)
    assert steps[0].schemes["paged"] == (12, 10)  # 3 blocks each
    assert steps[0].schemes["paged, shared prefix"] == (2 + 4 + 4, 2 + 3 + 3)
    assert steps[1].schemes["contiguous"] == (8, 6)
    assert steps[1].schemes["paged"] == (6, 6)
    assert steps[1].schemes["paged, shared prefix"] == (2 + 4, 2 + 4)


def test_stored_never_exceeds_reserved_on_the_workload():
    lengths = skewed_lengths(64, median=18, sigma=1.0, seed=2)
    sched = continuous_schedule(lengths, 8)
    steps = simulate_memory(
        sched.spans, prompt_tokens=64, shared_prefix_tokens=32, block_tokens=16, max_context_tokens=512
    )
    assert len(steps) == sched.steps
    for s in steps:
        for name in SCHEMES:
            reserved, stored = s.schemes[name]
            assert 0 < stored <= reserved, (s.step, name)
        # Paging wastes less than one block per request; the shared prefix saves memory.
        live = sum(1 for sp in sched.spans if sp.start <= s.step < sp.release)
        paged_reserved, paged_stored = s.schemes["paged"]
        assert paged_reserved - paged_stored < live * 16
        assert paged_stored == s.context_tokens
        assert s.schemes["paged, shared prefix"][0] <= paged_reserved <= s.schemes["contiguous"][0]


def test_refusals_say_why():
    cases = [
        (lambda: BlockAllocator(block_tokens=0), ValueError, "block_tokens must be at least 1"),
        (lambda: _admitted_twice(BlockAllocator(block_tokens=2)), ValueError, "request 0 is already admitted"),
        (lambda: _admitted_twice(ContiguousAllocator(max_tokens=8)), ValueError, "request 0 is already admitted"),
        (lambda: ContiguousAllocator(max_tokens=8).admit(0, 9), ValueError, "9 tokens exceed the reservation of 8"),
        (lambda: BlockAllocator(block_tokens=2, num_blocks=2).admit(0, 5), OutOfBlocks, "all 2 blocks are in use"),
        (lambda: _shorter_than_prefix(), ValueError, "the prompt is shorter than the prefix it shares"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind) as e:
            call()
        assert str(e.value) == message


def _admitted_twice(a):
    a.admit(0, 1)
    a.admit(0, 1)


def _shorter_than_prefix():
    a = BlockAllocator(block_tokens=2)
    a.admit(0, 3, a.store_prefix(4))


def test_the_edges_of_every_allocator():
    BlockAllocator(block_tokens=1).admit(0, 3)  # a block of one token is a block
    c = ContiguousAllocator(max_tokens=8)
    c.admit(0, 8)  # a request that exactly fills its reservation
    assert (c.reserved_tokens, c.stored_tokens) == (8, 8)
    b = BlockAllocator(block_tokens=2, num_blocks=2)
    b.admit(0, 4)  # the last block taken: allowed
    assert b.blocks_in_use == 2 and b.length[0] == 4
    b.append(0, 0)
    with pytest.raises(OutOfBlocks):
        b.append(0)
    d = BlockAllocator(block_tokens=2)
    d.admit(0, 2, d.store_prefix(2))  # a prompt exactly as long as its prefix
    assert d.length[0] == 2 and d.stored_tokens == 2
    d.append(0, 3)
    assert d.length[0] == 5 and d.reserved_tokens == 6


def test_a_request_is_written_only_while_it_generates():
    # request 0 computes in steps [0, 2) and holds its slot until 3 (padding); request 1
    # is admitted at step 1 and computes until 2.
    spans = [Span(0, 0, 0, 2, 3), Span(1, 1, 1, 2, 2)]
    steps = simulate_memory(spans, prompt_tokens=1, shared_prefix_tokens=0, block_tokens=1, max_context_tokens=4)
    assert [s.context_tokens for s in steps] == [2, 5, 3]  # 1+1; 1+2 and 1+1; 3 (padding adds none)


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_OPS = st.lists(
    st.tuples(st.sampled_from(["admit", "append", "free"]), st.integers(0, 5), st.integers(1, 9)), max_size=60
)


@given(block_tokens=st.integers(1, 5), prefix=st.integers(0, 7), ops=_OPS)
def test_blocks_are_conserved_under_any_sequence(block_tokens, prefix, ops):
    """Admit, append and free in any order: every block is in exactly one place, a
    request holds just the blocks its length needs, and freeing everything returns all."""
    a = BlockAllocator(block_tokens=block_tokens)
    shared = a.store_prefix(prefix)
    for op, request, n in ops:
        if op == "admit" and request not in a.tables:
            a.admit(request, prefix + n, shared)
        elif op == "append" and request in a.tables:
            a.append(request, n)
        elif op == "free" and request in a.tables:
            a.free(request)
        own = sum(len(t) - len(shared.blocks) for t in a.tables.values())
        assert a.blocks_in_use == own + len(shared.blocks)
        assert a.reserved_tokens == a.blocks_in_use * block_tokens
        assert a.stored_tokens <= a.reserved_tokens
        for r, table in a.tables.items():
            assert len(table) == -(-a.length[r] // block_tokens)  # just the blocks its length needs
    for r in list(a.tables):
        a.free(r)
    a.release_prefix(shared)
    assert a.blocks_in_use == 0 and a.stored_tokens == 0


@given(lengths=st.lists(st.integers(1, 30), min_size=1, max_size=12), slots=st.integers(1, 4), block=st.integers(1, 8))
def test_the_simulation_never_stores_more_than_it_reserves(lengths, slots, block):
    sched = continuous_schedule(lengths, slots)
    longest = 4 + max(lengths)
    steps = simulate_memory(
        sched.spans,
        prompt_tokens=4,
        shared_prefix_tokens=4,
        block_tokens=block,
        max_context_tokens=1 << (longest - 1).bit_length(),
    )
    for s in steps:
        for reserved, stored in s.schemes.values():
            assert stored <= reserved
        # paging wastes less than one block per running request, and sharing never adds
        running = sum(1 for sp in sched.spans if sp.start <= s.step < sp.release)
        reserved, stored = s.schemes["paged"]
        assert reserved - stored <= (block - 1) * running
        assert s.schemes["paged, shared prefix"][0] <= reserved
