"""The data layer's writer: declarations held, folders replaced whole, stops survived."""

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import uuid

import pytest

from sitedata import (
    Column,
    DataError,
    FolderError,
    Result,
    SchemaError,
    Table,
    Value,
    read_experiment,
    recover,
    store,
    write_experiment,
)
from sitedata import folder as folder_mod
from sitedata.folder import MARKER
from sitedata.policies import EXACT_ON_MACHINE, NUMERIC, TIMING, Policy, named
from tests.conftest import PROVENANCE, REPO

TABLES = (
    Table("t", "T with {n_max} rows at most", (Column("n", "tokens"), Column("x_ms", "ms", policy=TIMING))),
    Table("u", "U", (Column("name"),)),
)
VALUES = (Value("v", "x", policy=NUMERIC),)


def _result(v=1.0, **over):
    tables = {"t": [{"n": 1, "x_ms": 0.1 * v}, {"n": 2, "x_ms": True}], "u": [{"name": f"run {v}"}]}
    return Result(tables={**tables, **over}, values={"v": v})


def _write(root, result=None, name="exp"):
    return write_experiment(root, name, result or _result(), tables=TABLES, values=VALUES, provenance=_provenance())


def _provenance():
    return {**PROVENANCE, "parameters": {"n_max": 2}}


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _entries(root):
    """What a folder holds beside its data-folder marker."""
    return sorted(p.name for p in root.iterdir() if p.name != MARKER)


@contextlib.contextmanager
def _no_stop():
    """A stop where none is due fails the test instead of ending the whole test run."""
    try:
        yield
    except KeyboardInterrupt as e:
        pytest.fail(f"stopped where no stop was due: {e!r}")


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))}


def test_a_table_whose_length_timings_set_says_so_in_its_meta(tmp_path):
    tables = (Table("t", "T", (Column("n"),), length="timing"), Table("u", "U", (Column("n"),)))
    result = Result(tables={"t": [{"n": 1}], "u": [{"n": 1}]}, values={})
    write_experiment(tmp_path, "exp", result, tables=tables, values=(), provenance=_provenance())
    meta = read_experiment(tmp_path, "exp").meta["tables"]
    assert meta["t"]["length"] == "timing" and "length" not in meta["u"]


def test_write_and_read_back(tmp_path):
    _write(tmp_path)
    # lines end in "\n", not in the csv module's "\r\n"
    assert (tmp_path / "exp" / "t.csv").read_bytes() == b"n,x_ms\n1,0.1\n2,true\n"
    exp = read_experiment(tmp_path, "exp")
    meta = exp.meta
    assert meta["schema_version"] == store.SCHEMA_VERSION
    assert meta["tables"]["t"]["title"] == "T with 2 rows at most"  # filled from the parameters
    assert meta["tables"]["t"]["rows"] == 2
    assert meta["tables"]["t"]["columns"][1] == {
        "name": "x_ms",
        "unit": "ms",
        "label": "x_ms",
        "compare": "timing",
        "scope": "machine",
        "description": "",
        "words": False,
        "noise": {},
    }
    assert meta["tables"]["t"]["description"] == ""
    assert meta["values"]["v"] == {
        "value": 1.0,
        "unit": "x",
        "compare": "numeric",
        "scope": "device",
        "description": "",
        "words": False,
    }
    assert exp.rows("u") == [{"name": "run 1.0"}]


@pytest.mark.parametrize(
    "result, message",
    [
        (Result(tables={"t": [{"n": 1, "x_ms": 1.0}]}, values={"v": 1}), r"missing \['u'\]"),
        (_result(w=[{"a": 1}]), r"undeclared \['w'\]"),
        (_result(u=[]), "no rows"),
        (_result(u=[{"name": "a", "extra": 1}]), "declared"),
        (Result(tables=_result().tables, values={}), r"missing \['v'\]"),
        (Result(tables=_result().tables, values={"v": 1, "w": 2}), r"undeclared \['w'\]"),
        (_result(t=[{"n": float("nan"), "x_ms": 1.0}]), "nan"),
    ],
)
def test_a_result_is_held_against_its_declarations(tmp_path, result, message):
    with pytest.raises(SchemaError, match=message):
        _write(tmp_path, result)
    assert not (tmp_path / "exp").exists()


def test_declarations_refuse_bad_names_policies_and_labels():
    with pytest.raises(ValueError, match="snake_case"):
        Column("../x")
    with pytest.raises(SchemaError, match="policy {'compare': 'timing'} is none of sitedata.policies' named ones"):
        Column("a", policy={"compare": "timing"})
    with pytest.raises(SchemaError, match="none of sitedata.policies' named ones"):
        Value("a", policy=Policy("MINE", "timing", "any"))
    with pytest.raises(ValueError, match="compare in"):
        Policy("BAD", "approximate", "any")
    with pytest.raises(SchemaError, match="its label repeats its name; leave it out"):
        Column("a", "x", "a")
    with pytest.raises(SchemaError, match="only a timing has noise, and in other columns"):
        Column("a", spread="b")
    with pytest.raises(SchemaError, match="only a timing has noise, and in other columns"):
        Column("a_ms", policy=TIMING, spread="a_ms")
    with pytest.raises(SchemaError, match="a_ms's noise 'n' is no timing column of it"):
        Table("t", "T", (Column("n"), Column("a_ms", policy=TIMING, spread="n")))
    with pytest.raises(SchemaError, match="each once"):
        Table("t", "T", (Column("a"), Column("a")))
    with pytest.raises(SchemaError, match="length"):
        Table("t", "T", (Column("a"),), length="random")
    assert (Column("a").compare, Column("a").scope, Column("a").as_meta()["label"]) == ("exact", "any", "a")
    assert (Column("a", policy=NUMERIC).compare, Column("a", policy=NUMERIC).scope) == ("numeric", "device")
    assert (Value("a", policy=EXACT_ON_MACHINE).compare, Value("a", policy=EXACT_ON_MACHINE).scope) == (
        "exact",
        "machine",
    )
    assert named("timing", "machine") is TIMING
    with pytest.raises(ValueError, match="no named policy compares 'timing' in scope 'any'"):
        named("timing", "any")


def test_what_a_column_is_is_written_to_its_meta(tmp_path):
    spread = Column("s_ms", "ms", "spread (IQR)", policy=TIMING)
    tables = (
        Table(
            "t",
            "T",
            (Column("how", words=True), Column("x_ms", "ms", policy=TIMING, spread="s_ms"), spread),
            description="What t holds.",
        ),
    )
    values = (Value("why", words=True, description="a reason"),)
    result = Result(tables={"t": [{"how": "cached", "x_ms": 1.0, "s_ms": 0.1}]}, values={"why": "it fits"})
    write_experiment(tmp_path, "exp", result, tables=tables, values=values, provenance=_provenance())
    meta = read_experiment(tmp_path, "exp").meta
    t = meta["tables"]["t"]
    assert list(t)[:6] == ["title", "file", "rows", "sha256", "description", "columns"]
    assert t["description"] == "What t holds."
    assert [(c["words"], c["noise"]) for c in t["columns"]] == [(True, {}), (False, {"spread": "s_ms"}), (False, {})]
    assert meta["values"]["why"]["words"] is True


@pytest.mark.parametrize("cell", [1, 2.5, True, ["a"]])
def test_words_for_a_reader_are_text(tmp_path, cell):
    tables = (Table("t", "T", (Column("how", words=True),)),)
    values = (Value("why", words=True),)
    for rows, vals, what in (
        ([{"how": cell}], {"why": "a"}, "table t row 0: how"),
        ([{"how": None}], {"why": cell}, "value why"),
    ):
        with pytest.raises(SchemaError, match=f"{what} is .*; words for a reader are text"):
            write_experiment(
                tmp_path,
                "exp",
                Result(tables={"t": rows}, values=vals),
                tables=tables,
                values=values,
                provenance=_provenance(),
            )
    assert not (tmp_path / "exp").exists()


def test_a_table_no_longer_produced_leaves_with_the_rest(tmp_path):
    _write(tmp_path)
    (tmp_path / "exp" / "gone.csv").write_text("a\n1\n")
    _write(tmp_path)
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == ["meta.json", "t.csv", "u.csv"]


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
@pytest.mark.parametrize("point", store.WRITE_POINTS)
def test_ctrl_c_at_every_write_point_leaves_one_whole_run(tmp_path, monkeypatch, point, exchange):
    _write(tmp_path, _result(1.0))
    before = _snapshot(tmp_path / "exp")
    if not exchange:
        monkeypatch.setattr(store, "_exchange", lambda a, b: False)
    monkeypatch.setenv("SITEDATA_FAULT", f"{point}:interrupt")
    if point == "moved_aside" and exchange:
        _write(tmp_path, _result(2.0))  # an exchange never moves the folder aside: no stop here
    else:
        with pytest.raises(KeyboardInterrupt) as stop:
            _write(tmp_path, _result(2.0))
        assert stop.value.written == (point == "swapped")  # what the run reports as written
    monkeypatch.delenv("SITEDATA_FAULT")
    after = _snapshot(tmp_path / "exp")
    if point in ("first_file", "all_files") or (point == "moved_aside" and not exchange):
        assert after == before  # byte for byte the previous run
    else:
        assert json.loads(after["meta.json"])["values"]["v"]["value"] == 2.0  # the new run, whole
    read_experiment(tmp_path, "exp")  # verifies either way
    assert _entries(tmp_path) == ["exp"]  # nothing left beside it


_KILLED = """
from tests.test_sitedata_store import _write, _result
from sitedata import store
if {no_exchange}:
    store._exchange = lambda a, b: False
_write({root!r}, _result(2.0))
"""


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
@pytest.mark.parametrize("point", store.WRITE_POINTS)
def test_sigkill_at_every_write_point_is_recovered_by_the_next_run(tmp_path, point, exchange):
    if point == "moved_aside" and exchange:
        pytest.skip("an exchange never moves the folder aside")
    _write(tmp_path, _result(1.0))
    before = _snapshot(tmp_path / "exp")
    code = _KILLED.format(root=str(tmp_path), no_exchange=not exchange)
    proc = subprocess.run(  # from the checkout's root, where ``tests`` is a package
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "SITEDATA_FAULT": f"{point}:kill"},
        capture_output=True,
    )
    assert proc.returncode == -9, proc.stderr.decode()[-1000:]
    assert any(p.name.startswith(".exp.") for p in tmp_path.iterdir())  # the kill left something
    done = recover(tmp_path)
    assert done
    assert _entries(tmp_path) == ["exp"]
    after = _snapshot(tmp_path / "exp")
    if point in ("first_file", "all_files", "moved_aside"):
        assert after == before
    else:
        assert json.loads(after["meta.json"])["values"]["v"]["value"] == 2.0
    read_experiment(tmp_path, "exp")


def test_leftovers_of_a_stopped_write_are_ignored_by_git():
    leftovers = ["site_data/.kv_cache.new-1234abcd/meta.json", "site_data/.kv_cache.old-1234abcd"]
    proc = subprocess.run(["git", "check-ignore", *leftovers], cwd=REPO, capture_output=True, text=True)
    assert proc.stdout.split() == leftovers
    tracked = subprocess.run(["git", "check-ignore", "-q", "site_data/kv_cache/meta.json"], cwd=REPO)
    assert tracked.returncode == 1


def test_the_committed_site_data_is_a_data_folder_of_its_own():
    assert folder_mod.is_data_folder(REPO / "site_data")
    listed = subprocess.run(["git", "ls-files", "site_data/.sitedata"], cwd=REPO, capture_output=True, text=True)
    assert listed.stdout.split() == ["site_data/.sitedata"]


def test_a_hidden_file_inside_an_experiment_folder_is_left_alone(tmp_path):
    """The format before version 2 wrote per-file .*.tmp files; a name is no proof of
    who made a file, so none is deleted. A reader passes over it; a merge refuses it."""
    _write(tmp_path)
    (tmp_path / "exp" / ".t.csv.abc.tmp").write_text("half")
    assert recover(tmp_path) == []
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == [".t.csv.abc.tmp", "meta.json", "t.csv", "u.csv"]
    read_experiment(tmp_path, "exp")
    with pytest.raises(DataError, match=r"holds .t.csv.abc.tmp, not listed in meta.json"):
        read_experiment(tmp_path, "exp", strict=True)


@pytest.mark.parametrize("point", ["moved_aside", "swapped"])
def test_a_stop_during_the_very_first_write(tmp_path, monkeypatch, point):
    monkeypatch.setenv("SITEDATA_FAULT", f"{point}:interrupt")
    with pytest.raises(KeyboardInterrupt) as stop:
        _write(tmp_path)
    monkeypatch.delenv("SITEDATA_FAULT")
    written = point == "swapped"
    assert stop.value.written is written and str(stop.value) == ("written" if written else "not written")
    assert _entries(tmp_path) == (["exp"] if written else [])


def _staging(root, name, experiment="exp", marked=True):
    folder = root / name
    folder.mkdir()
    if marked:
        (folder / MARKER).write_text(folder_mod.staging_text(experiment))
    return folder


def test_recover_acts_only_on_its_own_staging_folders(tmp_path):
    _write(tmp_path)  # a data folder, marked
    (tmp_path / "-first").mkdir()  # an ordinary folder that sorts before the leftovers
    (tmp_path / ".a").write_text("not a leftover")
    (tmp_path / "b.txt").write_text("an ordinary file")
    moved = _staging(tmp_path, ".zz.new-1234abcd", "zz")  # a stop between two renames: put back
    (moved / "old").mkdir()
    (moved / "old" / "meta.json").write_text("{}")
    half = _staging(tmp_path, ".yy.new-5678abcd", "yy")  # half a new folder: removed
    (half / "data").mkdir()
    (half / "data" / "t.csv").write_text("a\n")
    (tmp_path / ".ww.new-0000abcd").mkdir()  # a kill before its marker: empty, removed
    # Named like a write's, but not provably one: left alone.
    (tmp_path / ".xx.new-9999abcd").write_text("a file of someone's")
    foreign = _staging(tmp_path, ".vv.new-1111abcd", marked=False)
    (foreign / "notes.txt").write_text("someone's notes")
    outside = _staging(tmp_path.parent, f"{tmp_path.name}-outside")
    (tmp_path / ".uu.new-2222abcd").symlink_to(outside)
    (tmp_path / ".exp.old-1234abcd").mkdir()  # the old format's folder moved aside: no proof
    (tmp_path / ".tt.new-3333ABCD").mkdir()  # not the exact pattern
    assert recover(tmp_path) == [
        "removed .ww.new-0000abcd, left by an interrupted write",
        "removed .yy.new-5678abcd, left by an interrupted write",
        "restored zz from an interrupted write",
        "removed .zz.new-1234abcd, left by an interrupted write",
    ]
    assert _entries(tmp_path) == [
        "-first",
        ".a",
        ".exp.old-1234abcd",
        ".tt.new-3333ABCD",
        ".uu.new-2222abcd",
        ".vv.new-1111abcd",
        ".xx.new-9999abcd",
        "b.txt",
        "exp",
        "zz",
    ]
    assert (tmp_path / "zz" / "meta.json").read_text() == "{}"
    assert (foreign / "notes.txt").read_text() == "someone's notes" and (outside / MARKER).is_file()
    assert recover(tmp_path) == [] and recover(tmp_path / "nowhere") == []


def test_a_staging_folder_whose_place_is_taken_is_removed_without_restoring(tmp_path):
    _write(tmp_path)
    moved = _staging(tmp_path, ".exp.new-1234abcd")
    (moved / "old").mkdir()
    assert recover(tmp_path) == ["removed .exp.new-1234abcd, left by an interrupted write"]
    read_experiment(tmp_path, "exp")


def test_a_folder_that_is_not_a_data_folder_is_never_touched(tmp_path):
    """The issue's folder: a refused write and recovery leave every entry as it was."""
    home = tmp_path / "V"
    (home / ".config.new-backup").mkdir(parents=True)
    (home / ".config.new-backup" / "settings.ini").write_text("[x]\n")
    (home / ".bashrc.old-2023").write_text("alias ll='ls -l'\n")
    (home / "Documents").mkdir()
    (home / "Documents" / ".thesis.tmp").write_text("chapter 1")
    (home / ".exp.new-1234abcd").mkdir()  # even a name like a write's, empty
    before = _tree(home)
    assert recover(home) == []
    with pytest.raises(FolderError) as e:
        _write(home)
    assert str(e.value) == (
        f"{home} is not a data folder of this project: it holds .bashrc.old-2023, .config.new-backup, "
        ".exp.new-1234abcd, ... and no .sitedata marker; give a new or an empty folder"
    )
    with pytest.raises(FolderError):
        store.install_experiment(_write(tmp_path / "gpu"), home, "exp")
    assert _tree(home) == before


def test_a_new_or_empty_folder_is_marked_and_an_old_data_folder_adopted(tmp_path):
    _write(tmp_path / "new" / "deeper")
    (tmp_path / "empty").mkdir()
    _write(tmp_path / "empty")
    for folder in (tmp_path / "new" / "deeper", tmp_path / "empty"):
        assert (folder / MARKER).read_text().splitlines()[0] == "sitedata data folder"
    legacy = tmp_path / "legacy"  # written before the marker: experiment folders and a .gitignore
    _write(legacy, name="other")
    (legacy / MARKER).unlink()
    (legacy / ".gitignore").write_text(".*\n")
    _write(legacy)
    assert _entries(legacy) == [".gitignore", "exp", "other"] and (legacy / MARKER).is_file()
    (tmp_path / "file").write_text("x")
    with pytest.raises(FolderError, match="is a file, not a folder"):
        _write(tmp_path / "file")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FolderError, match="dangling is a link to nothing"):
        _write(tmp_path / "dangling")
    (tmp_path / "linked").symlink_to(tmp_path / "empty")  # a root that is a link to a data folder: the user's
    _write(tmp_path / "linked", name="other")
    assert _entries(tmp_path / "empty") == ["exp", "other"]


def test_an_experiment_folder_that_is_a_link_is_refused_before_anything(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    _write(elsewhere)
    root = tmp_path / "data"
    _write(root, name="other")
    (root / "exp").symlink_to(elsewhere / "exp")
    before = _tree(elsewhere)
    with pytest.raises(FolderError, match=r"exp is a symbolic link; an experiment's folder is replaced whole"):
        _write(root, _result(2.0))
    assert _tree(elsewhere) == before and _entries(root) == ["exp", "other"]
    assert recover(root) == []


def test_an_io_error_after_the_swap_leaves_the_new_data_in_place(tmp_path, monkeypatch):
    _write(tmp_path, _result(1.0))
    monkeypatch.setenv("SITEDATA_FAULT", "swapped:oserror")
    with _no_stop(), pytest.raises(OSError, match="injected at swapped") as e:
        _write(tmp_path, _result(2.0))
    assert e.value.errno == errno.EIO
    monkeypatch.delenv("SITEDATA_FAULT")
    assert read_experiment(tmp_path, "exp").meta["values"]["v"]["value"] == 2.0
    assert _entries(tmp_path) == ["exp"]


def test_a_fault_can_wait_for_the_nth_passage(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "_passed", {})
    monkeypatch.setenv("SITEDATA_FAULT", "swapped@2:interrupt")
    with _no_stop():
        _write(tmp_path, _result(1.0), name="a")
    with pytest.raises(KeyboardInterrupt) as stop:
        _write(tmp_path, _result(2.0), name="b")
    assert stop.value.written is True
    with _no_stop():
        _write(tmp_path, _result(3.0), name="c")
    assert _entries(tmp_path) == ["a", "b", "c"]


@pytest.mark.parametrize(
    "result",
    [
        _result(t=[{"n": 1, "x_ms": float("inf")}]),  # a timing column too
        _result(t=[{"n": 1, "x_ms": float("nan")}]),
        Result(tables=_result().tables, values={"v": [1.0, float("-inf")]}),
        Result(tables=_result().tables, values={"v": 1.0}, notes={"spread": {"x": float("nan")}}),
    ],
    ids=["timing-inf", "timing-nan", "value-in-list", "note"],
)
def test_no_number_that_is_not_finite_is_ever_written(tmp_path, result):
    with pytest.raises(SchemaError, match="is never written"):
        _write(tmp_path, result)
    assert not (tmp_path / "exp").exists()
    folder = _write(tmp_path, _result(t=[{"n": 1, "x_ms": None}, {"n": 2, "x_ms": 0.5}]))  # no value: empty
    assert (folder / "t.csv").read_text() == "n,x_ms\n1,\n2,0.5\n"


def test_install_refuses_a_source_with_a_hidden_file(tmp_path):
    source = _write(tmp_path / "gpu")
    (source / ".stray").write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(DataError, match=r"gpu/exp/ holds .stray, not listed in meta.json"):
        store.install_experiment(source, tmp_path / "site_data", "exp")
    assert not (tmp_path / "site_data").exists()


def test_meta_json_is_written_for_people_to_read(tmp_path):
    provenance = {**_provenance(), "note": "3 × faster", "where": tmp_path}  # a Path is written as text
    folder = write_experiment(tmp_path, "exp", _result(), tables=TABLES, values=VALUES, provenance=provenance)
    text = (folder / "meta.json").read_text(encoding="utf-8")
    assert text.endswith("}\n") and '\n  "schema_version": ' in text and '\n    "t": {' in text
    assert '"note": "3 × faster"' in text and f'"where": "{tmp_path}"' in text
    meta = json.loads(text)
    assert meta["notes"] == {} and meta["tables"]["t"]["title"] == "T with 2 rows at most"
    # without parameters, titles are filled from the values alone
    plain = {k: v for k, v in _provenance().items() if k != "parameters"}
    tables = (Table("t", "T at {v}", TABLES[0].columns), TABLES[1])
    folder = write_experiment(tmp_path, "exp", _result(), tables=tables, values=VALUES, provenance=plain)
    assert json.loads((folder / "meta.json").read_text())["tables"]["t"]["title"] == "T at 1.0"


def test_install_copies_a_folder_as_it_is(tmp_path):
    source = _write(tmp_path / "gpu")
    installed = store.install_experiment(source, tmp_path / "site_data" / "deeper", "exp")
    assert installed == tmp_path / "site_data" / "deeper" / "exp"
    assert _snapshot(installed) == _snapshot(source)
    read_experiment(tmp_path / "site_data" / "deeper", "exp")
    from sitedata.names import BadName

    message = "experiment 'Bad Name' is not a snake_case name (a-z, 0-9, _; at most 64 characters)"
    with pytest.raises(BadName) as e:
        store.install_experiment(source, tmp_path, "Bad Name")
    assert str(e.value) == message
    with pytest.raises(BadName) as e:
        _write(tmp_path, name="Bad Name")
    assert str(e.value) == message


def test_the_two_rename_swap_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "_exchange", lambda a, b: False)
    _write(tmp_path, _result(1.0))
    _write(tmp_path, _result(2.0))
    assert _entries(tmp_path) == ["exp"]
    assert read_experiment(tmp_path, "exp").meta["values"]["v"]["value"] == 2.0


def test_booleans_are_written_as_words(tmp_path):
    folder = _write(tmp_path, _result(1.0, t=[{"n": 1, "x_ms": True}, {"n": 2, "x_ms": False}]))
    assert (folder / "t.csv").read_text() == "n,x_ms\n1,true\n2,false\n"


def test_the_atomic_exchange_swaps_two_folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("in a")
    (b / "y").write_text("in b")
    assert store._exchange(a, b) is True  # Linux: renameat2(RENAME_EXCHANGE)
    assert [p.name for p in a.iterdir()] == ["y"] and [p.name for p in b.iterdir()] == ["x"]
    assert store._exchange(a, tmp_path / "missing") is False  # both must exist


# The fault hook: the stops the tests above rely on are the ones they ask for.


def _stop_message(point):
    """What ``fault(point)`` raised as a stop ("" for no stop)."""
    try:
        store.fault(point)
    except KeyboardInterrupt as e:
        return str(e)
    return ""


def test_a_fault_stops_at_its_point_only_and_at_its_nth_passage(monkeypatch):
    monkeypatch.setattr(store, "_passed", {})
    monkeypatch.setenv("SITEDATA_FAULT", "swapped@2:interrupt")
    assert _stop_message("all_files") == ""  # another point: neither a stop nor a passage
    stops = [_stop_message("swapped") for _ in range(3)]
    assert stops == ["", "fault injected at swapped", ""]
    monkeypatch.setenv("SITEDATA_FAULT", "all_files:interrupt")  # no @n: every passage
    assert [_stop_message("all_files") for _ in range(2)] == ["fault injected at all_files"] * 2


def test_an_oserror_fault_is_an_io_error(monkeypatch):
    monkeypatch.setenv("SITEDATA_FAULT", "all_files:oserror")
    with _no_stop(), pytest.raises(OSError) as e:
        store.fault("all_files")
    assert e.value.errno == errno.EIO
    assert str(e.value) == "[Errno 5] Input/output error (injected at all_files)"


def test_a_sigint_fault_is_a_real_signal(monkeypatch):
    """What the process's SIGINT handler does is what a stop is: here a handler that
    records the signal and raises as Python's own does."""
    received = []

    def handler(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    monkeypatch.setenv("SITEDATA_FAULT", "all_files:sigint")
    previous = signal.signal(signal.SIGINT, handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            store.fault("all_files")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert received == [signal.SIGINT]


def test_a_kill_fault_sends_its_own_process_sigkill(monkeypatch):
    sent = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    monkeypatch.setenv("SITEDATA_FAULT", "all_files:kill")
    with pytest.raises(KeyboardInterrupt):  # only because the recorded kill returns
        store.fault("all_files")
    assert sent == [(os.getpid(), signal.SIGKILL)]


def test_a_stop_after_the_first_file_of_a_one_file_folder(tmp_path, monkeypatch):
    """With no table, meta.json is the first file and the last: the stop still falls."""
    nothing = Result(tables={}, values={})
    monkeypatch.setenv("SITEDATA_FAULT", "first_file:interrupt")
    with pytest.raises(store.WriteStopped) as stop:
        write_experiment(tmp_path, "exp", nothing, tables=(), values=(), provenance=_provenance())
    assert stop.value.written is False and _entries(tmp_path) == []


# What a write refuses, and what it leaves when it fails.


def test_write_files_refuses_a_bad_experiment_or_file_name_before_writing(tmp_path):
    from sitedata.names import BadName

    rule = "is not a snake_case name (a-z, 0-9, _; at most 64 characters)"
    with pytest.raises(BadName) as e:
        store.write_files(tmp_path / "new", "Bad Name", {"meta.json": "{}\n"})
    assert str(e.value) == f"experiment 'Bad Name' {rule}"
    assert not (tmp_path / "new").exists()  # not even made a data folder
    with pytest.raises(BadName) as e:
        store.write_files(tmp_path, "exp", {"Bad.csv": "a\n1\n", "meta.json": "{}\n"})
    assert str(e.value) == f"file 'Bad' {rule}"
    assert _entries(tmp_path) == []  # the staging folder went with the refusal


def test_a_number_that_is_not_finite_in_the_provenance_is_refused(tmp_path):
    provenance = {**_provenance(), "parameters": {"n_max": 2, "lr": float("inf")}}
    with pytest.raises(SchemaError) as e:
        write_experiment(tmp_path, "exp", _result(), tables=TABLES, values=VALUES, provenance=provenance)
    assert str(e.value) == "meta.json of exp: Out of range float values are not JSON compliant: inf"
    assert not (tmp_path / "exp").exists()


def test_install_refuses_a_folder_of_another_experiment(tmp_path):
    source = _write(tmp_path / "gpu")
    with pytest.raises(FolderError) as e:
        store.install_experiment(source, tmp_path / "site_data", "other")
    assert str(e.value) == f"{source} holds experiment exp, not other"
    assert not (tmp_path / "site_data" / "other").exists()


def test_a_write_in_progress_says_whose_it_is(tmp_path, monkeypatch):
    markers = []
    write_file = store._write_file

    def spy(path, text):  # path: <staging>/data/<file>
        markers.append((path.parent.parent / MARKER).read_text())
        write_file(path, text)

    monkeypatch.setattr(store, "_write_file", spy)
    _write(tmp_path)
    assert len(markers) == 3 and set(markers) == {
        "sitedata staging folder\nA write of exp in progress, or one a stop left; the next write removes it.\n"
    }


def test_a_write_removes_no_staging_folder_but_its_own(tmp_path, monkeypatch):
    """Another write drew the same 8 hex digits and made its staging folder between this
    write's recovery and its own folder: this write fails and leaves the other's alone."""
    _write(tmp_path)
    monkeypatch.setattr(store.uuid, "uuid4", lambda: uuid.UUID("abcdef12" + "0" * 24))
    taken = tmp_path / ".exp.new-abcdef12"
    recover_first = store.recover

    def recover_then_race(root):
        done = recover_first(root)
        taken.mkdir()  # the other write, between its folder and its marker
        return done

    monkeypatch.setattr(store, "recover", recover_then_race)
    with _no_stop(), pytest.raises(FileExistsError):
        _write(tmp_path, _result(2.0))
    assert taken.is_dir()


def test_a_cleanup_that_fails_does_not_hide_why_the_write_stopped(tmp_path, monkeypatch):
    _write(tmp_path, _result(1.0))
    before = _snapshot(tmp_path / "exp")

    def cannot(root, name, experiment):
        raise PermissionError(errno.EACCES, "Permission denied", name)

    monkeypatch.setattr(store, "recover_staging", cannot)
    monkeypatch.setenv("SITEDATA_FAULT", "all_files:interrupt")
    with pytest.raises(store.WriteStopped) as stop:
        _write(tmp_path, _result(2.0))
    assert stop.value.written is False
    (left,) = [n for n in _entries(tmp_path) if n != "exp"]
    assert recover(tmp_path) == [f"removed {left}, left by an interrupted write"]  # the next write's
    assert _entries(tmp_path) == ["exp"] and _snapshot(tmp_path / "exp") == before


# What is in place: meta.json read as it is on disk.


def test_the_meta_json_in_place_is_read_never_through_a_link(tmp_path):
    folder = _write(tmp_path / "a")
    text = (folder / "meta.json").read_text(encoding="utf-8")
    assert store.meta_bytes(folder) == text.encode("utf-8") and store.is_written(folder, text)
    linked = tmp_path / "b"
    linked.mkdir()
    (linked / "meta.json").symlink_to(folder / "meta.json")
    assert store.meta_bytes(linked) is None and not store.is_written(linked, text)
    assert store.meta_bytes(tmp_path / "nowhere") is None
    fifo = tmp_path / "c"
    fifo.mkdir()
    os.mkfifo(fifo / "meta.json")  # no writer: read at once as empty, never waited on
    assert store.meta_bytes(fifo) == b""


def test_meta_json_is_read_to_16_mib_at_most(tmp_path):
    limit = 16 * 2**20
    (tmp_path / "meta.json").write_bytes(b"x" * limit)
    assert store.meta_bytes(tmp_path) == b"x" * limit  # whole, up to the limit
    (tmp_path / "meta.json").write_bytes(b"x" * limit + b"y")
    assert store.meta_bytes(tmp_path) == b"x" * limit
