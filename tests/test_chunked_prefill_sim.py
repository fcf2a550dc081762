"""The admission of a long prompt beside running requests: schedules worked by hand."""

import pytest

from measure.sim.chunked_prefill import Admission, admit, chunks, token_times


def test_chunks_cover_the_prompt_once_the_last_one_shorter():
    assert chunks(10, None) == [(0, 10)]
    assert chunks(8, 4) == [(0, 4), (4, 4)]
    assert chunks(10, 4) == [(0, 4), (4, 4), (8, 2)]
    assert chunks(3, 8) == [(0, 3)]
    with pytest.raises(ValueError, match="at least one token"):
        chunks(0, 4)
    with pytest.raises(ValueError, match="a chunk needs"):
        chunks(8, 0)


def test_a_whole_prefill_stalls_the_running_requests_once():
    # decode step 10 ms, the whole prompt 90 ms: the prompt's token at 90 ms; the running
    # requests wait 90 + 10 = 100 ms for their next token, and get one token meanwhile
    assert admit([90.0], 10.0) == Admission(
        iterations=1, first_token_ms=90.0, longest_gap_ms=100.0, span_ms=100.0, tokens_meanwhile=1
    )


def test_chunks_spread_the_stall_and_delay_the_prompt():
    # three chunks of 30, 32 and 34 ms (each reads a longer cache) beside a 10 ms step:
    # iterations of 40, 42, 44 ms; the prompt's token after 30 + 10 + 32 + 10 + 34 = 116 ms
    a = admit([30.0, 32.0, 34.0], 10.0)
    assert a.iterations == 3 and a.tokens_meanwhile == 3
    assert a.first_token_ms == pytest.approx(116.0)
    assert a.longest_gap_ms == pytest.approx(44.0)
    assert a.span_ms == pytest.approx(126.0)


def test_bad_costs_are_refused():
    with pytest.raises(ValueError, match="at least one prefill pass"):
        admit([], 10.0)
    with pytest.raises(ValueError, match="positive"):
        admit([5.0, 0.0], 10.0)
    with pytest.raises(ValueError, match="positive"):
        admit([5.0], 0.0)


def test_token_times_by_hand():
    # two plain steps ending at 0, two passes (30, 34) each with a 10 ms step, one plain step
    assert token_times([30.0, 34.0], 10.0, before=2, after=1) == [-10.0, 0.0, 40.0, 84.0, 94.0]
    times = token_times([90.0], 10.0, before=3, after=2)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert gaps == [10.0, 10.0, 100.0, 10.0, 10.0]
