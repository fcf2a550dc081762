"""§1 memory: the smoke run's table against its own values, and the last-steps probe's
premise (it runs the same forward passes as the end of the whole loop) on a fake model."""

import json
from types import SimpleNamespace

import pytest
import torch

from tests.helpers import table_rows


class _LengthRecorder:
    """A stand-in model: records the length of every sequence it is given and returns
    logits that always pick token 7."""

    def __init__(self):
        self.lengths = []

    def __call__(self, *, input_ids, use_cache):
        self.lengths.append(input_ids.shape[1])
        logits = torch.zeros(1, input_ids.shape[1], 10)
        logits[..., 7] = 1
        return SimpleNamespace(logits=logits)


def test_the_last_two_steps_are_the_whole_loops_last_two_forward_passes():
    from measure.experiments.kv_cache.memory import last_steps_prefix
    from measure.lab.generation import greedy_recompute

    ids = torch.tensor([[1, 2, 3, 4, 5]])
    whole = _LengthRecorder()
    generated = greedy_recompute(whole, ids, 9)
    assert whole.lengths == list(range(5, 14))  # prompt + 0 .. prompt + 8
    probe = _LengthRecorder()
    tail = greedy_recompute(probe, last_steps_prefix(ids, generated, 9), 2)
    assert probe.lengths == whole.lengths[-2:] == [12, 13]
    assert tail.tolist() == generated[:, -2:].tolist()


@pytest.mark.smoke
def test_smoke_memory_table_has_every_length_and_both_protocols(smoke_data):
    d = smoke_data / "kv_cache"
    meta = json.loads((d / "meta.json").read_text())
    v = {k: x["value"] for k, x in meta["values"].items()}
    p = meta["parameters"]
    rows = table_rows(d, "memory")
    key = {(r["method"], int(r["new_tokens"]), r["steps_run"]): r for r in rows}
    short, long = sorted(p["memory_tokens"])
    assert (v["memory_tokens_shortest"], v["memory_tokens"]) == (short, long)
    assert p["memory_whole_up_to"] == short  # the smoke profile exercises both protocols
    # the shortest: whole loop, the probe beside it, and the cached run; the longest:
    # the probe alone, since the whole loop is beyond memory_whole_up_to
    assert set(key) == {
        ("recompute", short, "all"),
        ("recompute", short, "last two"),
        ("cached", short, "all"),
        ("recompute", long, "last two"),
        ("cached", long, "all"),
    }
    for r in rows:
        assert int(r["peak_bytes"]) - int(r["baseline_bytes"]) == int(r["above_baseline_bytes"])
        cached = key[("cached", int(r["new_tokens"]), "all")]
        assert float(r["relative_to_cached"]) == int(r["above_baseline_bytes"]) / max(
            1, int(cached["above_baseline_bytes"])
        )
    assert v["memory_ratio"] == float(key[("recompute", long, "last two")]["relative_to_cached"])
    assert v["memory_ratio_shortest"] == float(key[("recompute", short, "all")]["relative_to_cached"])
    whole, probe = (int(key[("recompute", short, s)]["above_baseline_bytes"]) for s in ("all", "last two"))
    assert v["memory_last_steps_share"] == probe / max(1, whole)
