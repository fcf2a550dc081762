"""The drift gate's comparison (sitedata/compare.py) on hand-made runs: each tolerance
at its edge, each scope, and every way a run can differ from the committed one."""

import dataclasses

import pytest

from sitedata.cell_compare import _table_rel_noise, compare_cell
from sitedata.compare import Declared, compare_experiment, run_gap, scope_gap
from sitedata.declared import declaration_findings
from sitedata.policies import TIMING, named
from sitedata.read import Experiment
from sitedata.schema import Column, Table, Value, interval_columns, interval_names


def _meta(**where) -> dict:
    return {
        "title": "E",
        "device": {"type": where.get("type", "cpu"), "id": where.get("machine", "cpu:A:2")},
        "dtype": where.get("dtype", "float32"),
        "profile": where.get("profile", "cpu"),
        "parameters": where.get("parameters", {"n": 1}),
        "model": {"spec": where.get("spec", "default")},
        "tables": {},
        "values": {},
    }


def _run(tables: dict, values: dict | None = None, **where) -> Experiment:
    """``tables``: name -> (columns as (name, compare, scope[, spread column]), rows as
    lists of strings); ``values``: name -> (value, compare, scope)."""
    meta = _meta(**where)
    texts = {}
    for name, (columns, rows) in tables.items():
        cols = [Column(c, policy=named(k, s), spread="".join(spread)).as_meta() for c, k, s, *spread in columns]
        meta["tables"][name] = {"title": name.upper(), "description": "", "columns": cols}
        texts[name] = "\n".join(",".join(r) for r in [[c[0] for c in columns], *rows]) + "\n"
    for name, (value, compare, scope) in (values or {}).items():
        meta["values"][name] = {"value": value, **Value(name, policy=named(compare, scope)).as_meta()}
    return Experiment(name="exp", folder=None, meta=meta, texts=texts)


def _code(run: Experiment) -> Declared:
    """The code a hand-made committed run came from: what its meta.json declares."""
    meta = run.meta
    tables = tuple(
        Table(
            name,
            t["title"],
            tuple(
                Column(
                    c["name"],
                    c["unit"],
                    c["label"] if c["label"] != c["name"] else "",
                    policy=named(c["compare"], c["scope"]),
                    description=c["description"],
                    words=c["words"],
                    spread=c["noise"].get("spread", ""),
                )
                for c in t["columns"]
            ),
            t.get("length", "fixed"),
            description=t["description"],
        )
        for name, t in meta["tables"].items()
    )
    values = tuple(
        Value(n, v["unit"], policy=named(v["compare"], v["scope"]), description=v["description"], words=v["words"])
        for n, v in meta["values"].items()
    )
    return Declared(meta["title"], tables, values, meta["parameters"], meta["dtype"])


def _compare(committed: Experiment, new: Experiment, **kw) -> list:
    return compare_experiment(committed, new, code=_code(committed), **kw)


def test_exact_is_character_for_character():
    assert compare_cell("exact", "1.0", "1.0") == (True, "equal")
    assert compare_cell("exact", "1.0", "1") == (False, "equal")
    assert compare_cell("exact", 2, "2") == (True, "equal")


def test_numeric_tolerance_is_relative_to_the_larger_value():
    # 1e-3 x max(1000, 999) + 1e-12 = 1.000000000001: a difference of 1 passes both ways
    assert compare_cell("numeric", "1000", "999")[0]
    assert compare_cell("numeric", "999", "1000")[0]
    assert compare_cell("numeric", "-1000", "-999")[0]
    assert not compare_cell("numeric", "1000", "998.99")[0]  # 1.01 > 1.00000000
    ok, tol = compare_cell("numeric", "1000", "1001")
    assert ok and tol == "±1 (rel 0.001)"  # 1e-3 x 1001 = 1.001, shown to 3 figures
    assert compare_cell("numeric", "0", "0")[0]
    assert compare_cell("numeric", "0", "1e-12")[0] and not compare_cell("numeric", "0", "1e-11")[0]


def test_values_that_are_not_numbers():
    assert compare_cell("numeric", "n/a", "n/a") == (True, "equal (not a number)")
    assert compare_cell("timing", "n/a", "1") == (False, "equal (not a number)")
    assert compare_cell("numeric", True, True) == (True, "equal (not a number)")  # a bool is no number
    assert compare_cell("numeric", "nan", "nan") == (True, "both NaN")
    assert compare_cell("numeric", "nan", "1") == (False, "both NaN")
    assert compare_cell("timing", "1", "nan") == (False, "both NaN")


def test_timing_against_the_two_spreads():
    # 3 x max(5, 3) + 10% of 100 = 25
    assert compare_cell("timing", "100", "125", spread_old=5, spread_new=3) == (True, "±25 (3×spread + 10%)")
    assert not compare_cell("timing", "100", "125.01", spread_old=5, spread_new=3)[0]
    assert compare_cell("timing", "100", "75", spread_old=3, spread_new=5)[0]  # the larger spread, either side
    assert compare_cell("timing", "100", "116", spread_old=None, spread_new=2)[0]  # 3 x 2 + 10 = 16
    assert not compare_cell("timing", "100", "116.5", spread_old=None, spread_new=2)[0]
    assert compare_cell("timing", "100", "110", spread_old=0, spread_new=None)[0]  # the 10 % floor
    assert not compare_cell("timing", "100", "110.5", spread_old=0, spread_new=None)[0]


def test_timing_without_a_spread_uses_the_table_noise():
    # 3 x 5 % = 15 % beats the 10 % floor
    assert compare_cell("timing", "100", "115", table_rel_noise=0.05) == (True, "±15% (table noise)")
    assert not compare_cell("timing", "100", "115.5", table_rel_noise=0.05)[0]
    assert compare_cell("timing", "100", "110", table_rel_noise=0.01) == (True, "±10% (table noise)")
    assert not compare_cell("timing", "100", "111", table_rel_noise=None)[0]
    assert compare_cell("timing", "-100", "-110")[0]


def _timings(*names: str, **spreads: str) -> Table:
    return Table("t", "T", tuple(Column(n, policy=TIMING, spread=spreads.get(n, "")) for n in names))


def test_table_noise_comes_from_the_declared_spreads():
    rows = [
        {"a_ms": "100", "a_spread_ms": "10"},  # 0.1
        {"a_ms": "200", "a_spread_ms": "10"},  # 0.05
        {"a_ms": "0", "a_spread_ms": "5"},  # no value: left out
        {"a_ms": "400", "a_spread_ms": "x"},  # no spread: left out
    ]
    assert _table_rel_noise(rows, _timings("a_ms", "a_spread_ms", a_ms="a_spread_ms")) == pytest.approx(0.075)
    assert _table_rel_noise(rows, _timings("a_ms", "a_spread_ms")) is None  # named by no column: no spread


def test_scopes():
    cpu, gpu = _meta(), _meta(type="cuda", dtype="float16", machine="cuda:H200")
    other_cpu = _meta(machine="cpu:B:2")
    assert scope_gap("any", cpu, gpu) == ""
    assert scope_gap("device", cpu, other_cpu) == ""
    assert scope_gap("device", cpu, gpu) == (
        "reproduces on the same device type and dtype only: committed on cpu float32, regenerated on cuda float16"
    )
    assert scope_gap("machine", cpu, cpu) == ""
    assert scope_gap("machine", cpu, other_cpu) == (
        "reproduces on the same machine only: committed on cpu:A:2, regenerated on cpu:B:2"
    )


def test_a_regenerated_run_that_is_no_rerun_of_the_committed_one_fails():
    old = _run({})
    code = _code(old)
    assert run_gap(old, _run({}), code) == []

    def gap(**where):
        return [(f.verdict, f.column, f.committed, f.new, f.reason) for f in run_gap(old, _run({}, **where), code)]

    no_rerun = "it is no rerun of the committed data, whose cells go uncompared"
    assert gap(profile="full") == [
        (
            "drift",
            "profile",
            "cpu",
            "full",
            f"the regenerated run measured another profile than the committed run: {no_rerun}",
        )
    ]
    assert gap(spec="arch:tiny") == [
        (
            "drift",
            "model",
            "default",
            "arch:tiny",
            f"the regenerated run measured another model than the committed run: {no_rerun}",
        )
    ]
    assert gap(parameters={"n": 2}) == [
        (
            "drift",
            "parameters",
            {"n": 1},
            {"n": 2},
            f"the regenerated run ran other parameters than the code's Config gives for profile 'cpu': {no_rerun}",
        )
    ]
    # The code's parameters, not the committed run's own, are the ones a rerun must have.
    lying = _run({}, parameters={"n": 7})
    assert run_gap(lying, _run({}), code) == []


COLUMNS = [("name", "exact", "any"), ("bytes", "numeric", "device"), ("x_ms", "timing", "machine")]


def test_one_drifted_cell_is_found_and_only_it():
    old = _run({"t": (COLUMNS, [["a", "1000", "10"], ["b", "2000", "20"]])})
    new = _run({"t": (COLUMNS, [["a", "1000.5", "10.5"], ["b", "2100", "20"]])})
    findings = _compare(old, new)
    verdicts = {(f.row, f.column): f.verdict for f in findings}
    assert verdicts == {
        (0, "name"): "ok",
        (1, "name"): "ok",
        (0, "bytes"): "ok",
        (1, "bytes"): "drift",  # 100 > 2.1
        (0, "x_ms"): "ok",
        (1, "x_ms"): "ok",
    }
    drift = next(f for f in findings if f.verdict == "drift")
    assert (drift.committed, drift.new, drift.compare, drift.scope) == ("2000", "2100", "numeric", "device")


def test_scopes_and_kinds_decide_what_is_compared():
    old = _run({"t": (COLUMNS, [["a", "1", "10"]])})
    new = _run({"t": (COLUMNS, [["b", "2", "99"]])}, machine="cpu:B:2")
    verdict = {f.column: (f.verdict, f.reason) for f in _compare(old, new, kinds=("exact", "numeric"))}
    assert verdict["name"] == ("drift", "")
    assert verdict["bytes"][0] == "drift"  # same device type and dtype: compared
    assert verdict["x_ms"] == ("not compared", "timing not selected in this check (--kinds exact,numeric)")
    verdict = {f.column: f.verdict for f in _compare(old, new)}
    assert verdict["x_ms"] == "not comparable"  # another machine
    other_model = _run({"t": (COLUMNS, [["b", "2", "99"]])}, spec="arch:tiny")
    assert [(f.table, f.column, f.verdict) for f in _compare(old, other_model)] == [("meta", "model", "drift")]


def test_missing_tables_and_changed_shapes():
    old = _run({"t": (COLUMNS, [["a", "1", "10"]]), "u": (COLUMNS, [["a", "1", "10"]])})
    new = _run({"t": (COLUMNS, [["a", "1", "10"], ["b", "1", "10"]])})
    by_table = {f.table: f for f in _compare(old, new) if f.row is None}
    assert by_table["u"].verdict == "drift" and by_table["u"].reason == "the regenerated run did not produce this table"
    assert by_table["t"].verdict == "drift" and by_table["t"].reason == "table shape changed"
    assert by_table["t"].committed == "1 rows x ['name', 'bytes', 'x_ms']"
    on_gpu = _run({"t": (COLUMNS, [["a", "1", "10"], ["b", "1", "10"]])}, type="cuda", dtype="float16")
    shape = next(f for f in _compare(old, on_gpu) if f.table == "t")
    assert shape.verdict == "not comparable" and shape.reason.startswith("table shape changed; reproduces on")


def test_a_table_whose_length_timings_set_is_compared_on_the_rows_both_runs_have():
    old = _run({"t": (COLUMNS, [["a", "1", "10"], ["b", "2", "10"], ["c", "3", "10"]])})
    old.meta["tables"]["t"]["length"] = "timing"
    shorter = _run({"t": (COLUMNS, [["a", "1", "10"], ["b", "2", "10"]])})
    findings = _compare(old, shorter)
    (whole,) = [f for f in findings if f.row is None]
    assert whole.verdict == "not comparable" and whole.committed == "3 rows" and whole.new == "2 rows"
    assert (whole.experiment, whole.table) == ("exp", "t")
    assert whole.reason == "rows after the first 2 are set by timings on the measuring machine"
    assert {f.row for f in findings if f.row is not None} == {0, 1}
    assert {f.verdict for f in findings if f.compare == "exact"} == {"ok"}
    # The rows both have still drift when they differ, and a fixed-length table keeps its rule.
    changed = _run({"t": (COLUMNS, [["a", "1", "10"], ["b", "5", "10"]])})
    assert [f.row for f in _compare(old, changed) if f.verdict == "drift"] == [1]
    del old.meta["tables"]["t"]["length"]
    assert [f.reason for f in _compare(old, shorter)] == ["table shape changed"]


def test_named_values():
    values = {
        "ratio": (2.0, "numeric", "any"),
        "list": ([1.0, 2.0], "numeric", "any"),
        "samples": ([1.0, 2.0], "timing", "machine"),
        "gone": (1, "exact", "any"),
        "short": ([1, 2], "exact", "any"),
    }
    old = _run({}, values)
    new = _run(
        {},
        {
            "ratio": (2.001, "numeric", "any"),
            "list": ([1.0, 2.1], "numeric", "any"),
            "samples": ([5.0, 6.0], "timing", "machine"),
            "short": ([1], "exact", "any"),
        },
    )
    got = {f.column: f for f in _compare(old, new)}
    assert got["ratio"].verdict == "ok" and got["ratio"].tolerance.endswith("(rel 0.001)")
    assert got["list"].verdict == "drift"  # 2.1 against 2.0
    assert (got["samples"].verdict, got["samples"].reason) == (
        "not compared",
        "raw timing samples are kept, not compared",
    )
    assert (got["gone"].verdict, got["gone"].reason) == ("drift", "value not produced")
    # no tolerance was applied to a value not produced or to raw samples, and none is named
    assert got["gone"].tolerance == "" and got["samples"].tolerance == ""
    assert (got["short"].verdict, got["short"].tolerance) == ("drift", "same length")
    same = _compare(old, _run({}, {**values}))
    assert {f.column: f.verdict for f in same} == {
        "ratio": "ok",
        "list": "ok",
        "samples": "not compared",
        "gone": "ok",
        "short": "ok",
    }
    elsewhere = {f.column: f for f in _compare(old, _run({}, values, machine="cpu:B:2"))}
    assert (elsewhere["samples"].verdict, elsewhere["samples"].tolerance) == ("not comparable", "")


def test_nan_cells_compare_as_equal_only_to_nan():
    old = _run({"t": ([("v", "numeric", "any")], [["nan"], ["1"]])})
    new = _run({"t": ([("v", "numeric", "any")], [["nan"], ["nan"]])})
    assert [f.verdict for f in _compare(old, new)] == ["ok", "drift"]


def test_every_field_of_every_finding_by_hand():
    cols = [
        ("name", "exact", "any"),
        ("bytes", "numeric", "device"),
        ("x_ms", "timing", "machine", "x_spread_ms"),
        ("x_spread_ms", "timing", "machine"),
        ("y_ms", "timing", "machine"),
    ]
    old = _run(
        {"t": (cols, [["a", "1000", "100", "10", "50"], ["b", "2000", "200", "40", "60"]])},
        {"v": (2.0, "numeric", "any")},
    )
    new = _run(
        {"t": (cols, [["a", "1000", "125", "5", "56"], ["b", "2100", "200", "50", "75"]])},
        {"v": (2.0, "numeric", "any")},
    )
    # The table's noise is the median of 10/100 and 40/200, 15 %: a timing column with no
    # spread of its own may move 3 x 15 % = 45 %. x_ms row 0 may move 3 x 10 + 10 % x 100.

    def f(row, column, compare, scope, committed, new, verdict, tolerance):
        return {
            "experiment": "exp",
            "table": "t",
            "verdict": verdict,
            "row": row,
            "column": column,
            "compare": compare,
            "scope": scope,
            "committed": committed,
            "new": new,
            "tolerance": tolerance,
            "reason": "",
        }

    assert [x.as_dict() for x in _compare(old, new)] == [
        f(0, "name", "exact", "any", "a", "a", "ok", "equal"),
        f(1, "name", "exact", "any", "b", "b", "ok", "equal"),
        f(0, "bytes", "numeric", "device", "1000", "1000", "ok", "±1 (rel 0.001)"),
        f(1, "bytes", "numeric", "device", "2000", "2100", "drift", "±2.1 (rel 0.001)"),
        f(0, "x_ms", "timing", "machine", "100", "125", "ok", "±40 (3×spread + 10%)"),
        f(1, "x_ms", "timing", "machine", "200", "200", "ok", "±170 (3×spread + 10%)"),  # the new spread, 50
        f(0, "x_spread_ms", "timing", "machine", "10", "5", "drift", "±45% (table noise)"),
        f(1, "x_spread_ms", "timing", "machine", "40", "50", "ok", "±45% (table noise)"),
        f(0, "y_ms", "timing", "machine", "50", "56", "ok", "±45% (table noise)"),
        f(1, "y_ms", "timing", "machine", "60", "75", "ok", "±45% (table noise)"),
        {
            "experiment": "exp",
            "table": "values",
            "verdict": "ok",
            "row": None,
            "column": "v",
            "compare": "numeric",
            "scope": "any",
            "committed": 2.0,
            "new": 2.0,
            "tolerance": "±0.002 (rel 0.001)",
            "reason": "",
        },
    ]


def test_findings_of_tables_that_cannot_be_compared_by_hand():
    cols = [("n", "exact", "any")]
    old = _run({"t": (cols, [["1"], ["2"]]), "gone": (cols, [["1"]])}, {"v": ([1, 2], "exact", "any")})
    new = _run({"t": (cols, [["1"], ["2"], ["3"]])}, {"v": ([1, 2], "exact", "any")})
    assert [x.as_dict() for x in _compare(old, new)] == [
        {
            "experiment": "exp",
            "table": "t",
            "verdict": "drift",
            "row": None,
            "column": None,
            "compare": "",
            "scope": "",
            "committed": "2 rows x ['n']",
            "new": "3 rows x ['n']",
            "tolerance": "same shape",
            "reason": "table shape changed",
        },
        {
            "experiment": "exp",
            "table": "gone",
            "verdict": "drift",
            "row": None,
            "column": None,
            "compare": "",
            "scope": "",
            "committed": "present",
            "new": "absent",
            "tolerance": "",
            "reason": "the regenerated run did not produce this table",
        },
        {
            "experiment": "exp",
            "table": "values",
            "verdict": "ok",
            "row": None,
            "column": "v",
            "compare": "exact",
            "scope": "any",
            "committed": [1, 2],
            "new": [1, 2],
            "tolerance": "equal",
            "reason": "",
        },
    ]
    # Another sweep: no cell is compared, and that fails (it used to pass as "not comparable").
    other = _run({"t": (cols, [["1"]]), "gone": (cols, [["1"]])}, {"v": ([1, 2], "exact", "any")}, profile="full")
    found = _compare(old, other)
    assert [(x.table, x.row, x.column, x.verdict, x.committed, x.new) for x in found] == [
        ("meta", None, "profile", "drift", "cpu", "full"),
    ]


def test_an_empty_list_value_compares_as_equal_with_no_tolerance():
    old = _run({}, {"v": ([], "numeric", "any")})
    (got,) = _compare(old, _run({}, {"v": ([], "numeric", "any")}))
    assert (got.verdict, got.tolerance) == ("ok", "")


def test_table_noise_skips_what_it_cannot_use():
    # a column without a spread is skipped, not the end of the search; a zero value and
    # a value of exactly 1 are values like any other
    rows = [
        {"plain_ms": "5", "a_ms": "1", "a_spread_ms": "0.5"},
        {"plain_ms": "5", "a_ms": "0", "a_spread_ms": "1"},
    ]
    assert _table_rel_noise(rows, _timings("plain_ms", "a_ms", "a_spread_ms", a_ms="a_spread_ms")) == 0.5


def test_a_spread_is_the_declared_one_whatever_the_names_say():
    # total_ms names no spread, so spread_ms is not its spread (version 2's naming rule
    # made it one): it gets the table's noise, 3 x 1/100 under the 10 % floor, and drifts.
    cols = [("total_ms", "timing", "machine"), ("spread_ms", "timing", "machine")]
    cols += [("a_ms", "timing", "machine", "b_ms"), ("b_ms", "timing", "machine")]
    old = _run({"t": (cols, [["100", "50", "100", "1"]])})
    new = _run({"t": (cols, [["140", "50", "112", "1"]])})
    verdicts = {f.column: (f.verdict, f.tolerance) for f in _compare(old, new, kinds=("timing",))}
    assert verdicts["total_ms"] == ("drift", "±10% (table noise)")
    assert verdicts["a_ms"] == ("ok", "±13 (3×spread + 10%)")


def test_a_missing_table_does_not_stop_the_others_being_compared():
    cols = [("n", "exact", "any")]
    old = _run({"gone": (cols, [["1"]]), "t": (cols, [["1"]])})
    found = _compare(old, _run({"t": (cols, [["2"]])}))
    assert [(x.table, x.verdict) for x in found] == [("gone", "drift"), ("t", "drift")]


def _lies(committed: Experiment, code: Declared) -> list[tuple]:
    return [(f.verdict, f.column, f.committed, f.new) for f in declaration_findings(committed, code)]


def test_the_data_must_declare_what_the_code_declares():
    honest = _run({"t": (COLUMNS, [["a", "1", "10"]])}, {"v": (2.0, "numeric", "any")})
    code = _code(honest)
    assert declaration_findings(honest, code) == []
    for key, lie in [("compare", "timing"), ("scope", "machine"), ("unit", "ms"), ("label", "B"), ("description", "?")]:
        run = _run({"t": (COLUMNS, [["a", "1", "10"]])}, {"v": (2.0, "numeric", "any")})
        run.meta["tables"]["t"]["columns"][1][key] = lie
        run.meta["values"]["v"][key] = lie  # a value has no label: that lie is no declaration
        column, *value = declaration_findings(run, code)
        assert (column.verdict, column.table, column.column, column.committed) == ("invalid", "meta", "t.bytes", lie)
        assert column.reason == (
            f"site_data/exp/meta.json declares column t.bytes {key} {lie!r}, "
            f"the code declares {code.tables[0].columns[1].as_meta()[key]!r}"
        )
        assert [(f.verdict, f.column, f.committed) for f in value] == (
            [] if key == "label" else [("invalid", "values.v", lie)]
        )
    run = _run({"t": (COLUMNS, [["a", "1", "10"]])}, {"v": (2.0, "numeric", "any")}, parameters={"n": 2})
    run.meta["title"], run.meta["dtype"] = "Other", "float16"
    run.meta["tables"]["t"]["length"] = "timing"
    run.meta["tables"]["t"]["title"] = "T, shorter"
    assert _lies(run, code) == [
        ("invalid", "title", "Other", "E"),
        ("invalid", "parameters", {"n": 2}, {"n": 1}),
        ("invalid", "dtype", "float16", "float32"),
        ("invalid", "t", "timing", "fixed"),
        ("invalid", "t", "T, shorter", "T"),
    ]


def test_what_format_3_added_is_held_against_the_code_where_the_data_was_written_in_it():
    cols = [("name", "exact", "any"), ("x_ms", "timing", "machine", "s_ms"), ("s_ms", "timing", "machine")]
    code = _code(_run({"t": (cols, [["a", "10", "1"]])}, {"v": ("b", "exact", "any")}))
    run = _run({"t": (cols, [["a", "10", "1"]])}, {"v": ("b", "exact", "any")})
    run.meta["tables"]["t"]["columns"][0]["words"] = True
    run.meta["tables"]["t"]["columns"][1]["noise"] = {}
    run.meta["values"]["v"]["words"] = True
    run.meta["tables"]["t"]["description"] = "?"
    assert _lies(run, code) == [
        ("invalid", "t.name", True, False),
        ("invalid", "t.x_ms", {}, {"spread": "s_ms"}),
        ("invalid", "t", "?", ""),
        ("invalid", "values.v", True, False),
    ]
    # Format 2 stated none of them: the reader's migration inferred them, by version 2's rules.
    assert _lies(dataclasses.replace(run, written_version=2), code) == []


def test_what_the_code_declares_and_the_data_lacks_is_missing():
    code = _code(_run({"t": (COLUMNS, [["a", "1", "10"]]), "u": (COLUMNS[:1], [["a"]])}, {"v": (1, "exact", "any")}))
    # A table, a value and a column gone; a table, a value and a column the code never declared.
    run = _run({"t": (COLUMNS[:2], [["a", "1"]]), "w": (COLUMNS[:1], [["a"]])}, {"x": (1, "exact", "any")})
    assert _lies(run, code) == [
        ("missing", "t", ["name", "bytes"], ["name", "bytes", "x_ms"]),
        ("missing", "t", ["name", "bytes"], ["name", "bytes", "x_ms"]),
        ("missing", "u", "(absent)", "declared"),
        ("invalid", "w", "present", "(absent)"),
        ("missing", "values.v", "(absent)", "declared"),
        ("invalid", "values.x", "present", "(absent)"),
    ]
    # Columns in another order; a CSV that lacks a column its meta.json lists, a short
    # row, and a table with no rows at all.
    run = _run({"t": (COLUMNS[::-1], [["10", "1", "a"]]), "u": (COLUMNS[:1], [])}, {"v": (1, "exact", "any")})
    assert [f[0:2] for f in _lies(run, code)] == [("invalid", "t"), ("invalid", "t"), ("missing", "u")]
    run = _run(
        {"t": (COLUMNS, [["a", "1", "10"], ["b", "2"]]), "u": (COLUMNS[:1], [["a"]])}, {"v": (1, "exact", "any")}
    )
    run.texts["u"] = "other\na\n"
    assert _lies(run, code) == [
        ("missing", "t", "2 fields", "3 fields"),
        ("missing", "u", ["other"], ["name"]),
    ]


def test_the_code_decides_how_a_cell_is_compared_and_where():
    code = _code(_run({"t": (COLUMNS, [["a", "1", "10"]])}))
    lying = _run({"t": ([("name", "timing", "machine"), *COLUMNS[1:]], [["b", "1", "10"]])})
    lying.meta["device"]["id"] = "cpu:elsewhere"
    found = compare_experiment(lying, _run({"t": (COLUMNS, [["a", "1", "10"]])}), code=code, kinds=("exact",))
    assert [
        (f.verdict, f.table, f.column, f.compare, f.scope) for f in found if f.verdict not in ("ok", "not compared")
    ] == [
        ("invalid", "meta", "t.name", "", ""),
        ("invalid", "meta", "t.name", "", ""),
        ("drift", "t", "name", "exact", "any"),
    ]


def test_rows_that_differ_between_devices_still_hold_the_same_any_scope_cells():
    cols = [("model", "exact", "any"), ("dtype", "exact", "device"), ("bytes", "exact", "device")]
    on_cpu = [["a", "float16", "2"], ["a", "float32", "4"], ["b", "float16", "2"], ["b", "float32", "4"]]
    old = _run({"t": (cols, on_cpu)}, type="cuda", dtype="float16")
    on_gpu = _run({"t": (cols, [["a", "float16", "2"], ["b", "float16", "2"]])})
    found = _compare(old, on_gpu)
    assert [(f.verdict, f.row, f.column, f.committed, f.new) for f in found] == [
        ("not comparable", None, None, "4 rows x ['model', 'dtype', 'bytes']", "2 rows x ['model', 'dtype', 'bytes']"),
        ("ok", 0, "model", "a", "a"),
        ("ok", 1, "model", "a", "a"),
        ("ok", 2, "model", "b", "b"),
        ("ok", 3, "model", "b", "b"),
    ]
    assert found[0].reason.startswith("table shape changed; reproduces on the same device type and dtype only")
    # A row deleted, or one that no regeneration holds, is drift.
    old = _run({"t": (cols, on_cpu[:2] + [["c", "float32", "4"]])}, type="cuda", dtype="float16")
    found = [(f.verdict, f.row, f.committed, f.new, f.reason) for f in _compare(old, on_gpu) if f.verdict == "drift"]
    assert found == [
        ("drift", 2, "c", None, "no regenerated row holds these any-scope cells"),
        ("drift", None, None, "b", "regenerated row 1's any-scope cells stand in no committed row"),
    ]


def test_tables_the_declarations_fail_are_passed_over_and_the_others_compared():
    """A table the committed data lacks or holds with other columns has its failing
    finding of the declarations and no cell; the tables after it are still compared, and
    a reshaped table adds its finding to the others'."""
    one = [("n", "exact", "any")]
    code = _code(
        _run(
            {"s": (one, [["1"]]), "t": (COLUMNS, [["a", "1", "10"]]), "u": (one, [["1"]]), "w": (one, [["1"]])},
            {"v": (1, "exact", "any")},
        )
    )
    committed = _run(
        {"t": (COLUMNS[:2], [["a", "1"]]), "u": (one, [["1"]]), "w": (one, [["1"]])}, {"v": (1, "exact", "any")}
    )
    new = _run(
        {"t": (COLUMNS[:2], [["a", "1"]]), "u": (one, [["2"]]), "w": (one, [["1"], ["2"]])}, {"v": (1, "exact", "any")}
    )
    found = [(f.verdict, f.table, f.row, f.column) for f in compare_experiment(committed, new, code=code)]
    assert found == [
        ("missing", "meta", None, "s"),  # the committed data lacks s
        ("missing", "meta", None, "t"),  # and holds t without x_ms: in its meta.json and its CSV
        ("missing", "meta", None, "t"),
        ("drift", "u", 0, "n"),
        ("drift", "w", None, None),  # 1 row against 2
        ("ok", "values", None, "v"),
    ]


def _interval_run(rows: list[list[str]]) -> tuple[Experiment, Declared]:
    """A run of one table: a median with its 95 % interval and sample count."""
    table = Table("t", "T", interval_columns("step_ms", "ms"))
    meta = _meta()
    meta["tables"]["t"] = {"title": "T", "description": "", "columns": [c.as_meta() for c in table.columns]}
    text = "\n".join(",".join(r) for r in [list(table.column_names), *rows]) + "\n"
    run = Experiment(name="exp", folder=None, meta=meta, texts={"t": text})
    return run, Declared("E", (table,), (), {"n": 1}, "float32")


def test_a_median_is_held_within_its_interval_and_its_bounds_are_not_compared():
    # step_ms, step_low_ms, step_high_ms, step_samples
    committed, code = _interval_run([["10", "9", "11", "20"], ["20", "", "21", "20"]])
    new, _ = _interval_run([["16.5", "16", "17", "30"], ["24", "", "25", "30"]])
    found = [(f.verdict, f.row, f.column, f.tolerance, f.reason) for f in compare_experiment(committed, new, code=code)]
    noise = "the noise of step_ms, held within it"
    assert found == [
        # the wider interval, 11 - 9 = 2 (the new one is 1): 3 x 2 + 10 % of 10 = 7 >= 6.5
        ("ok", 0, "step_ms", "±7 (3×spread + 10%)", ""),
        # a bound is empty: no interval, so the table's noise, the median of 2/10 alone:
        # 3 x 20 % = 60 % of 20 = 12 >= 4
        ("ok", 1, "step_ms", "±60% (table noise)", ""),
        ("not compared", 0, "step_low_ms", "", noise),
        ("not compared", 1, "step_low_ms", "", noise),
        ("not compared", 0, "step_high_ms", "", noise),
        ("not compared", 1, "step_high_ms", "", noise),
        ("not compared", 0, "step_samples", "", noise),
        ("not compared", 1, "step_samples", "", noise),
    ]
    # past the edge: 7.5 > 7
    beyond, _ = _interval_run([["17.5", "17", "18", "30"], ["24", "", "25", "30"]])
    assert [f.verdict for f in compare_experiment(committed, beyond, code=code)][:2] == ["drift", "ok"]


def test_a_timing_value_is_held_within_its_interval_and_its_bounds_are_not_compared():
    from sitedata.machine_speed import Factor, MachineState, Speed

    def run(rise: tuple, arithmetic: tuple) -> Experiment:
        run = _run({})
        for name, triple, unit in (("rise_ms", rise, "ms"), ("arithmetic_ms", arithmetic, "ms")):
            for n, v in zip(interval_names(name)[:2] + (name,), (*triple[1:], triple[0]), strict=True):
                run.meta["values"][n] = {"value": v, **Value(n, unit, policy=TIMING).as_meta()}
        return run

    same = Speed(MachineState("a", {}, False), MachineState("b", {}, False), {}, Factor(1.0, 0.01))
    committed = run((1.0, 0.5, 1.5), (9.0, 8.8, 9.2))
    # +30 % with an interval of +-50 %: no drift of +30 % against a stated 3 %
    regenerated = run((1.3, 0.8, 1.8), (7.7, 7.5, 7.9))
    got = {f.column: f for f in _compare(committed, regenerated, speed=same)}
    assert got["rise_ms"].verdict == "cannot tell" and got["rise_ms"].tolerance.startswith("+30.0%")
    assert {got[n].verdict for n in ("rise_low_ms", "rise_high_ms")} == {"not compared"}
    assert got["rise_low_ms"].reason == "the noise of rise_ms, held within it"
    # the roofline's arithmetic term is the machine's: reported once, not cell by cell
    assert {got[n].verdict for n in ("arithmetic_ms", "arithmetic_low_ms", "arithmetic_high_ms")} == {"not compared"}
    assert got["arithmetic_ms"].reason.startswith("the machine's own term")
    # and a rise whose interval is narrow drifts
    moved = {f.column: f.verdict for f in _compare(committed, run((1.3, 1.29, 1.31), (9.0, 8.8, 9.2)), speed=same)}
    narrow = {f.column: f.verdict for f in _compare(run((1.0, 0.99, 1.01), (9.0, 8.8, 9.2)), run((1.3, 1.29, 1.31),
              (9.0, 8.8, 9.2)), speed=same)}  # fmt: skip
    assert moved["rise_ms"] == "cannot tell" and narrow["rise_ms"] == "drift"
    # without the machine's speed (a run with no calibration), the same: the bounds are the
    # median's noise, and the median moves by 3 x the wider interval + 10 %: 3 x 1 + 0.1 >= 0.3
    alone = {f.column: f for f in _compare(committed, regenerated)}
    assert alone["rise_low_ms"].verdict == "not compared" and alone["rise_ms"].verdict == "ok"
    assert alone["rise_ms"].tolerance.endswith("(3×spread + 10%)")
