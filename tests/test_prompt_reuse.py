"""The shared prefix's blocks, counted by hand (measure/experiments/prompt_reuse/blocks.py)."""

import pytest

from measure.experiments.prompt_reuse.blocks import blocks_private, blocks_shared, shared_block_rows


def test_private_blocks_round_each_prompt_up():
    # 20 tokens in blocks of 16: two blocks each, three requests
    assert blocks_private(requests=3, prompt_tokens=20, block_tokens=16) == 6


def test_a_prefix_shares_only_its_whole_blocks():
    # prefix 18 of 20 tokens: one whole block shared, the block holding tokens 16-19 each one's own
    assert blocks_shared(requests=3, prefix_tokens=18, prompt_tokens=20, block_tokens=16) == 1 + 3
    # prefix 32 of 40: two whole blocks shared, the third each one's own
    assert blocks_shared(requests=4, prefix_tokens=32, prompt_tokens=40, block_tokens=16) == 2 + 4


def test_a_prefix_shorter_than_a_block_shares_nothing():
    assert blocks_shared(requests=5, prefix_tokens=10, prompt_tokens=20, block_tokens=16) == blocks_private(
        requests=5, prompt_tokens=20, block_tokens=16
    )


def test_one_request_saves_nothing_and_more_save_more():
    rows = shared_block_rows(
        requests=(1, 4), prefix_tokens=32, prompt_tokens=40, block_tokens=16, kv_bytes_per_token=2**16
    )
    assert [r["private_blocks"] for r in rows] == [3, 12]
    assert [r["shared_blocks"] for r in rows] == [3, 6]
    assert [r["saved_fraction"] for r in rows] == [0, 0.5]
    # a block: 16 tokens of 64 KiB, 1 MiB
    assert [r["private_mib"] for r in rows] == [3.0, 12.0]
    assert [r["shared_mib"] for r in rows] == [3.0, 6.0]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"requests": 2, "prefix_tokens": 30, "prompt_tokens": 20, "block_tokens": 16}, "does not fit"),
        ({"requests": 0, "prefix_tokens": 8, "prompt_tokens": 20, "block_tokens": 16}, "requests must be"),
        ({"requests": 1, "prefix_tokens": 8, "prompt_tokens": 20, "block_tokens": 0}, "block_tokens must be"),
    ],
)
def test_impossible_counts_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        blocks_shared(**kwargs)
