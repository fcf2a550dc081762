"""A sweep that probed the machine in its own rounds: its rows' times compared with that
sweep's speed divided out (the ratio of the two runs' predictions of the same work),
not the run's calibration, minutes away."""

from measure.lab.prediction import prediction_columns
from sitedata.compare import _timing
from sitedata.machine_speed import MachineState, Speed
from sitedata.policies import TIMING
from sitedata.round_speed import computed_in_rounds, probed_in_rounds, row_speeds, speed_of
from sitedata.schema import Column, Table

TABLE = Table(
    "decode",
    "steps",
    (
        Column("step_ms", "ms", "step", policy=TIMING, interval=("step_low_ms", "step_high_ms")),
        Column("step_low_ms", "ms", "low", policy=TIMING),
        Column("step_high_ms", "ms", "high", policy=TIMING),
        Column("tokens_per_s", "tokens/s", "rate", policy=TIMING),
        *prediction_columns("step"),
    ),
)
STEP = TABLE.columns[0]


def _row(step: float, predicted: float, *, bound: str = "memory", flops: int = 1000) -> dict:
    """A row whose step and prediction each carry a ±1 % interval."""
    return {
        "step_ms": step, "step_low_ms": step * 0.99, "step_high_ms": step * 1.01, "tokens_per_s": 1e3 / step,
        "step_predicted_ms": predicted, "step_predicted_low_ms": predicted * 0.99,
        "step_predicted_high_ms": predicted * 1.01, "step_bound": bound, "step_flops": flops,
        "step_moved_bytes": 5000,
    }  # fmt: skip


def _run_speed(unsteady_move: float) -> Speed:
    """Two runs' calibrations 10 % apart; the regenerated one drifted by ``unsteady_move``."""
    old = MachineState("a", {"memory": (10.0, 0.01)}, False, 0.02)
    new = MachineState("b", {"memory": (11.0, 0.01)}, unsteady_move > 0.1, unsteady_move)
    return Speed.between(old, new)


def test_a_sweep_whose_predictions_moved_with_its_steps_held():
    # the calibration says +10 % faster, but the sweep itself ran 25 % slower: its step
    # and its prediction both took 25 % longer, so the program did not change
    old, new = _row(40.0, 36.0), _row(50.0, 45.0)
    speeds = row_speeds(TABLE, old, new)
    assert speeds["step"].factor.value == 36.0 / 45.0 and speeds["step"].in_rounds
    verdict, words = _timing(old, new, STEP, _run_speed(0.02), None, speeds)
    assert verdict == "ok" and "its sweep's speed divided out" in words
    # the run's speed alone would call it a drift: +37.5 % once the +10 % is divided out
    assert _timing(old, new, STEP, _run_speed(0.02), None, None)[0] == "drift"
    # a rate follows its own step's speed the other way
    assert _timing(old, new, TABLE.columns[3], _run_speed(0.02), None, speeds)[0] == "ok"


def test_a_step_that_slowed_beyond_its_prediction_drifted():
    # the same prediction (the same machine in the sweep's rounds), the step +15 %: the program
    old, new = _row(40.0, 36.0), _row(46.0, 36.0)
    verdict, words = _timing(old, new, STEP, _run_speed(0.02), None, row_speeds(TABLE, old, new))
    assert verdict == "drift" and words.startswith("+15.0%")


def test_a_memory_bound_row_is_not_widened_by_a_run_that_drifted_a_compute_bound_one_is():
    old, new = _row(40.0, 36.0), _row(46.0, 36.0)
    drifted = _run_speed(0.25)  # the regenerated run moved 25 % while it ran
    assert drifted.unsteady == 0.25
    assert _timing(old, new, STEP, drifted, None, row_speeds(TABLE, old, new))[0] == "drift"
    old, new = _row(40.0, 36.0, bound="compute"), _row(46.0, 36.0, bound="compute")
    speeds = row_speeds(TABLE, old, new)
    assert not speeds["step"].in_rounds
    verdict, words = _timing(old, new, STEP, drifted, None, speeds)
    assert verdict == "cannot tell" and "widened by ±25.0%" in words
    # unless the sweep timed a multiply in its rounds too: then its ceilings came from them
    speeds = row_speeds(TABLE, old, new, compute=True)
    assert speeds["step"].in_rounds and _timing(old, new, STEP, drifted, None, speeds)[0] == "drift"


def test_other_work_or_no_prediction_falls_back_to_the_runs_speed():
    old, new = _row(40.0, 36.0), _row(46.0, 40.0, flops=2000)  # the counted work changed
    assert row_speeds(TABLE, old, new) == {}
    assert "machine's speed divided out" in _timing(old, new, STEP, _run_speed(0.02), None, {})[1]
    old["step_predicted_ms"] = ""
    assert row_speeds(TABLE, old, _row(40.0, 36.0)) == {}


def test_which_prediction_a_column_takes():
    speeds = {"step": "the step's", "compiled": "the compiled step's"}
    assert speed_of("step_ms", speeds) == "the step's"
    assert speed_of("compiled_ms", speeds) == "the compiled step's"
    assert speed_of("compiled_speedup", speeds) == "the compiled step's"
    assert speed_of("tokens_per_s", speeds) == "the step's"  # the table's first
    assert speed_of("step_ms", {}) is None


def test_an_experiment_probed_in_rounds_names_its_probes():
    assert probed_in_rounds({"decode_round_gb_s": 20.0, "floor_ms": 3.0})
    assert not probed_in_rounds({"bandwidth_gb_s": 20.0})
    assert computed_in_rounds({"decode_round_gflop_s": 90.0}) and not computed_in_rounds({"decode_round_gb_s": 20.0})
