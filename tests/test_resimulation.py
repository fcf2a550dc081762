"""A simulated table is held to its simulation run again on the committed run's own
costs: the committed data passes, a change of the simulation's arithmetic or of one
stored cell is found, and cell by cell the gate leaves its timing columns alone."""

from __future__ import annotations

import importlib

import pytest

from measure import registry
from measure.resimulation import held, resimulation_findings
from sitedata import read_experiment
from tests.conftest import REPO

# the module (the package's name `simulations` is its function)
simulations = importlib.import_module("measure.experiments.batching.simulations")
ROWS = [{"slot": "0", "ttft_ms": "1198.3616210000037"}, {"slot": "1", "ttft_ms": "19798.7"}]


def test_equal_rows_hold_and_a_last_bit_is_no_change():
    again = [{"slot": 0, "ttft_ms": 1198.3616210000037 * (1 + 2e-16)}, {"slot": 1, "ttft_ms": 19798.7}]
    finding = held("batching", "arrival_requests", ROWS, again)
    assert finding.verdict == "ok" and "all 4 cells" in finding.reason


@pytest.mark.parametrize(
    "again,where",
    [
        ([{"slot": 0, "ttft_ms": 1198.3616210000037}, {"slot": 2, "ttft_ms": 19798.7}], (1, "slot")),
        ([{"slot": 0, "ttft_ms": 1198.36162 * (1 + 1e-7)}, {"slot": 1, "ttft_ms": 19798.7}], (0, "ttft_ms")),
    ],
)
def test_a_cell_that_differs_is_named(again, where):
    finding = held("batching", "arrival_requests", ROWS, again)
    assert finding.verdict == "drift" and (finding.row, finding.column) == where


def test_another_number_of_rows_is_a_drift():
    finding = held("batching", "arrival_requests", ROWS, ROWS[:1])
    assert finding.verdict == "drift" and finding.committed == "2 rows" and finding.new == "1 rows"


@pytest.fixture(scope="module")
def committed():
    return read_experiment(REPO / "site_data", "batching")


def test_the_committed_simulations_come_again_from_their_own_costs(committed):
    findings = resimulation_findings(committed)
    simulated = {t.name for t in registry.load("batching").TABLES if t.simulated}
    assert (
        {f.table for f in findings}
        == simulated
        == {
            "policies",
            "timeline",
            "arrivals",
            "arrival_ratios",
            "arrival_requests",
        }
    )
    assert all(f.verdict == "ok" for f in findings), [f for f in findings if f.verdict != "ok"]


def test_a_changed_simulation_is_found(committed, monkeypatch):
    """A scheduler that served one request's first token a millisecond later: the rows of
    every request under arrivals no longer come from the committed costs."""
    real = simulations.arrival_rows

    def later(*args, **kwargs):
        summary, ratios, requests, values = real(*args, **kwargs)
        requests = [dict(r, ttft_ms=r["ttft_ms"] + 1.0) if r["request"] == 5 else r for r in requests]
        return summary, ratios, requests, values

    monkeypatch.setattr(simulations, "arrival_rows", later)
    found = {f.table: f for f in resimulation_findings(committed)}
    assert found["arrival_requests"].verdict == "drift" and found["arrival_requests"].column == "ttft_ms"
    assert found["policies"].verdict == "ok"  # the queued-at-once schedule is another simulation
