"""The format's versions: a meta.json of an older version is migrated in memory and then
verified as any other (sitedata/migrate.py). tests/fixtures/format2/kv_cache/ is a real
folder as format version 2 wrote it (a copy of the committed site_data/kv_cache/ before
version 3): it reads, renders and merges, and a merge installs it as it was written.
Version 4 renamed two of its columns: it reads under the new names, its files unchanged."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil

import pytest

from sitedata import SCHEMA_VERSION, DataError, read_experiment
from sitedata.migrate import RENAMED_4, _spread_2, migrated, renamed_header, update_to_3, update_to_4
from sitedata.store import install_experiment
from sitekit.language import i18n
from sitekit.rendering.markers import PageContext, render_markers
from sitekit.rendering.pagedata import SiteData
from tests.conftest import AWAITING_MEASUREMENT, REPO

FORMAT2 = REPO / "tests" / "fixtures" / "format2"
SPREADS = {  # what version 2's naming rule pairs in kv_cache
    ("identical_output", "total_ms"): "spread_ms",
    ("head_step", "recompute_ms"): "recompute_spread_ms",
    ("head_step", "cached_ms"): "cached_spread_ms",
}
WORDS = {("identical_output", "method"), ("macs_total", "scope"), ("memory", "method"), ("memory", "steps_run")}


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_the_fixture_is_format_2():
    assert json.loads((FORMAT2 / "kv_cache" / "meta.json").read_text())["schema_version"] == 2 < SCHEMA_VERSION == 5


def test_a_format_2_folder_reads_as_the_current_format():
    exp = read_experiment(FORMAT2, "kv_cache")
    assert (exp.meta["schema_version"], exp.written_version) == (SCHEMA_VERSION, 2)
    assert exp.meta_text.encode() == (FORMAT2 / "kv_cache" / "meta.json").read_bytes()  # the file as written
    for name, t in exp.meta["tables"].items():
        assert t["description"] == ""
        for c in t["columns"]:
            spread = SPREADS.get((name, c["name"]))
            assert c["noise"] == ({"spread": spread} if spread else {}), (name, c["name"])
            assert c["words"] == ((name, c["name"]) in WORDS), (name, c["name"])
    assert {v["words"] for v in exp.meta["values"].values()} == {False}


def test_version_2s_naming_rule_lives_on_in_the_migration_only():
    cols = ["step_ms", "step_spread_ms", "total_ms", "spread_ms", "other_ms"]
    assert _spread_2("step_ms", cols) == "step_spread_ms"
    assert _spread_2("total_ms", cols) == "spread_ms"
    assert _spread_2("other_ms", cols) is None
    assert _spread_2("spread_ms", cols) is None  # a spread has no spread of its own
    gate = (REPO / "sitedata" / "compare.py").read_text()
    assert 'replace("_ms"' not in gate and "_spread_column" not in gate


def test_update_to_3_by_hand():
    column = {"name": "x_ms", "unit": "ms", "label": "x", "compare": "timing", "scope": "machine", "description": ""}
    old = {
        "schema_version": 2,
        "experiment": "batching",
        "tables": {
            "sweep": {
                "title": "T",
                "file": "sweep.csv",
                "rows": 1,
                "sha256": "0",
                "columns": [
                    column,
                    {**column, "name": "x_spread_ms"},
                    {**column, "name": "status", "compare": "exact"},
                    {**column, "name": "total_ms", "compare": "numeric"},  # not a timing: no spread
                    {**column, "name": "spread_ms"},
                ],
            }
        },
        "values": {"sweep_stop_reason": {"value": "it fits"}, "knee_batch": {"value": 4}},
    }
    before = copy.deepcopy(old)
    new = update_to_3(old)
    assert old == before  # the meta.json read is not changed, only its migrated copy
    assert new["schema_version"] == 3 and list(new["tables"]["sweep"])[:2] == ["title", "description"]
    assert [(c["words"], c["noise"]) for c in new["tables"]["sweep"]["columns"]] == [
        (False, {"spread": "x_spread_ms"}),
        (False, {}),
        (True, {}),  # batching.sweep.status was a word of version 2's list
        (False, {}),
        (False, {}),
    ]
    assert [v["words"] for v in new["values"].values()] == [True, False]


def test_update_to_4_by_hand():
    column = {"unit": "x", "label": "ratio", "compare": "timing", "scope": "machine", "description": "", "words": False}
    old = {
        "schema_version": 3,
        "experiment": "kv_cache",
        "tables": {
            "identical_output": {
                "description": "wall time, and the speed ratio, paired round by round",
                "columns": [
                    {**column, "name": "speed_ratio", "noise": {"interval": ["speed_ratio_low", "speed_ratio_high"]}},
                    {**column, "name": "speed_ratio_low", "noise": {}},
                    {**column, "name": "speed_ratio_high", "noise": {}},
                ],
            },
            "head_step": {"description": "", "columns": [{**column, "name": "speed_ratio", "noise": {}}]},
            "memory": {"description": "", "columns": [{**column, "name": "speed_ratio", "noise": {}}]},
        },
        "values": {"speedup": {"value": 2.0}},
    }
    before = copy.deepcopy(old)
    new = update_to_4(old)
    assert old == before and new["schema_version"] == 4 and new["values"] == old["values"]
    speedup, low, high = new["tables"]["identical_output"]["columns"]
    assert (speedup["name"], low["name"], high["name"]) == ("speedup", "speedup_low", "speedup_high")
    assert speedup["noise"] == {"interval": ["speedup_low", "speedup_high"]}
    assert (speedup["label"], low["label"]) == ("speedup over recomputing", "ratio")  # the bounds keep theirs
    assert new["tables"]["identical_output"]["description"] == "wall time, and the speedup, paired round by round"
    assert new["tables"]["head_step"]["columns"][0]["name"] == "head_ratio"  # another quantity, its own name
    assert new["tables"]["memory"] == old["tables"]["memory"]  # a table version 4 did not rename
    assert update_to_4({**old, "experiment": "batching"})["tables"] == old["tables"]  # nor another experiment's


def test_a_renamed_header_keeps_every_other_byte():
    names = RENAMED_4[("kv_cache", "head_step")]
    assert renamed_header("context,speed_ratio\n1,2.0\n", names) == "context,head_ratio\n1,2.0\n"
    assert renamed_header("context,speed_ratio\r\n1,2.0\r\n", names) == "context,head_ratio\r\n1,2.0\r\n"
    assert renamed_header("context,speed_ratio", names) == "context,head_ratio"


def test_a_folder_written_before_version_4_reads_under_its_names_and_keeps_its_files():
    exp = read_experiment(FORMAT2, "kv_cache")
    assert "speedup" in [c["name"] for c in exp.columns("identical_output")]  # version 2 had no bounds
    assert exp.texts["head_step"].splitlines()[0].split(",")[5] == "head_ratio"
    assert [c["name"] for c in exp.columns("head_step")][5] == "head_ratio"
    assert float(exp.rows("identical_output")[1]["speedup"]) > 1  # the cached row: the cells as written
    written = (FORMAT2 / "kv_cache" / "identical_output.csv").read_text(encoding="utf-8")
    assert "speed_ratio" in written.splitlines()[0] and exp.files()["identical_output.csv"] == written
    assert exp.texts["identical_output"].partition("\n")[2] == written.partition("\n")[2]


def test_a_header_that_does_not_match_its_own_versions_names_is_refused(tmp_path):
    """A folder of version 2 or 3 names its columns as that version did: a header written
    under version 4's names there is no such folder, whatever its checksum says."""
    shutil.copytree(FORMAT2 / "kv_cache", tmp_path / "kv_cache")
    path = tmp_path / "kv_cache" / "head_step.csv"
    text = path.read_text(encoding="utf-8").replace("speed_ratio", "head_ratio")
    path.write_text(text, encoding="utf-8")
    meta = json.loads((tmp_path / "kv_cache" / "meta.json").read_text())
    meta["tables"]["head_step"]["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (tmp_path / "kv_cache" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match=r"head_step.csv: its column \d+ is not speed_ratio, as meta.json declares"):
        read_experiment(tmp_path, "kv_cache")


@pytest.mark.parametrize("meta", [[1], {"schema_version": 1}, {"schema_version": True}, {"schema_version": "2"}])
def test_what_is_no_older_format_is_left_for_the_reader_to_refuse(meta):
    assert migrated(meta, 3) == meta


def test_a_malformed_format_2_meta_is_refused_after_its_migration(tmp_path):
    shutil.copytree(FORMAT2 / "kv_cache", tmp_path / "kv_cache")
    meta = json.loads((tmp_path / "kv_cache" / "meta.json").read_text())
    meta["tables"]["memory"]["columns"] = "all of them"
    (tmp_path / "kv_cache" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="table memory: no columns"):
        read_experiment(tmp_path, "kv_cache")


def test_a_format_2_folder_renders_its_words_in_the_page_language():
    ctx = PageContext(data=SiteData(FORMAT2), page="p.md", url_prefix="")
    try:
        i18n.set_language("gl")
        html = render_markers("{{ table('kv_cache.identical_output') }}", ctx)
    finally:
        i18n.set_language(i18n.DEFAULT)
    assert '<td class="text">recálculo</td>' in html and '<td class="text">con caché</td>' in html


def test_a_format_2_folder_merges_as_it_was_written(tmp_path, monkeypatch):
    """A GPU run written before format 3 is installed byte for byte: the files verified are
    the files installed, and every reader migrates it the same way after."""
    from measure import merge as merging

    installed = install_experiment(FORMAT2 / "kv_cache", tmp_path / "a", "kv_cache")
    assert _files(installed) == _files(FORMAT2 / "kv_cache")
    monkeypatch.setattr("measure.lab.provenance.code_hash", lambda name: "66ce8a23450ba148")
    [line] = merging.merge(source=FORMAT2, into=tmp_path / "b")
    assert line.startswith("merged kv_cache: ")
    assert _files(tmp_path / "b" / "kv_cache") == _files(FORMAT2 / "kv_cache")
    assert read_experiment(tmp_path / "b", "kv_cache").meta == read_experiment(FORMAT2, "kv_cache").meta


# Spreads the code names that version 2's naming rule missed (a plain spread_ms beside a
# timing other than total_ms): the gate compares these timings against their own spread
# now, where version 2 gave them their table's noise.
NAMED_SINCE_3 = {
    ("batching", "sweep", "step_ms"),
    ("batching", "step_costs", "step_ms"),
    ("batching", "prefill_costs", "prefill_ms"),
}


def test_the_committed_format_2_data_means_what_the_code_declares():
    """Migrated, the committed data's words are the code's (so the pages show the same
    words), and so are its spreads but for those version 2 missed."""
    from measure import registry

    for name in registry.EXPERIMENTS:
        exp, mod = read_experiment(REPO / "site_data", name), registry.load(name)
        if exp.written_version != 2 or name in AWAITING_MEASUREMENT:
            continue  # data written since states them, and the gate holds them (test_check.py)
        for t in mod.TABLES:
            stated = {c["name"]: c for c in exp.meta["tables"][t.name]["columns"]}
            for c in t.columns:
                key, said = (name, t.name, c.name), stated[c.name]
                assert said["words"] == c.words, key
                if key in NAMED_SINCE_3:
                    assert (said["noise"], c.noise) == ({}, {"spread": "spread_ms"}), key
                else:
                    assert said["noise"] == c.noise, key
        assert {v.name: v.words for v in mod.VALUES} == {k: v["words"] for k, v in exp.meta["values"].items()}, name
