"""Runs side by side: a run's key, where a run is written and merged (its own key's
folder, never another's), the format version 5 that names it, and the commands that
compare runs of one key only."""

import json
import os

import pytest

from measure.lab.provenance import code_hash
from measure.merge import merge
from sitedata import DataError, FolderError, read_experiment
from sitedata.keys import run_key, slug
from sitedata.migrate import update_to_5
from sitedata.runs import RUNS, folder_key, place, runs
from sitekit.claims import verdicts
from tests.conftest import PROVENANCE, write_data
from tests.test_cli import _tree

CPU = PROVENANCE["device"]
H200 = {"id": "cuda:NVIDIA H200:1", "type": "cuda"}
QWEN = {"name": "arch:qwen2.5-0.5b", "spec": "arch:qwen2.5-0.5b", "parameters": 1, "weights": "random"}
CPU_KEY = "cpu-x-2threads__m__float32__smoke"


def _run(root, names=("kv_cache", "batching"), n=1, **provenance):
    for name in names:
        write_data(root, name, {"t": [{"n": n}]}, code_hash=code_hash(name), **provenance)
    return root


def test_a_key_names_the_machine_model_dtype_and_profile():
    meta = {
        "device": {"id": "cpu:Intel(R) Xeon(R) Processor:2threads"},
        "model": {"name": "HuggingFaceTB/SmolLM2-135M-Instruct"},
        "dtype": "float32",
        "profile": "cpu",
    }
    assert run_key(meta) == "cpu-intel-xeon-processor-2threads__smollm2-135m-instruct__float32__cpu"
    arch = {**meta, "model": {"name": "arch:qwen2.5-0.5b"}, "device": {"id": "cuda:NVIDIA H200:1"}, "dtype": "bfloat16"}
    assert run_key(arch) == "cuda-nvidia-h200-1__arch-qwen2-5-0-5b__bfloat16__cpu"
    assert run_key(arch).split("__")[1] == "arch-qwen2-5-0-5b"
    assert slug("(TM) !!") == "unknown" and slug("ab " * 40) == "ab-" * 15 + "ab"  # 47 characters, no hyphen last


def test_format_5_writes_the_key_and_reads_older_data_with_the_key_its_fields_make(tmp_path):
    _run(tmp_path, ("kv_cache",))
    meta = json.loads((tmp_path / "kv_cache" / "meta.json").read_text())
    assert (meta["schema_version"], meta["key"]) == (5, CPU_KEY)
    old = {k: v for k, v in meta.items() if k != "key"} | {"schema_version": 4}
    assert update_to_5(old)["key"] == CPU_KEY and update_to_5({"schema_version": 4}) == {"schema_version": 5}
    (tmp_path / "kv_cache" / "meta.json").write_text(json.dumps(old))
    assert read_experiment(tmp_path, "kv_cache").meta["key"] == CPU_KEY  # migrated in memory


def test_a_key_that_its_fields_do_not_make_is_refused(tmp_path):
    _run(tmp_path, ("kv_cache",))
    path = tmp_path / "kv_cache" / "meta.json"
    path.write_text(path.read_text().replace(CPU_KEY, "cuda-y__m__float32__smoke"))
    with pytest.raises(DataError, match="names the run 'cuda-y__m__float32__smoke', but its machine"):
        read_experiment(tmp_path, "kv_cache")


def test_a_run_is_written_under_its_own_key(tmp_path):
    assert place(tmp_path / "new", CPU_KEY) == tmp_path / "new"  # nothing there yet: the primary
    _run(tmp_path)
    assert place(tmp_path, CPU_KEY) == tmp_path  # the primary's own key
    other = run_key({**PROVENANCE, "device": H200})
    assert place(tmp_path, other, ["quality"]) == tmp_path  # an experiment the primary lacks: there
    assert not (tmp_path / RUNS).exists()
    assert place(tmp_path, other, ["quality", "kv_cache"]) == tmp_path / RUNS / other and (tmp_path / RUNS).is_dir()
    with pytest.raises(FolderError, match="not a run's key"):
        place(tmp_path, "../x")


def test_runs_are_never_written_through_a_link(tmp_path):
    _run(tmp_path / "site")
    os.symlink(tmp_path, tmp_path / "site" / RUNS)
    with pytest.raises(FolderError, match="never through a link"):
        place(tmp_path / "site", run_key({**PROVENANCE, "device": H200}), ["kv_cache"])
    with pytest.raises(DataError, match="not a folder of its own"):
        runs(tmp_path / "site")


def test_a_folder_that_mixes_keys_or_a_run_under_another_key_is_refused(tmp_path):
    _run(tmp_path / "mixed", ("kv_cache",))
    _run(tmp_path / "mixed", ("batching",), device=H200)
    with pytest.raises(DataError, match="mixes runs of different keys"):
        folder_key(tmp_path / "mixed")
    site = _run(tmp_path / "site")
    wrong = site / RUNS / run_key({**PROVENANCE, "device": H200})
    _run(wrong, model=QWEN)
    with pytest.raises(DataError, match="holds a run of key cpu-x-2threads__arch-qwen2-5-0-5b"):
        runs(site)


def test_merging_runs_of_other_keys_leaves_every_other_run_byte_identical(tmp_path):
    site = _run(tmp_path / "site_data")
    primary = _tree(site)
    gpu = _run(tmp_path / "gpu", n=2, device=H200)
    lines = merge(source=gpu, into=site)
    gpu_key = run_key({**PROVENANCE, "device": H200})
    assert lines[0] == f"run {gpu_key}: beside the primary run, in {site / RUNS / gpu_key}"
    assert {k: v for k, v in _tree(site).items() if not k.startswith(RUNS)} == primary  # the primary untouched
    gpu_run = _tree(site / RUNS / gpu_key)
    qwen = _run(tmp_path / "qwen", ("kv_cache",), n=3, model=QWEN)
    merge(source=qwen, into=site)
    assert [(r.key, r.primary) for r in runs(site)] == [
        (CPU_KEY, True),
        ("cpu-x-2threads__arch-qwen2-5-0-5b__float32__smoke", False),
        (gpu_key, False),
    ]
    assert _tree(site / RUNS / gpu_key) == gpu_run
    assert {k: v for k, v in _tree(site).items() if not k.startswith(RUNS)} == primary
    merge(source=_run(tmp_path / "again", ("kv_cache",), n=4, device=H200), into=site)  # the same key again
    assert read_experiment(site / RUNS / gpu_key, "kv_cache").rows("t")[0]["n"] == "4"
    assert read_experiment(site / RUNS / gpu_key, "batching").rows("t")[0]["n"] == "2"
    assert {k: v for k, v in _tree(site).items() if not k.startswith(RUNS)} == primary


def test_a_folder_that_gathers_two_keys_merges_each_to_its_own_place(tmp_path):
    """A primary may gather experiments of several keys (the smoke folder does); each
    goes where its own key's run is."""
    site = _run(tmp_path / "site_data")
    mixed = _run(tmp_path / "mixed", ("kv_cache",), n=7, device=H200)
    _run(mixed, ("batching",), n=8)
    assert [(r.key, r.experiments) for r in runs(mixed)] == [
        (CPU_KEY, ("batching",)),
        (run_key({**PROVENANCE, "device": H200}), ("kv_cache",)),
    ]
    merge(source=mixed, into=site)
    assert read_experiment(site, "batching").rows("t")[0]["n"] == "8"  # the same key: replaced
    assert read_experiment(site, "kv_cache").rows("t")[0]["n"] == "1"  # another key's: left, the new one beside
    h200 = site / RUNS / run_key({**PROVENANCE, "device": H200})
    assert read_experiment(h200, "kv_cache").rows("t")[0]["n"] == "7"
    with pytest.raises(DataError, match="mixes runs of different keys"):
        folder_key(mixed)


def test_verdicts_compare_runs_of_one_key(tmp_path, capsys):
    a = _run(tmp_path / "a")
    b = _run(tmp_path / "b", device=H200)
    assert verdicts.main([str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "verdicts compare runs of one key" in err and CPU_KEY in err
    assert verdicts.main([str(a), "--key", "cuda-z__m__float32__smoke"]) == 2
    assert "holds no run of key cuda-z__m__float32__smoke; it holds " + CPU_KEY in capsys.readouterr().err


def _values_run(root, speedup, low, high, **provenance):
    values = {"speedup": speedup, "speedup_low": low, "speedup_high": high}
    units = {v: "x" for v in values}
    return write_data(root, "kv_cache", {"t": [{"n": 1}]}, values, units, code_hash=code_hash("kv_cache"), **provenance)


def test_the_runs_table_sets_every_run_side_by_side_the_primary_first(tmp_path):
    from sitekit.rendering.markers import PageContext
    from sitekit.rendering.pagedata import SiteData, SiteDataError
    from sitekit.rendering.runs_marker import runs as runs_table

    site = tmp_path / "site_data"
    _values_run(site, 3.25, 3.0, 3.5)
    _values_run(tmp_path / "qwen", 1.5, 1.25, 1.75, model={**QWEN, "trained": False})
    merge(source=tmp_path / "qwen", into=site)
    ctx = PageContext(data=SiteData(site), page="kv-cache.md", url_prefix="")
    html = runs_table(ctx, "kv_cache", ["speedup"], headers=["Speed-up"])
    rows = html.split("<tr>")[2:]
    assert len(rows) == 2 and "this page’s run" in rows[0] and "this page’s run" not in rows[1]
    assert "3.25×" in rows[0] and "[3.00×, 3.50×]" in rows[0]
    assert "1.50×" in rows[1] and "[1.25×, 1.75×]" in rows[1] and "random weights" in rows[1]
    assert "<th>Speed-up</th>" in html and ctx.read == ["kv_cache"]  # the provenance names the primary's
    with pytest.raises(SiteDataError, match="run cpu-x-2threads__m__float32__smoke has no value 'missing'"):
        runs_table(ctx, "kv_cache", ["missing"], headers=["M"])
    with pytest.raises(SiteDataError, match="as many headers"):
        runs_table(ctx, "kv_cache", ["speedup"], headers=[])
    with pytest.raises(SiteDataError, match="no run in site_data holds 'batching'"):
        runs_table(ctx, "batching", ["speedup"], headers=["S"])


def test_an_interval_is_found_by_either_way_its_bounds_are_named():
    from sitekit.rendering.runs_marker import bounds

    assert bounds("decode_ms", {"decode_low_ms": 1}) == ("decode_low_ms", "decode_high_ms")
    assert bounds("speedup", {"speedup_low": 1}) == ("speedup_low", "speedup_high")
    assert bounds("split_ratio", {}) == ("split_ratio_low", "split_ratio_high")


def test_a_json_table_of_every_run_holds_the_rows_of_each(tmp_path):
    """The calculator's measured bandwidths come from every run's calibration rows."""
    from sitekit.rendering.markers import PageContext, json_table
    from sitekit.rendering.pagedata import SiteData

    site = _run(tmp_path / "site_data", ("kv_cache",), n=1)
    merge(source=_run(tmp_path / "gpu", ("kv_cache",), n=2, device=H200), into=site)
    ctx = PageContext(data=SiteData(site), page="calculator.md", url_prefix="")

    def rows(html):
        return json.loads(html.split(">", 1)[1].rsplit("</script>", 1)[0])["rows"]

    assert rows(json_table(ctx, "kv_cache.t")) == [{"n": 1}]
    assert rows(json_table(ctx, "kv_cache.t", every_run=True)) == [{"n": 1}, {"n": 2}]


@pytest.mark.slow
def test_a_run_of_another_key_is_written_beside_the_primary_and_leaves_it_alone(tmp_path):
    from tests.test_cli import SMOKE, run_cli

    site = _run(tmp_path / "site_data", ("chapter",), device=H200)
    before = _tree(site)
    done = run_cli("run", "--out", str(site), *SMOKE)
    assert done.returncode == 0, done.stderr
    assert f"{site} holds another run as its primary: this run (" in done.stderr
    (beside,) = [r for r in runs(site) if not r.primary]
    assert beside.key.endswith("__arch-tiny__float32__smoke") and beside.root == site / RUNS / beside.key
    assert read_experiment(beside.root, "chapter").meta["key"] == beside.key
    assert {k: v for k, v in _tree(site).items() if not k.startswith(RUNS)} == before


def test_the_gate_compares_a_run_with_the_committed_run_of_its_key_or_says_it_has_none(tmp_path, capsys):
    from measure.check import _committed_run

    site = _run(tmp_path / "site_data")
    gpu = _run(tmp_path / "gpu", device=H200)
    assert _committed_run(site, gpu) == site  # none of its key: the primary, said
    gpu_key = run_key({**PROVENANCE, "device": H200})
    said = capsys.readouterr().out
    assert f"holds no run of key {gpu_key}: compared with its primary run, where the cells" in said
    assert f"make merge FROM={gpu} adds this run beside it" in said
    merge(source=gpu, into=site)
    assert _committed_run(site, gpu) == site / RUNS / gpu_key
    assert _committed_run(site, _run(tmp_path / "again")) == site
    assert _committed_run(site, tmp_path / "empty") == site  # nothing to read: each experiment's reading says why
