"""The profiled sweeps' self times: worked by hand on nested records, and equal to what
``torch.profiler``'s own ``key_averages`` gives for a real forward pass."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from measure.lab.profiled import self_times


@dataclass
class Record:
    """A profiler record as ``kineto_results.events()`` gives it, the four fields read."""

    name_: str
    start: int
    duration: int
    thread: int = 1

    def name(self) -> str:
        return self.name_

    def start_ns(self) -> int:
        return self.start

    def duration_ns(self) -> int:
        return self.duration

    def start_thread_id(self) -> int:
        return self.thread


def test_a_parent_keeps_what_its_children_do_not_cover():
    # linear 0-100 ns holds t 10-20 and addmm 30-90; addmm holds a copy_ 40-50.
    events = [Record("linear", 0, 100), Record("addmm", 30, 60), Record("t", 10, 10), Record("copy_", 40, 10)]
    times = self_times(events)
    assert times == {
        "linear": pytest.approx((30e-9, 1)),  # 100 - 10 - 60
        "t": pytest.approx((10e-9, 1)),
        "addmm": pytest.approx((50e-9, 1)),  # 60 - 10
        "copy_": pytest.approx((10e-9, 1)),
    }


def test_records_on_another_thread_are_not_children():
    events = [Record("linear", 0, 100, thread=1), Record("mm", 10, 50, thread=2)]
    assert self_times(events) == {"linear": pytest.approx((100e-9, 1)), "mm": pytest.approx((50e-9, 1))}


def test_siblings_that_touch_are_not_nested():
    events = [Record("add", 0, 10), Record("mul", 10, 10)]
    assert self_times(events) == {"add": pytest.approx((10e-9, 1)), "mul": pytest.approx((10e-9, 1))}


def test_an_only_child_of_its_own_name_is_folded_into_its_parent():
    # div_ 0-100 holding only div_ 10-90 (itself holding mul 20-30): one record of div_,
    # whose self time is everything but the mul.
    events = [Record("div_", 0, 100), Record("div_", 10, 80), Record("mul", 20, 10)]
    assert self_times(events) == {"div_": pytest.approx((90e-9, 1)), "mul": pytest.approx((10e-9, 1))}
    # with a sibling beside it, the inner div_ is a record of its own
    events.append(Record("add", 95, 5))
    assert self_times(events)["div_"] == pytest.approx((85e-9, 2))


def test_equal_to_key_averages_on_a_real_forward_pass():
    from torch.profiler import ProfilerActivity, profile
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=256,
    )  # fmt: skip
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).eval()
    ids = torch.randint(0, 256, (1, 8))
    with torch.inference_mode():
        cache = model(input_ids=ids, use_cache=True).past_key_values
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            model(input_ids=ids[:, -1:], past_key_values=cache, use_cache=True)
    expected = {e.key: (e.self_cpu_time_total / 1e6, e.count) for e in prof.key_averages()}
    got = self_times(prof.profiler.kineto_results.events())
    assert set(got) == set(expected)
    for name, (seconds, count) in expected.items():
        assert got[name][1] == count, name
        assert got[name][0] == pytest.approx(seconds, abs=1e-9), name
