"""The drift gate's timings: the machine's speed, measured by each run's calibration,
divided out and reported once; then each timing decided three ways against the band,
so that a machine uniformly slower is one line and a slower code path stands out."""

from __future__ import annotations

import json
import shutil

import pytest

from measure import calibration_folder
from measure.check import run_check
from measure.lab.calibration import Calibration
from measure.lab.medians import Estimate
from sitedata.machine_speed import Factor, MachineState, Speed
from sitedata.timing_compare import BAND, compare_timing, direction
from tests.conftest import PROVENANCE, edit_table, write_data

SPREAD = (0.99, 1.0, 1.0, 1.0, 1.01, 1.02)


def test_what_the_machines_speed_scales():
    assert [direction(u) for u in ("ms", "s", "µs", "GB/s", "tokens/s", "x", "fraction", "bytes", "")] == [
        1, 1, 1, -1, -1, 0, 0, 0, 0,
    ]  # fmt: skip


def test_a_machine_uniformly_slower_moves_no_timing_once_its_speed_is_divided_out():
    slower = Factor(1 / 1.12, 0.01)  # the regenerated machine runs at 1/1.12 of the committed one's speed
    assert compare_timing(40.0, 44.8, unit="ms", old_bounds=(39, 41), new_bounds=(43.7, 45.9), speed=slower)[0] == "ok"
    assert compare_timing(25.0, 25 / 1.12, unit="GB/s", speed=slower)[0] == "ok"  # a rate, the other way
    # without the machine's speed, the same cell is a drift of +12 %
    assert compare_timing(40.0, 44.8, unit="ms", old_bounds=(39, 41), new_bounds=(43.7, 45.9))[0] == "drift"


def test_a_code_path_slower_than_the_machine_stands_out():
    same = Factor(1.0, 0.01)
    verdict, words = compare_timing(40.0, 46.0, unit="ms", old_bounds=(39.5, 40.5), new_bounds=(45.4, 46.6), speed=same)
    assert verdict == "drift" and words.startswith("+15.0%")
    faster = compare_timing(40.0, 34.0, unit="ms", old_bounds=(39.5, 40.5), new_bounds=(33.6, 34.4), speed=same)
    assert faster[0] == "drift"  # faster beyond the band is a change too


def test_a_change_near_the_band_cannot_be_told():
    verdict, words = compare_timing(40.0, 43.6, unit="ms", old_bounds=(39, 41), new_bounds=(42.5, 44.7))
    assert verdict == "cannot tell" and f"±{BAND:.0%}" in words  # +9 % with about ±3.6 %: straddles 8 %


def test_a_memory_reading_is_known_within_the_heaps_spread_between_processes():
    # no interval of its own: ±30 % each (ln 1.3 on the log scale), a factor of
    # exp(√2 ln 1.3) = 1.449 together
    moved = compare_timing(100e6, 145e6, unit="bytes")  # +45 %: [+0.1 %, +110.1 %], across the band
    assert moved[0] == "cannot tell" and "+0.1%" in moved[1] and "+110.1%" in moved[1]
    assert compare_timing(100e6, 200e6, unit="bytes")[0] == "drift"  # twice the memory: [+38.0 %, ...]
    assert compare_timing(100e6, 100e6, unit="bytes")[0] == "cannot tell"  # never "held" on one reading
    assert compare_timing(100e6, 145e6, unit="ms")[0] == "drift"  # a time without an interval: ±3 %


def test_a_wide_lopsided_interval_is_judged_on_the_log_scale():
    # an over-prediction of 1.49 [1.05, 2.73] then 3.10 [1.25, 5.65]: the two intervals
    # overlap over most of the first. Half-widths on the log scale, ln(2.73/1.05)/2 = 0.478
    # and ln(5.65/1.25)/2 = 0.754, give a factor of exp(0.893) = 2.44 either way around
    # the change of 2.08: [-15 %, +408 %], which cannot tell. Taken as ±56 % and ±71 % of
    # their medians instead, they gave ±90 %, [+9 %, +296 %]: a drift the data does not show.
    verdict, words = compare_timing(1.49, 3.10, unit="x", old_bounds=(1.05, 2.73), new_bounds=(1.25, 5.65))
    assert verdict == "cannot tell" and "[-14.8%, +408.1%]" in words


def test_a_rise_whose_interval_reaches_zero_is_judged_by_overlap_not_by_ratio():
    # an unchanged regeneration: a step's rise of 0.212 [0.085, 0.251], then 0.083
    # [-0.033, 0.338]; no scale measures a change of something that may be zero, and the
    # two intervals overlap, so it cannot be told (it read as a -61 % drift)
    verdict, words = compare_timing(
        0.212, 0.083, unit="fraction", old_bounds=(0.085, 0.251), new_bounds=(-0.033, 0.338)
    )
    assert verdict == "cannot tell" and "overlapping" in words
    # the same rise known apart from zero in both runs is still judged as a ratio: a drift
    assert compare_timing(0.212, 0.083, unit="fraction", old_bounds=(0.2, 0.22), new_bounds=(0.07, 0.09))[0] == "drift"
    # and intervals apart across zero are a drift
    assert compare_timing(0.212, -0.1, unit="fraction", old_bounds=(0.2, 0.22), new_bounds=(-0.2, -0.05))[0] == "drift"


def test_a_cell_without_an_interval_takes_each_runs_own_typical_width():
    # a rate worked out from a time known within ±50 % in the regenerated run: the ±3 %
    # default calls -30 % a drift ([-32 %, -28 %]); that run's row width beside the other's
    # ±3 %, ln 1.5 and ln 1.03 in quadrature, a factor of 1.50: [-53 %, +5 %], cannot tell
    assert compare_timing(24.0, 16.8, unit="x")[0] == "drift"
    verdict, words = compare_timing(24.0, 16.8, unit="x", typical_half_width=(0.03, 0.5))
    assert verdict == "cannot tell" and "[-53.4%, +5.1%]" in words


def test_a_ratio_of_two_timings_is_not_scaled_by_the_machine():
    slower = Factor(0.5, 0.01)
    assert compare_timing(2.2, 2.2, unit="x", speed=slower)[0] == "ok"


def test_a_run_that_drifted_widens_the_range_by_how_far_its_machine_moved():
    # +15 %, intervals ln(41/39)/2 = 0.0250 and ln(47/45)/2 = 0.0217 on the log scale: a
    # factor of 1.0337 together, a drift on steady machines ([+11.3 %, +18.9 %]); a run that
    # moved 12 % (ln 1.12 = 0.1133) while it ran widens that to a factor of 1.1253:
    # [+2.2 %, +29.4 %], across the band
    steady = compare_timing(40.0, 46.0, unit="ms", old_bounds=(39, 41), new_bounds=(45, 47))
    moved = compare_timing(40.0, 46.0, unit="ms", old_bounds=(39, 41), new_bounds=(45, 47), unsteady=0.12)
    assert steady[0] == "drift" and "[+11.3%, +18.9%]" in steady[1]
    assert moved[0] == "cannot tell" and "[+2.2%, +29.4%]" in moved[1] and "moved" in moved[1]
    # +50 % is more than any such movement explains: [+33.4 %, +68.7 %], still a drift
    verdict, words = compare_timing(40.0, 60.0, unit="ms", old_bounds=(39, 41), new_bounds=(59, 61), unsteady=0.12)
    assert verdict == "drift" and "[+33.4%, +68.7%]" in words
    # and an unchanged timing is never "ok" then: the range is wider than the band
    assert compare_timing(40.0, 40.0, unit="ms", old_bounds=(39, 41), new_bounds=(39, 41), unsteady=0.12)[0] == (
        "cannot tell"
    )
    # a ratio of two interleaved timings does not move with the machine: not widened
    assert (
        compare_timing(2.0, 2.0, unit="x", old_bounds=(1.98, 2.02), new_bounds=(1.98, 2.02), unsteady=0.12)[0] == "ok"
    )


def test_how_far_a_drifted_run_moved_comes_from_its_calibration(tmp_path):
    run = "20260103T000000Z-00000003"
    root = tmp_path / "c"
    write_data(root, "kv_cache", {"t": [{"n": 1}]}, run=_calibration(run).provenance())
    # its end 25 % slower than its start: the step moved +25 %, the bandwidth -20 %
    calibration_folder.record(root, _calibration(run), _calibration(run, slower=1.25, moment="end"), PROVENANCE)
    drifted = MachineState.of(root, run)
    steady = MachineState.of(_folder(tmp_path / "a", "20260101T000000Z-00000001"), "20260101T000000Z-00000001")
    assert drifted.drifted and drifted.movement == pytest.approx(0.25)
    assert not steady.drifted and steady.movement == pytest.approx(0.0)
    assert Speed.between(steady, drifted).unsteady == pytest.approx(0.25)
    assert Speed.between(steady, steady).unsteady == 0.0
    assert "widened by ±25.0%" in Speed.between(steady, drifted).describe()


def _calibration(run: str, *, slower: float = 1.0, moment: str = "start") -> Calibration:
    est = lambda s: Estimate.of([s * slower * f for f in SPREAD], 0.03)  # noqa: E731
    return Calibration(
        run_id=run,
        moment=moment,
        copy_bytes=1 << 28,
        copy=est(0.02),
        step=est(0.03),
        sweep={"missed": []},
        seconds=2.0,
        read=est(0.01),
        dispatch=est(5e-6),
        matmuls={("float32", 1): est(1e-4), ("float32", 1024): est(6e-3)},
        shape=(576, 1536),
    )


def _folder(root, run: str, slower: float = 1.0):
    write_data(root, "kv_cache", {"t": [{"n": 1}]}, run=_calibration(run).provenance())
    start, end = _calibration(run, slower=slower), _calibration(run, slower=slower, moment="end")
    calibration_folder.record(root, start, end, PROVENANCE)
    return root


def test_the_speed_of_one_machine_against_another_from_their_probes(tmp_path):
    old = MachineState.of(_folder(tmp_path / "a", "20260101T000000Z-00000001"), "20260101T000000Z-00000001")
    new = MachineState.of(_folder(tmp_path / "b", "20260102T000000Z-00000002", 1.12), "20260102T000000Z-00000002")
    assert set(old.rates) == {"memory", "compute", "dispatch"}
    speed = Speed.between(old, new)
    for probe in ("memory", "compute", "dispatch"):
        assert speed.factors[probe].value == pytest.approx(1 / 1.12)
    assert speed.overall.value == pytest.approx(1 / 1.12) and not speed.drifted
    line = speed.describe()
    assert line.count("-10.7%") == 4 and "divided out of every timing" in line
    assert MachineState.of(tmp_path / "a", "20990101T000000Z-ffffffff") is None  # a run it does not hold


def _slowed(folder, factor: float) -> None:
    """Every time of an experiment's tables and values ``factor`` times as long, as a machine
    that much slower would have measured them (rates divided, ratios kept)."""
    meta = json.loads((folder / "meta.json").read_text())
    for table, spec in meta["tables"].items():
        scale = {c["name"]: factor ** direction(c["unit"]) for c in spec["columns"] if c["compare"] == "timing"}

        def edit(rows, scale=scale):
            for row in rows[1:]:
                for i, name in enumerate(rows[0]):
                    if scale.get(name, 1) != 1 and row[i] not in ("", "nan"):
                        row[i] = repr(float(row[i]) * scale[name])

        edit_table(folder, table, edit)
    meta = json.loads((folder / "meta.json").read_text())
    for v in meta["values"].values():
        k = factor ** direction(v.get("unit", "")) if v.get("compare") == "timing" else 1
        if k != 1 and isinstance(v["value"], (int, float)) and not isinstance(v["value"], bool):
            v["value"] *= k
    (folder / "meta.json").write_text(json.dumps(meta, indent=2))


def _calm(folder) -> None:
    """Every interval of an experiment's tables ±1 % of its median, and its calibration
    undrifted, as a calm machine measuring long enough would have them (a smoke run samples
    too little to tell anything within 8 %)."""
    meta = json.loads((folder / "meta.json").read_text())
    for table, spec in meta["tables"].items():
        pairs = [(c["name"], *c["noise"]["interval"]) for c in spec["columns"] if c.get("noise", {}).get("interval")]

        def edit(rows, pairs=pairs):
            for row in rows[1:]:
                for name, low, high in pairs:
                    median = row[rows[0].index(name)]
                    if median not in ("", "nan"):
                        row[rows[0].index(low)] = repr(float(median) * 0.99)
                        row[rows[0].index(high)] = repr(float(median) * 1.01)

        edit_table(folder, table, edit)


@pytest.fixture
def runs(smoke_data, tmp_path):
    """A smoke run of kv_cache with its calibration, calmed, as committed and as regenerated."""
    smoke_data / "kv_cache"
    with smoke_data.locked():
        for side in ("committed", "regen"):
            for name in ("kv_cache", "calibration"):
                shutil.copytree(smoke_data.root / name, tmp_path / side / name)
    for side in ("committed", "regen"):
        _calm(tmp_path / side / "kv_cache")
        _calm(tmp_path / side / "calibration")

        def undrifted(rows):
            # every run's row: the shared smoke run may hold other experiments' runs first
            for row in rows[1:]:
                row[rows[0].index("drifted")] = "false"

        edit_table(tmp_path / side / "calibration", "runs", undrifted)
    return tmp_path


def _gate(tmp_path):
    report = tmp_path / "report.json"
    rc = run_check(
        only="kv_cache",
        committed=tmp_path / "committed",
        kinds=("timing",),
        report=report,
        docs=None,
        regenerated=tmp_path / "regen",
        quiet=True,
    )
    return rc, json.loads(report.read_text())


@pytest.mark.smoke
def test_a_machine_twelve_percent_slower_is_reported_once_and_drifts_nothing(runs, capsys):
    _slowed(runs / "regen" / "kv_cache", 1.12)

    def slower_probes(rows):
        header = rows[0]
        for row in rows[1:]:
            for column in ("time_ms", "time_low_ms", "time_high_ms"):
                i = header.index(column)
                row[i] = repr(float(row[i]) * 1.12)

    edit_table(runs / "regen" / "calibration", "roofline", slower_probes)
    rc, report = _gate(runs)
    assert [f for f in report["findings"] if f["verdict"] == "drift"] == []
    (line,) = report["machine_speed"]
    assert "-10.7%" in line
    assert capsys.readouterr().out.count("machine: ") == 1
    undecided = {(f["table"], f["row"], f["column"]) for f in report["findings"]}  # the report lists all but ok

    # The same data, the regenerated calibration showing no slowdown: each of those cells is
    # now a change of +12 % that the gate cannot divide out.
    shutil.rmtree(runs / "regen" / "calibration")
    shutil.copytree(runs / "committed" / "calibration", runs / "regen" / "calibration")
    rc, report = _gate(runs)
    assert rc == 1
    drifted = {(f["table"], f["row"], f["column"]) for f in report["findings"] if f["verdict"] == "drift"}
    assert len(drifted) >= 4 and not drifted & undecided  # each was decided within the band before
    # except where a sweep probed the machine in its own rounds: its predictions slowed with
    # its steps, so its own speed still divides the slowdown out
    assert {table for table, _, _ in drifted} == {"head_step"}


def test_the_brief_report_says_the_machine_once_then_only_what_failed(capsys):
    from measure.check_report import print_brief
    from sitedata.findings import Finding

    findings = [
        Finding(experiment="kv_cache", table="head_step", row=2, column="cached_ms", verdict="ok"),
        Finding(experiment="kv_cache", table="head_step", row=3, column="cached_ms", verdict="cannot tell"),
        Finding(
            experiment="prefill_decode",
            table="decode",
            row=1,
            column="step_ms",
            verdict="drift",
            committed="33.7",
            new="39.0",
            tolerance="+15.7% [+11.2%, +20.4%] against ±8%",
        ),  # fmt: skip
    ]
    summary = {"compared": 3, "cells": 3, "not_comparable": 0}
    print_brief(findings, summary, False, {"the regenerated run's machine ...: overall -1.0%": ["kv_cache"]})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Machine: ") and sum(line.startswith("Machine") for line in out) == 1
    assert "1 within tolerance, 1 drifted, 1 timings that cannot be told" in out[2]
    assert [line for line in out if line.startswith("- ")] == [
        "- drift: prefill_decode.decode row 1 step_ms: 33.7 -> 39.0 +15.7% [+11.2%, +20.4%] against ±8%"
    ]
    assert out[-1] == "Failed: 1 finding(s)."


def test_a_value_across_zero_is_decided_on_its_two_intervals():
    same = Factor(1.0, 0.01)
    # a difference of two timings, +0.1 ms then -0.1 ms: no ratio measures that change
    verdict, words = compare_timing(0.1, -0.1, unit="ms", speed=same)
    assert verdict == "cannot tell" and "no interval" in words
    assert compare_timing(0.0, 0.0, unit="ms", speed=same)[0] == "ok"
    overlapping = compare_timing(0.1, -0.1, unit="ms", old_bounds=(-0.5, 0.6), new_bounds=(-0.7, 0.4), speed=same)
    assert overlapping[0] == "cannot tell" and "overlapping" in overlapping[1]
    apart = compare_timing(2.0, -2.0, unit="ms", old_bounds=(1.5, 2.5), new_bounds=(-2.5, -1.5), speed=same)
    assert apart[0] == "drift" and "apart" in apart[1]
    # the regenerated interval is scaled by the machine's speed first: [-0.3, 0.6] on a
    # machine at half the speed is [-0.15, 0.3] on the committed one's, which misses [0.4, 0.8]
    slower = Factor(0.5, 0.01)
    assert compare_timing(0.6, -0.1, unit="ms", old_bounds=(0.4, 0.8), new_bounds=(-0.3, 0.6), speed=slower)[0] == (
        "drift"
    )
    # a run whose machine moved 12 % widens the regenerated interval by that too: [-0.2, 0.9]
    # misses [0.95, 1.05] on steady machines; widened by 13 % (12 + the speed's 1) it reaches 1.017
    apart = dict(old_bounds=(0.95, 1.05), new_bounds=(-0.2, 0.9), speed=same)
    assert compare_timing(1.0, -0.1, unit="ms", **apart)[0] == "drift"
    moved = compare_timing(1.0, -0.1, unit="ms", unsteady=0.12, **apart)
    assert moved[0] == "cannot tell" and "1.017" in moved[1] and "moved" in moved[1]
    # intervals further apart than any such movement: still a drift
    far = compare_timing(2.0, -2.0, unit="ms", old_bounds=(1.5, 2.5), new_bounds=(-2.5, -1.5), speed=same,
                         unsteady=0.12)  # fmt: skip
    assert far[0] == "drift"
    # bounds that do not hold their value are no interval
    assert "no interval" in compare_timing(2.0, -2.0, unit="ms", old_bounds=(2.5, 3.0), new_bounds=(-2.5, -1.5),
                                           speed=same)[1]  # fmt: skip


def test_the_machines_own_terms_and_the_rooflines_predictions_are_the_machine():
    from sitedata.timing_compare import machine_model

    machine = ("split_round_gb_s", "decode_round_operator_high_us", "floor_ms", "floor_low_ms", "one_row_gflops_low",
               "balance_high_flops_per_byte", "bandwidth_gb_s", "split_ratio_predicted", "step_rise_predicted_low",
               "compiled_step_fixed_ms", "step_predicted_high_ms", "step_bound",
               # a step over one of the machine's terms: the step is compared instead
               "fraction_of_floor", "kernel_fp32_fraction_of_floor_low", "compiled_fraction_smallest", "fixed_share",
               "matmul_read_share")  # fmt: skip
    measured = ("step_ms", "matmul_read_gb_s", "fraction_of_prefill", "breakdown_other_share",
                "split_ratio", "step_over_predicted", "settings_other_over_predicted_low", "predicted_run_speedup",
                "best_predicted_speedup", "throughput_tok_s")  # fmt: skip
    assert [n for n in machine if machine_model(n) is None] == []
    assert [n for n in measured if machine_model(n) is not None] == []


def test_every_machine_term_the_gate_names_is_declared():
    """A name the gate passes over must be one the code declares, or a renamed term would
    silently be compared again."""
    from measure.registry import EXPERIMENTS, load
    from sitedata.timing_compare import MACHINE_TERM_SUFFIXES, MACHINE_TERMS, OF_A_TERM, OF_THE_FLOOR

    names = set()
    for name in EXPERIMENTS:
        module = load(name)
        names |= {v.name for v in module.VALUES} | {c.name for t in module.TABLES for c in t.columns}
    assert [t for t in MACHINE_TERMS + OF_A_TERM if t not in names] == []
    assert [s for s in MACHINE_TERM_SUFFIXES + OF_THE_FLOOR if not any(n.endswith(s) for n in names)] == []


def test_what_was_read_under_the_profiler_is_left_to_the_step_it_decomposes():
    from sitedata.timing_compare import profiled

    assert profiled("self_ms", "breakdown") and profiled("share", "breakdown")
    assert profiled("matmul_ms", "decode_kernels") and profiled("matmul_low_ms", "decode_kernels")
    assert profiled("breakdown_rise_concat_ms") and profiled("matmul_read_gb_s") and profiled("profiled_step_ms")
    assert not profiled("step_ms", "decode") and not profiled("matmul_ms", "decode") and not profiled("step_rise")


def test_every_profiled_name_the_gate_names_is_declared():
    from measure.registry import EXPERIMENTS, load
    from sitedata.timing_compare import PROFILED_COLUMNS, PROFILED_PREFIX, PROFILED_TABLES, PROFILED_VALUES

    modules = [load(name) for name in EXPERIMENTS]
    values = {v.name for m in modules for v in m.VALUES}
    columns = {(t.name, c.name) for m in modules for t in m.TABLES for c in t.columns}
    assert [v for v in PROFILED_VALUES if v not in values] == []
    assert [c for c in PROFILED_COLUMNS if c not in columns] == []
    assert set(PROFILED_TABLES) <= {t for t, _ in columns}
    assert any(v.startswith(PROFILED_PREFIX) for v in values)
