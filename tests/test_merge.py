"""Merging a run written elsewhere into site_data: every source experiment verified
before any is installed, the target's experiment folders never replaced through a link,
and every stop or error said by what the target holds then."""

import json
import shutil

import pytest

from measure.errors import UserError
from measure.lab.provenance import code_hash
from measure.merge import merge
from sitedata import read_experiment, recover
from tests.conftest import write_data
from tests.test_cli import _last, _one_error, _tree, run_cli

NAMES = ("batching", "cache_size", "kv_cache")  # merged in this order


def _data(root, version):
    for name in NAMES:
        write_data(root, name, {"t": [{"n": version}]}, code_hash=code_hash(name))
    return root


@pytest.fixture
def folders(tmp_path):
    """A run to merge (version 2) and the site_data it goes into (version 1)."""
    return _data(tmp_path / "gpu", 2), _data(tmp_path / "site_data", 1)


def _version(root, name):
    return read_experiment(root, name).rows("t")[0]["n"]


def _refused(source, into, message):
    before = _tree(into)
    with pytest.raises(UserError) as e:
        merge(source=source, into=into)
    assert str(e.value).startswith("nothing merged: ") and message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)
    assert _tree(into) == before  # not even the experiments before the bad one
    return str(e.value)


def test_a_whole_merge(folders):
    source, into = folders
    assert [line.split(":")[0] for line in merge(source=source, into=into)] == [f"merged {n}" for n in NAMES]
    assert all(_version(into, n) == "2" for n in NAMES)


def test_a_hidden_file_that_is_not_utf8_is_refused_before_anything_is_merged(folders):
    source, into = folders
    (source / "cache_size" / ".stray").write_bytes(b"\xff\xfe\x00")
    _refused(source, into, "gpu/cache_size/ holds .stray, not listed in meta.json")


def test_a_linked_file_in_the_source_is_refused(folders, tmp_path):
    source, into = folders
    elsewhere = tmp_path / "elsewhere.csv"
    shutil.move(source / "kv_cache" / "t.csv", elsewhere)
    (source / "kv_cache" / "t.csv").symlink_to(elsewhere)
    _refused(source, into, "gpu/kv_cache/t.csv is a symbolic link")


def test_a_meta_json_nested_too_deep_is_refused(folders):
    source, into = folders
    (source / "kv_cache" / "meta.json").write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _refused(source, into, "gpu/kv_cache/meta.json nests deeper than the 32 levels meta.json may")


def test_a_target_experiment_folder_that_is_a_link_is_refused_before_anything(folders, tmp_path):
    source, into = folders
    elsewhere = tmp_path / "elsewhere"
    shutil.move(into / "cache_size", elsewhere)
    (into / "cache_size").symlink_to(elsewhere)
    outside = _tree(elsewhere)
    message = _refused(source, into, f"{into}/cache_size is a symbolic link")
    assert message.endswith("an experiment's folder is replaced whole, never through a link")
    assert _tree(elsewhere) == outside and recover(into) == []  # nothing left to report, run after run


def test_a_target_that_is_not_a_data_folder_is_refused(folders, tmp_path):
    source, _ = folders
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc.old-2023").write_text("x")
    _refused(source, home, "is not a data folder of this project")


@pytest.mark.slow
def test_a_stop_at_the_third_swap_says_all_three_were_merged(folders):
    source, into = folders
    proc = run_cli("merge", str(source), "--into", str(into), SITEDATA_FAULT="swapped@3:sigint")
    assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert _last(proc) == "interrupted; batching, cache_size, kv_cache were merged"
    assert all(_version(into, n) == "2" for n in NAMES)


@pytest.mark.slow
def test_a_stop_while_the_second_is_written_says_which_was_merged(folders):
    source, into = folders
    proc = run_cli("merge", str(source), "--into", str(into), SITEDATA_FAULT="all_files@2:sigint")
    assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert _last(proc) == "interrupted; batching was merged; cache_size was not merged, its previous data is unchanged"
    assert [_version(into, n) for n in NAMES] == ["2", "1", "1"]
    assert sorted(p.name for p in into.iterdir()) == [".sitedata", *NAMES]


@pytest.mark.slow
def test_an_io_error_after_a_swap_says_it_was_merged(folders):
    source, into = folders
    line = _one_error(run_cli("merge", str(source), "--into", str(into), SITEDATA_FAULT="swapped@1:oserror"))
    assert line == (
        f"error: merging batching into {into} failed ([Errno 5] Input/output error (injected at swapped)); "
        "batching was merged"
    )
    assert [_version(into, n) for n in NAMES] == ["2", "1", "1"]
    assert json.loads((into / "batching" / "meta.json").read_text())["code_hash"] == code_hash("batching")
