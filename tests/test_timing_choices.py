"""Values the drift gate does not decide as timings of their own: a value that restates a
table cell (compared there), what the timings chose, and what is read at that choice
where the two runs chose differently."""

from dataclasses import dataclass, field

from sitedata.declared import Declared
from sitedata.policies import TIMING
from sitedata.restated import restated_cells
from sitedata.schema import Column, Table, Value
from sitedata.timing_choices import (
    AT_CHOICE,
    CHOICES,
    ONE_READING,
    ROW_CHOICES,
    SAMPLE_ENDS,
    choice_reason,
    one_reading,
    row_choice_reason,
)

TABLE = Table("decode", "steps", (Column("cache_tokens", "tokens"), Column("step_ms", "ms", "step", policy=TIMING)))
CODE = Declared(
    title="t",
    tables=(TABLE,),
    values=(Value("step_smallest_ms", "ms", policy=TIMING), Value("profiled_step_ms", "ms", policy=TIMING)),
    parameters={},
)


@dataclass
class _Run:
    """What ``restated_cells`` reads of an experiment: its rows and its meta.json."""

    steps: list[float]
    values: dict[str, float]
    meta: dict = field(init=False)

    def __post_init__(self) -> None:
        self.meta = {"tables": {"decode": {}}, "values": {k: {"value": v} for k, v in self.values.items()}}

    def rows(self, table: str) -> list[dict[str, str]]:
        return [{"cache_tokens": str(16 * 2**i), "step_ms": repr(s)} for i, s in enumerate(self.steps)]


def test_a_value_that_is_a_cell_in_both_runs_is_compared_as_that_cell():
    old = _Run([35.1, 36.4, 70.6], {"step_smallest_ms": 35.1, "profiled_step_ms": 48.7})
    new = _Run([41.2, 40.0, 91.9], {"step_smallest_ms": 41.2, "profiled_step_ms": 56.3})
    assert restated_cells(old, new, CODE) == {"step_smallest_ms": "decode row 0 step_ms"}


def test_a_value_equal_to_a_cell_in_one_run_only_is_its_own():
    old = _Run([35.1, 36.4], {"step_smallest_ms": 35.1, "profiled_step_ms": 36.4})
    new = _Run([41.2, 40.0], {"step_smallest_ms": 41.0, "profiled_step_ms": 39.0})
    assert restated_cells(old, new, CODE) == {}


def test_a_value_equal_to_a_cell_the_gate_leaves_out_is_not_sent_there():
    table = Table("decode", "steps", (Column("floor_ms", "ms", "floor", policy=TIMING),))
    code = Declared(title="t", tables=(table,), values=(Value("floor_ms", "ms", policy=TIMING),), parameters={})

    class Run(_Run):
        def rows(self, table: str) -> list[dict[str, str]]:
            return [{"floor_ms": repr(s)} for s in self.steps]

    old, new = Run([7.5], {"floor_ms": 7.5}), Run([8.1], {"floor_ms": 8.1})
    assert restated_cells(old, new, code) == {}  # the machine's floor is not compared as a cell


GROWTH = Declared(
    title="t",
    tables=(TABLE,),
    values=(Value("step_growth", "x", policy=TIMING), Value("step_spread", "x", policy=TIMING)),
    parameters={},
)


def test_a_value_that_is_one_cell_over_another_in_both_runs_is_compared_as_those_cells():
    # 70.6 / 35.1 and 91.9 / 41.2 as the experiment divides them; the spread is not a
    # ratio of two cells of the regenerated run (40.0 / 41.2 would be 0.9708...)
    old = _Run([35.1, 36.4, 70.6], {"step_growth": 70.6 / 35.1, "step_spread": 36.4 / 35.1})
    new = _Run([41.2, 40.0, 91.9], {"step_growth": 91.9 / 41.2, "step_spread": 0.97})
    assert restated_cells(old, new, GROWTH) == {"step_growth": "decode row 2 step_ms over row 0"}


def test_a_best_or_a_ratio_read_at_other_rows_in_each_run_is_compared_as_those_rows():
    # the fastest step is row 0 in one run and row 1 in the other; the growth is row 2 over
    # row 0 in one and row 2 over row 1 in the other: each row is compared as itself
    old = _Run([35.1, 36.4, 70.6], {"step_growth": 70.6 / 35.1, "step_spread": 35.1})
    new = _Run([41.2, 40.0, 91.9], {"step_growth": 91.9 / 40.0, "step_spread": 40.0})
    code = Declared(
        title="t",
        tables=(TABLE,),
        values=(*GROWTH.values[:1], Value("step_spread", "ms", policy=TIMING)),
        parameters={},
    )
    assert restated_cells(old, new, code) == {
        "step_growth": "decode row 2 step_ms over row 0, then row 2 over row 1",
        "step_spread": "decode row 0 step_ms, then row 1",
    }
    # a cell in one run and a ratio in the other is not one thing read twice
    mixed = _Run([41.2, 40.0, 91.9], {"step_growth": 40.0, "step_spread": 91.9 / 41.2})
    assert restated_cells(old, mixed, code) == {}


def test_a_ratio_in_one_run_only_or_rounded_is_its_own():
    old = _Run([35.1, 36.4, 70.6], {"step_growth": 70.6 / 35.1, "step_spread": round(36.4 / 35.1, 6)})
    new = _Run([41.2, 40.0, 91.9], {"step_growth": 2.23, "step_spread": round(40.0 / 41.2, 6)})
    assert restated_cells(old, new, GROWTH) == {}


def test_a_ratio_of_a_simulated_table_is_not_sent_there():
    simulated = Table("decode", "steps", TABLE.columns, simulated=True)
    code = Declared(title="t", tables=(simulated,), values=GROWTH.values, parameters={})
    old = _Run([35.1, 70.6], {"step_growth": 70.6 / 35.1, "step_spread": 1.0})
    new = _Run([41.2, 91.9], {"step_growth": 91.9 / 41.2, "step_spread": 1.0})
    assert restated_cells(old, new, code) == {}  # its timings are simulated again, not compared


def test_the_prefill_and_decode_growths_are_ratios_of_their_tables_cells():
    """The committed data as its own regeneration: the growths and the flat part's spread
    are found as their tables' cells divided, so the gate leaves them to those cells."""
    from measure.registry import load
    from sitedata.read import read_experiment
    from tests.conftest import REPO

    mod = load("prefill_decode")
    code = Declared(title=mod.TITLE, tables=tuple(mod.TABLES), values=tuple(mod.VALUES), parameters={})
    exp = read_experiment(REPO / "site_data", "prefill_decode")
    found = restated_cells(exp, exp, code)
    assert {n: found.get(n, "") for n in ("ttft_growth", "step_growth", "flat_spread")} == {
        "ttft_growth": "prefill row 3 time_ms over row 0",
        "step_growth": "decode row 4 step_ms over row 0",
        "flat_spread": found.get("flat_spread", "missing"),
    }
    assert " over row " in found["flat_spread"]


def test_a_cell_that_is_one_reading_over_another_is_compared_as_those_readings():
    from sitedata.restated import ratio_cells

    memory = Table(
        "memory",
        "peaks",
        (
            Column("method", ""),
            Column("above_baseline_bytes", "bytes", "above", policy=TIMING),
            Column("relative_to_cached", "x", "relative", policy=TIMING),
        ),
    )

    def rows(recompute: int, cached: int, relative: float) -> list[dict[str, str]]:
        return [
            {"method": "recompute", "above_baseline_bytes": str(recompute), "relative_to_cached": repr(relative)},
            {"method": "cached", "above_baseline_bytes": str(cached), "relative_to_cached": "1.0"},
        ]

    old, new = rows(29_800_000, 10_000_000, 2.98), rows(22_900_000, 10_000_000, 2.29)
    assert ratio_cells(memory, old, new) == {(0, "relative_to_cached"): "memory row 0 above_baseline_bytes over row 1"}
    # a ratio the regenerated run does not hold (rounded when written) stays a cell of its own
    assert ratio_cells(memory, old, rows(22_900_000, 10_000_000, 2.3)) == {}


def test_a_choice_is_not_compared_what_is_read_at_it_only_where_both_chose_alike():
    same = {"best_draft": {"value": "int8_row"}, "best_gamma": {"value": 4}}
    other = {"best_draft": {"value": "int8_row"}, "best_gamma": {"value": 2}}
    assert "chosen by the timings" in choice_reason("best_gamma", same, same)
    assert choice_reason("best_measured_speedup", same, same) is None  # compared as a timing
    why = choice_reason("best_measured_speedup_low", same, other)
    assert why == "read at a choice the timings made (best_gamma), which differs between the runs"
    assert choice_reason("step_ms", same, other) is None
    assert "the median is compared" in choice_reason("split_step_max_ms", same, same)


def test_a_row_timed_in_one_run_only_is_not_compared_a_row_timed_in_both_is():
    columns = ["draft", "gamma", "timed", "speculative_ms"]
    timed = {"draft": "int8_row", "gamma": "4", "timed": "true", "speculative_ms": "5660.0"}
    untimed = {**timed, "timed": "false", "speculative_ms": ""}
    why = row_choice_reason(columns, timed, untimed, "speculative_ms")
    assert why == "timed in one run only (timed differs): which rows are timed is chosen by the timings"
    assert "chosen by the timings" in row_choice_reason(columns, timed, untimed, "timed")
    assert row_choice_reason(columns, timed, {**timed, "speculative_ms": "5641.1"}, "speculative_ms") is None
    assert row_choice_reason(["draft", "speculative_ms"], timed, untimed, "speculative_ms") is None  # no such column


def test_a_single_reading_is_reported_only_where_named():
    assert "taken once" in one_reading("quality", "seconds")
    assert one_reading("quality", "perplexity") is None and one_reading("batching", "seconds") is None


def test_every_row_choice_and_single_reading_the_gate_names_is_declared():
    from measure.registry import EXPERIMENTS, load

    columns = {(name, t.name, c.name) for name in EXPERIMENTS for t in load(name).TABLES for c in t.columns}
    assert all(any(c == choice for _, _, c in columns) for choice in ROW_CHOICES)
    assert all(any((t, c) == reading for _, t, c in columns) for reading in ONE_READING)


def test_every_choice_the_gate_names_is_declared():
    """A renamed choice would silently be compared again: each name must be a value the code declares."""
    from measure.registry import EXPERIMENTS, load

    names = {v.name for name in EXPERIMENTS for v in load(name).VALUES}
    at = set(AT_CHOICE) | {c for choices in AT_CHOICE.values() for c in choices}
    assert sorted((CHOICES | SAMPLE_ENDS | at) - names) == []
