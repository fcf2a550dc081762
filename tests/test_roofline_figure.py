"""The methods page's roofline on made-up data: the machine's model worked out from a run's
probes (calibration.machine, calibration.ceilings) by hand, every table that declares a
prediction's columns read without a list of experiments, and each step drawn where its
counts and its timing put it, on its own run's roofline."""

import matplotlib.pyplot as plt
import pytest

from measure import calibration_folder as folder
from measure.lab.calibration import Calibration
from measure.lab.medians import Estimate
from measure.lab.prediction import prediction_columns
from sitedata import Column, Result, Table, write_experiment
from sitekit import figures
from sitekit.rendering.pagedata import SiteData
from sitekit.rendering.roofline_points import stems, timed_steps
from tests.conftest import PROVENANCE
from tests.test_calibration import _cal

figures._load_all()
RUN, OTHER = "20260101T000000Z-00000001", "20260102T000000Z-00000002"


def _est(seconds: float) -> Estimate:
    return Estimate.of([seconds * f for f in (0.99, 1.0, 1.0, 1.0, 1.01, 1.02)], 0.03)


def _probed(run: str) -> Calibration:
    """A copy of 256 MiB in 10 ms (53.7 GB/s moved), a read of it in 5 ms, a 2 µs
    operator, a 1 µs trivial one, and a 10 x 10 projection: 200 FLOPs at one row in 1 µs
    (0.2 GFLOP/s), 20,000 at 100 rows in 10 µs (2 GFLOP/s)."""
    base = _cal(run)
    return Calibration(
        **{k: getattr(base, k) for k in ("run_id", "moment", "copy_bytes", "copy", "step", "sweep", "seconds")},
        read=_est(5e-3),
        dispatch=_est(1e-6),
        operator=_est(2e-6),
        matmuls={("float32", 1): _est(1e-6), ("float32", 100): _est(1e-5)},
        shape=(10, 10),
    )


def _timed(root, name: str, run: str, rows: list[dict]) -> None:
    """A made-up experiment whose one table times a step and declares its prediction."""
    columns = (Column("n"), Column("step_ms", "ms"), *prediction_columns("step"))
    table = Table("steps", "Made-up steps", columns)
    full = [{c.name: r.get(c.name) for c in columns} for r in rows]
    provenance = {**PROVENANCE, "title": name, "run": {**_cal(run).provenance(), "id": run}}
    write_experiment(root, name, Result(tables={"steps": full}), tables=(table,), values=(), provenance=provenance)


@pytest.fixture
def data(tmp_path):
    _timed(
        tmp_path,
        "made_up_1",
        RUN,
        [
            # 1e9 FLOPs on 1e8 bytes in 100 ms: 10 FLOP/byte, 10 GFLOP/s
            {"n": 1, "step_ms": 100.0, "step_predicted_ms": 90.0, "step_flops": 1e9, "step_moved_bytes": 1e8},
            # not placed: no count of its bytes (a step the machine could not run, say)
            {"n": 2, "step_ms": 50.0, "step_predicted_ms": 40.0, "step_flops": 1e9},
        ],
    )
    _timed(
        tmp_path,
        "made_up_2",
        OTHER,
        [{"n": 1, "step_ms": 2.0, "step_predicted_ms": 1.0, "step_flops": 4e6, "step_moved_bytes": 2e6}],
    )
    folder.record(tmp_path, _probed(RUN), None, PROVENANCE)
    folder.record(tmp_path, _probed(OTHER), None, PROVENANCE)
    return SiteData(tmp_path)


def test_a_tables_stems_are_those_it_declares_whole():
    names = [c.name for c in prediction_columns("step")] + ["step_ms", "total_predicted_ms", "total_flops"]
    assert stems(names) == ["step"]  # total lacks its measured time and its bytes
    assert stems(["x_predicted_ms"]) == []


def test_every_step_is_read_from_any_experiment_with_its_run(data):
    steps = sorted(timed_steps(data), key=lambda s: s.experiment)
    assert [(s.experiment, s.table, s.stem, s.run) for s in steps] == [
        ("made_up_1", "steps", "step", RUN),
        ("made_up_2", "steps", "step", OTHER),
    ]
    first = steps[0]
    assert first.intensity == pytest.approx(10.0) and first.achieved_flop_s == pytest.approx(1e10)
    assert steps[1].intensity == pytest.approx(2.0) and steps[1].achieved_flop_s == pytest.approx(2e9)


def test_the_machine_and_its_ceilings_by_hand(data):
    machine = data.table("calibration.machine").frame
    row = machine[machine.run == RUN].iloc[0]
    moved = 2 * (1 << 28)
    assert row.copy_gb_s == pytest.approx(moved / 0.01 / 1e9)
    assert row.read_gb_s == pytest.approx((1 << 28) / 5e-3 / 1e9)
    assert (row.operator_us, row.trivial_us) == (pytest.approx(2.0), pytest.approx(1.0))
    assert row.copy_low_gb_s == pytest.approx(moved / 0.0102 / 1e9)  # the slowest copy of the interval
    ceilings = data.table("calibration.ceilings").frame
    mine = ceilings[ceilings.run == RUN].sort_values("rows")
    assert list(mine.rows) == [1, 100]
    assert list(mine.ceiling_gflops) == [pytest.approx(0.2), pytest.approx(2.0)]
    # the balance: 2 GFLOP/s over 53.7 GB/s; its low end the low ceiling over the high bandwidth
    assert mine.balance_flops_per_byte.iloc[1] == pytest.approx(2e9 / (moved / 0.01))
    assert mine.balance_low_flops_per_byte.iloc[1] == pytest.approx((20000 / 1.02e-5) / (moved / 0.0099))


def test_each_run_gets_its_axes_and_its_steps(data):
    fig = figures.REGISTRY["calibration.roofline"](data)
    assert len(fig.axes) == 2
    for ax, (x, y) in zip(fig.axes, ((10.0, 10.0), (2.0, 2.0)), strict=True):  # GFLOP/s
        placed = [line for line in ax.get_lines() if line.get_linestyle() == "None"]
        assert len(placed) == 1
        assert list(placed[0].get_xdata()) == [pytest.approx(x)] and list(placed[0].get_ydata()) == [pytest.approx(y)]
        memory = ax.get_lines()[0]  # the copy bandwidth's line: y = bandwidth x FLOPs per byte
        xs, ys = memory.get_xdata(), memory.get_ydata()
        assert ys[0] / xs[0] == pytest.approx(2 * (1 << 28) / 0.01 / 1e9)
        labels = [line.get_label() for line in ax.get_lines()]
        assert "float32: compute ceiling, 100 rows" in labels and "float32: one row" in labels
        ceiling = ax.get_lines()[labels.index("float32: compute ceiling, 100 rows")]
        assert list(ceiling.get_ydata()) == [pytest.approx(2.0)] * 2  # 2 GFLOP/s, from its balance point
        assert ceiling.get_xdata()[0] == pytest.approx(2.0 / (2 * (1 << 28) / 0.01 / 1e9))
    plt.close(fig)


def test_with_no_step_placed_the_latest_run_is_drawn(tmp_path):
    _timed(tmp_path, "made_up_1", RUN, [{"n": 1, "step_ms": 1.0}])  # a timing with no counts
    folder.record(tmp_path, _probed(RUN), None, PROVENANCE)
    fig = figures.REGISTRY["calibration.roofline"](SiteData(tmp_path))
    assert len(fig.axes) == 1 and not [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "None"]
    plt.close(fig)
