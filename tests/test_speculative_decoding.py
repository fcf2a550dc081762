"""§8: speculative decoding, smoke-run on the embedded model, and the algorithm itself."""

import json

import pytest
import torch

from measure.lab.formulas import binomial_interval, expected_tokens_per_verification, speculative_speedup
from tests.helpers import table_rows


@pytest.mark.smoke
def test_smoke_run_invariants(smoke_data):
    d = smoke_data / "speculative_decoding"
    acc = {r["draft"]: r for r in table_rows(d, "acceptance")}
    for r in acc.values():
        assert int(r["agreed"]) <= int(r["positions"])
        assert float(r["alpha"]) == pytest.approx(int(r["agreed"]) / int(r["positions"]))
        # the proportion's interval (Wilson), from its counts
        assert (float(r["alpha_low"]), float(r["alpha_high"])) == pytest.approx(
            binomial_interval(int(r["agreed"]), int(r["positions"]))
        )
    meta = json.loads((d / "meta.json").read_text())
    runs = table_rows(d, "real_run")
    timed = [r for r in runs if r["timed"] == "true"]
    # plain greedy and the runs the prediction puts first are timed; every run predicted
    assert len(timed) == meta["parameters"]["timed_runs"] == meta["values"]["timed_runs"]["value"]
    first = max(runs, key=lambda r: float(r["predicted_run_speedup"]))
    assert first in timed and meta["values"]["predicted_first_gamma"]["value"] == int(first["gamma"])
    for r in runs:
        low, mid, high = (float(r[f"predicted_run_speedup{s}"]) for s in ("_low", "", "_high"))
        assert low <= mid <= high
        if r not in timed:
            assert r["speculative_ms"] == r["measured_speedup"] == ""
    for r in runs:
        assert r["identical_to_greedy"] == "true" and r["first_mismatch"] == "-1", r
        g, alpha = int(r["gamma"]), float(r["alpha"])
        assert float(r["predicted_tokens_per_round"]) == pytest.approx(
            expected_tokens_per_verification(alpha=alpha, gamma=g)
        )
        assert 1 <= float(r["tokens_per_round"]) <= g + 1
        assert float(r["predicted_speedup"]) == pytest.approx(
            speculative_speedup(alpha=alpha, gamma=g, draft_cost=float(r["draft_cost"]))
        )
    for r in timed:
        for name in ("greedy_ms", "speculative_ms"):  # medians of the run sweep, with their intervals
            low, high = name.replace("_ms", "_low_ms"), name.replace("_ms", "_high_ms")
            assert float(r[low]) <= float(r[name]) <= float(r[high]) and int(r[name.replace("_ms", "_samples")]) >= 6
        # greedy over the run, paired round by round in the run sweep (medians.ratio): the
        # runs' own samples are not published, so the pairing itself is tested in test_sampling
        low, speedup, high = (float(r[f"measured_speedup{s}"]) for s in ("_low", "", "_high"))
        assert low <= speedup <= high
        assert float(r["measured_over_predicted"]) == pytest.approx(
            float(r["speculative_ms"]) / float(r["predicted_ms"])
        )
    for r in table_rows(d, "verify_cost"):
        assert (
            float(r["relative_to_one_step_low"])
            <= float(r["relative_to_one_step"])
            <= float(r["relative_to_one_step_high"])
        )
    notes = json.loads((d / "meta.json").read_text())["notes"]
    assert notes["step_sweep"]["rounds"] >= 6 and notes["run_sweep"]["rounds"] >= 6
    for r in table_rows(d, "speedup"):
        losses = [c for c in r if c.startswith("speedup_g") and float(r[c]) < 1]
        assert (r["losses"] == "none") == (not losses)
    for r in table_rows(d, "acceptance_by_position"):
        assert int(r["accepted"]) <= int(r["proposed"])


def test_kernel_and_timing_results_are_machine_scope():
    """The int8 draft runs CPU int8 kernels (they round differently on another CPU model)
    and the best run is picked by a timing: none of it reproduces off the machine."""
    from measure.experiments import speculative_decoding as m

    cols = {(t.name, c.name): c for t in m.TABLES for c in t.columns}
    for name in ("proposed", "accepted", "rate", "alpha"):
        assert cols[("acceptance_by_position", name)].scope == "machine", name
    for name in ("agreed", "alpha", "first_disagreement"):
        assert cols[("acceptance", name)].scope == "machine", name
    values = {v.name: v for v in m.VALUES}
    assert values["best_draft"].scope == values["best_gamma"].scope == "machine"
    assert cols[("speedup", "draft_cost")].scope == "any"  # the assumed c, a parameter


class _Oracle(torch.nn.Module):
    """A toy language model over a vocabulary of 8 whose greedy next token is a fixed
    function of the previous token (``table[prev]``), with a transformers-style cache."""

    def __init__(self, table):
        super().__init__()
        self.table = torch.tensor(table)

    def forward(self, input_ids, past_key_values=None, use_cache=True):
        from types import SimpleNamespace

        cache = past_key_values if past_key_values is not None else _ListCache()
        cache.tokens += input_ids[0].tolist()
        logits = torch.nn.functional.one_hot(self.table[input_ids[0]], 8).float()[None]
        return SimpleNamespace(logits=logits, past_key_values=cache)


class _ListCache:
    def __init__(self):
        self.tokens = []

    def get_seq_length(self):
        return len(self.tokens)

    def crop(self, n):
        assert n < 0
        del self.tokens[n:]


@pytest.mark.parametrize("gamma", [1, 2, 3, 5])
def test_speculative_greedy_equals_target_greedy(gamma):
    from measure.experiments.speculative_decoding.algorithm import speculative_greedy

    target = _Oracle([1, 2, 3, 4, 5, 6, 7, 0])  # counts upward
    draft = _Oracle([1, 2, 3, 4, 0, 6, 7, 0])  # wrong after 4
    ids = torch.tensor([[0]])
    out, accepted = speculative_greedy(target, draft, ids, 20, gamma)
    assert out == [(i + 1) % 8 for i in range(20)]  # the target's own greedy sequence
    assert all(0 <= n <= gamma for n in accepted)
    assert sum(n + 1 for n in accepted) >= 20
    perfect, acc = speculative_greedy(target, target, ids, 20, gamma)
    assert perfect == out and all(n == gamma for n in acc[:-1])  # a perfect draft: every draft kept


@pytest.mark.parametrize("gamma", [1, 3])
def test_speculative_sampling_at_temperature_zero_is_greedy(gamma):
    from measure.experiments.speculative_decoding.algorithm import speculative_greedy
    from measure.experiments.speculative_decoding.sampling import speculative_sampled

    target = _Oracle([1, 2, 3, 4, 5, 6, 7, 0])
    draft = _Oracle([1, 2, 3, 4, 0, 6, 7, 0])
    ids = torch.tensor([[0]])
    g = torch.Generator().manual_seed(0)
    sampled = speculative_sampled(target, draft, ids, 20, gamma, 0.0, g)
    assert sampled == speculative_greedy(target, draft, ids, 20, gamma)


def test_speculative_sampling_keeps_every_draft_of_the_target_itself():
    from measure.experiments.speculative_decoding.sampling import speculative_sampled

    target = _Oracle([1, 2, 3, 4, 5, 6, 7, 0])
    g = torch.Generator().manual_seed(0)
    tokens, accepted = speculative_sampled(target, target, torch.tensor([[0]]), 30, 3, 1.0, g)
    assert len(tokens) == 30 and all(0 <= t < 8 for t in tokens)
    assert all(n == 3 for n in accepted)  # p == q: min(1, p/q) = 1, nothing rejected


@pytest.mark.smoke
def test_smoke_sampling_tables(smoke_data):
    d = smoke_data / "speculative_decoding"
    acc = {r["draft"]: r for r in table_rows(d, "acceptance")}
    for r in table_rows(d, "acceptance_by_temperature"):
        assert 0 <= float(r["lowest"]) <= float(r["expected_acceptance"]) <= 1
        if float(r["temperature"]) == 0:  # greedy: the chance of keeping a draft is α
            assert float(r["expected_acceptance"]) == float(acc[r["draft"]]["alpha"])
    for r in table_rows(d, "exactness"):
        assert int(r["dof"]) == int(r["cells"]) - 1 and 0 <= float(r["p_value"]) <= 1
    for r in table_rows(d, "sampled_run"):
        g = int(r["gamma"])
        assert int(r["accepted"]) <= int(r["judged"]) <= g * int(r["rounds"])
        assert 1 <= float(r["tokens_per_round"]) <= g + 1
        assert float(r["predicted_tokens_per_round"]) == pytest.approx(
            expected_tokens_per_verification(alpha=float(r["expected_acceptance"]), gamma=g)
        )


def test_every_pass_and_generation_is_a_point_of_one_sweep():
    """The step costs are one interleaved sweep (the target at 1 and at gamma + 1 tokens,
    each draft at 1, and every model's prefill of the prompt), the generations another
    (plain greedy and the runs asked for), each point with its interval; a run's tokens
    are those of its one untimed call."""
    from dataclasses import replace
    from types import SimpleNamespace

    from measure.experiments.speculative_decoding import Config
    from measure.experiments.speculative_decoding.algorithm import cost_rows_of, speculative_greedy
    from measure.experiments.speculative_decoding.runs import timed_runs, untimed_runs

    target = _Oracle([1, 2, 3, 4, 5, 6, 7, 0])
    drafts = {"int8_row": target, "int4_tensor": _Oracle([1, 2, 3, 4, 0, 6, 7, 0])}
    ids = torch.tensor([[0, 1, 2]])
    ctx = SimpleNamespace(device=torch.device("cpu"), log=lambda message: None)
    cfg = replace(Config.for_profile("smoke"), step_budget_s=0.0, run_budget_s=0.0)

    step, cost_rows, verify_rows, passes, notes = cost_rows_of(target, drafts, ids, (2, 4), ctx, cfg)
    assert notes["points"] == 1 + 2 + 2 + 3 and notes["rounds"] >= 6
    prefills = {k[1] for k in passes if k[0] == "prefill"}
    assert prefills == {"target", "int8_row", "int4_tensor"}
    assert [r["draft"] for r in cost_rows] == ["int8_row", "int4_tensor"]
    assert [r["gamma"] for r in verify_rows] == [2, 4]
    for r in cost_rows:
        assert r["target_step_ms"] == step.median_ms and r["draft_step_samples"] >= 6
        assert r["draft_cost_low"] <= r["draft_cost"] <= r["draft_cost_high"]
    for r in verify_rows:
        assert r["verify_low_ms"] <= r["verify_ms"] <= r["verify_high_ms"] and r["verify_samples"] >= 6
        assert r["relative_to_one_step_low"] <= r["relative_to_one_step"] <= r["relative_to_one_step_high"]
    # each pass against the pass over fewer tokens before it, paired in the same sweep
    assert verify_rows[0]["vs_fewer"] is None
    assert verify_rows[1]["vs_fewer_low"] <= verify_rows[1]["vs_fewer"] <= verify_rows[1]["vs_fewer_high"]

    runs = [("int8_row", 2), ("int4_tensor", 3)]
    plain, results = untimed_runs(target, drafts, ids, runs, new_tokens=12)
    sweep = timed_runs(target, drafts, ids, runs[:1], new_tokens=12, ctx=ctx, cfg=cfg)
    assert set(sweep.points) == {"greedy", runs[0]} and all(e.n >= 6 for e in sweep.points.values())
    assert plain == [(i + 3) % 8 for i in range(12)]
    for d, g in runs:
        assert results[(d, g)] == speculative_greedy(target, drafts[d], ids, 12, g)
