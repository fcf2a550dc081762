"""Places and files refused in one line before anything is written: an output folder in
a git repository's own folder, in this checkout's source, or with a control character in
its name (measure/out_folder.py); a drift report path that holds another file
(measure/check_report.py); and data with a control character or a key given twice
(sitedata/bounds.py), refused by a merge as by every reader."""

import json
import os
import re

import pytest

from measure.check_report import REPORT, check_report_path, write_report
from measure.errors import UserError
from measure.lab.provenance import code_hash
from measure.merge import merge
from measure.out_folder import place_problem
from sitedata import DataError, read_experiment
from tests.conftest import REPO, write_data
from tests.test_cli import _one_error, _tree, run_main


@pytest.mark.parametrize(
    "out, message",
    [
        (".git/newdata", ".git/newdata is inside a git repository's own folder (.git)"),
        ("docs/newdata", "docs/newdata is inside this checkout's docs/ folder, which holds no data"),
        ("measure/data2", "measure/data2 is inside this checkout's measure/ folder"),
        ("tests/fixtures/x", "tests/fixtures/x is inside this checkout's tests/ folder"),
        (".github/x", "inside this checkout's .github/ folder"),
        ("gpu/x", "inside this checkout's gpu/ folder"),
        (".", ". is this checkout itself"),
        ("new\ndata", "'new\\ndata' holds a control character (U+000A)"),
        ("a\x1b[31mred", "holds a control character (U+001B)"),
    ],
)
def test_a_place_that_holds_no_data_is_refused(out, message, monkeypatch):
    monkeypatch.chdir(REPO)  # as a user in the checkout gives them
    assert message in place_problem(out)


@pytest.mark.parametrize("out", ["site_data", "site_data_gpu", "/tmp/elsewhere"])
def test_site_data_and_folders_of_their_own_are_places_for_data(out):
    assert place_problem(REPO / out) == ""


def test_a_link_into_the_source_is_refused_as_its_target(tmp_path):
    (tmp_path / "sneaky").symlink_to(REPO / "docs")
    assert "is inside this checkout's docs/ folder" in place_problem(tmp_path / "sneaky" / "newdata")


@pytest.mark.parametrize("out", [".git/newdata", "docs/newdata", "data\nset"])
def test_the_command_line_refuses_them_and_writes_nothing(out, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    before = sorted(os.listdir(REPO / "docs"))
    line = _one_error(run_main(monkeypatch, capsys, "run", "--model", "arch:tiny", "--out", out))
    assert line.startswith("error: --out ") and "\n" not in line
    assert not (REPO / out).exists() and sorted(os.listdir(REPO / "docs")) == before


def test_a_merge_into_the_source_is_refused(tmp_path):
    write_data(tmp_path / "gpu", "kv_cache", {"t": [{"n": 1}]}, code_hash=code_hash("kv_cache"))
    with pytest.raises(UserError, match=r"^nothing merged: --into .*/docs/newdata is inside this checkout's docs/"):
        merge(source=tmp_path / "gpu", into=REPO / "docs" / "newdata")
    assert not (REPO / "docs" / "newdata").exists()


def test_a_report_writes_a_new_file_or_its_own_report_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# A page of someone's\n")
    with pytest.raises(UserError, match="README.md exists and is not a report of this command"):
        check_report_path(readme)
    with pytest.raises(UserError, match="is not a report of this command"):  # the same, checked again on writing
        write_report(readme, {"passed": True})
    assert readme.read_text() == "# A page of someone's\n"
    report = tmp_path / "report.json"
    check_report_path(report)  # a new file
    write_report(report, {"kinds": ["exact"], "passed": True})
    assert json.loads(report.read_text()) == {"report": REPORT, "kinds": ["exact"], "passed": True}
    check_report_path(report)  # its own, written again
    write_report(report, {"kinds": ["exact"], "passed": False})
    older = tmp_path / "older.json"  # a report written before reports named themselves
    older.write_text(json.dumps({"kinds": ["exact"], "passed": True}, indent=1))
    check_report_path(older)
    (tmp_path / "link.json").symlink_to(report)
    with pytest.raises(UserError, match="is not a report of this command"):
        check_report_path(tmp_path / "link.json")


def test_the_command_line_keeps_the_readme(tmp_path, monkeypatch, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# A page of someone's\n")
    args = ("check", "--committed", str(tmp_path / "none"), "--report", str(readme), "--no-pages")
    line = _one_error(run_main(monkeypatch, capsys, *args))
    assert "README.md exists and is not a report of this command" in line
    assert readme.read_text() == "# A page of someone's\n"


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85"])
def test_a_control_character_in_a_cell_is_refused_by_a_merge(char, tmp_path):
    source, into = tmp_path / "gpu", tmp_path / "site_data"
    write_data(source, "kv_cache", {"t": [{"n": f"a{char}b"}]}, code_hash=code_hash("kv_cache"))
    write_data(into, "kv_cache", {"t": [{"n": "1"}]})
    before = _tree(into)
    with pytest.raises(UserError) as e:
        merge(source=source, into=into)
    assert str(e.value) == (
        f"nothing merged: gpu/kv_cache/t.csv holds the control character U+{ord(char):04X} on line 2; "
        "re-measure it: make measure ONLY=kv_cache"
    )
    assert _tree(into) == before


def test_tabs_and_line_ends_in_a_cell_are_read(tmp_path):
    write_data(tmp_path, "exp", {"t": [{"n": "a\tb\nc\r\nd"}]})
    assert read_experiment(tmp_path, "exp").rows("t") == [{"n": "a\tb\nc\r\nd"}]


@pytest.mark.parametrize(
    "edit, message",
    [
        (('"dtype": "float32"', '"dtype": "float32", "dtype": "float16"'), "key 'dtype' twice"),
        (('"title": "exp"', '"title": "exp\\u0000"'), "control character U+0000"),
        (('"title": "exp"', '"ti\\u001btle": "exp"'), "a key holding the control character"),
    ],
)
def test_a_meta_json_with_a_key_twice_or_a_control_character_is_refused(edit, message, tmp_path):
    write_data(tmp_path, "exp", {"t": [{"n": 1}]})
    meta = tmp_path / "exp" / "meta.json"
    edited = meta.read_text().replace(*edit)
    assert edited != meta.read_text()
    meta.write_text(edited)
    with pytest.raises(DataError, match=f"exp/meta.json .*{re.escape(message)}"):
        read_experiment(tmp_path, "exp")
