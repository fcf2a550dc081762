"""Every experiment, smoke-run on a tiny model: schema, provenance and invariants."""

import json

import pytest

from measure import registry
from sitedata import read_experiment
from sitedata.schema import COMPARE, SCOPES
from tests.helpers import table_rows

META_KEYS = {
    "schema_version",
    "experiment",
    "title",
    "code_hash",
    "git_commit",
    "date",
    "duration_s",
    "model",
    "device",
    "dtype",
    "libraries",
    "profile",
    "parameters",
    "memory_method",
    "tables",
    "values",
}


@pytest.mark.smoke
@pytest.mark.parametrize("name", registry.EXPERIMENTS)
def test_schema(smoke_data, name):
    folder = smoke_data / name
    exp = read_experiment(folder.parent, name)  # verifies checksums, rows and columns
    meta = exp.meta
    assert META_KEYS <= set(meta), META_KEYS - set(meta)
    assert meta["experiment"] == name and meta["profile"] == "smoke"
    assert meta["model"]["weights"] and meta["device"]["id"]
    assert meta["tables"], "an experiment must produce at least one table"
    for tname, t in meta["tables"].items():
        rows = exp.rows(tname)
        assert list(rows[0]) == [c["name"] for c in t["columns"]], tname
        assert len(rows) == t["rows"] > 0, tname
        for c in t["columns"]:
            assert c["compare"] in COMPARE and c["scope"] in SCOPES
            assert c["name"] == c["name"].lower() and " " not in c["name"]
            # a tolerance needs a number (or an empty cell); a word a timing chose (the ceiling
            # a step sits under) has no unit and is compared as text
            if c["compare"] in ("numeric", "timing") and c.get("unit"):
                for r in rows:
                    assert r[c["name"]] == "" or float(r[c["name"]]) is not None, (tname, c["name"], r[c["name"]])
            if c["compare"] == "timing":
                assert c["scope"] == "machine", (tname, c["name"])
    for v in meta["values"].values():
        assert v["compare"] in COMPARE and v["scope"] in SCOPES


def test_every_experiment_declares_its_tables_once():
    """Declarations live at the top of each module; the result is held against them."""
    for name in registry.EXPERIMENTS:
        mod = registry.load(name)
        names = [t.name for t in mod.TABLES]
        assert names and len(set(names)) == len(names), name
        assert len({v.name for v in mod.VALUES}) == len(mod.VALUES), name


@pytest.mark.smoke
def test_kv_cache_invariants(smoke_data):
    d = smoke_data / "kv_cache"
    assert all(r["tokens_identical"] == "true" for r in table_rows(d, "identical_output"))
    assert all(r["same"] == "true" for r in table_rows(d, "generated_tokens"))
    for r in table_rows(d, "head_step"):
        n = int(r["context"])
        assert int(r["recompute_scores_bytes"]) == n * n * 4  # fp32 n x n
        assert int(r["cached_scores_bytes"]) == n * 4
        for way in ("recompute", "cached"):
            low, median, high = (float(r[f"{way}{s}_ms"]) for s in ("_low", "", "_high"))
            assert low <= median <= high and int(r[f"{way}_samples"]) >= 6
        low, ratio, high = (float(r[f"head_ratio{s}"]) for s in ("_low", "", "_high"))
        assert low <= ratio <= high  # paired round by round: the samples are not published
    meta = json.loads((d / "meta.json").read_text())
    assert {"generation_sweep", "head_sweep"} <= set(meta["notes"])
    for r in table_rows(d, "macs_total"):
        assert int(r["recompute_macs"]) > int(r["cached_macs"])


@pytest.mark.smoke
def test_kv_cache_counts_linear_macs_of_tiny_model(smoke_data):
    meta = json.loads((smoke_data / "kv_cache" / "meta.json").read_text())
    # tiny: 2 layers x (q 64x64 + k 64x32 + v 64x32 + o 64x64 + 3 x 64x128) + lm_head 64x512
    assert meta["values"]["weight_macs_per_token"]["value"] == 2 * (4096 + 2048 + 2048 + 4096 + 3 * 8192) + 32768


@pytest.mark.smoke
def test_cache_size_measurements_equal_formula(smoke_data):
    rows = table_rows(smoke_data / "cache_size", "measured")
    assert rows and all(r["matches_formula"] == "true" for r in rows)
    for r in rows:
        assert int(r["measured_bytes"]) == int(r["formula_bytes"])
    variants = table_rows(smoke_data / "cache_size", "attention_variants")
    assert [int(v["measured_bytes_per_token"]) for v in variants] == [512, 256, 128]  # 2*2*H_kv*16*2


@pytest.mark.slow
def test_qwen_architecture_matches_published_parameter_count():
    import torch

    from measure.lab.models import load_model

    m = load_model("arch:qwen2.5-0.5b", device=torch.device("cpu"), dtype=torch.float32)
    assert sum(p.numel() for p in m.model.parameters()) == 494_032_768  # the model card's count
    shape = m.shape()
    assert (shape["layers"], shape["heads"], shape["kv_heads"], shape["head_dim"]) == (24, 14, 2, 64)


@pytest.mark.slow
def test_identity_is_checked_in_float32_and_a_split_is_explained():
    """The float32 check holds for a float16 model too; a split reports the top-two gap
    there and the two paths' logit difference, from the model's real logits."""
    import torch

    from measure.experiments.kv_cache.identity import first_mismatch, float32_identity, split_finding
    from measure.lab.generation import greedy_cached, greedy_recompute
    from measure.lab.models import load_model

    half = load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float16).model
    ids = torch.tensor([[1, 5, 9, 200, 17, 3]])
    a = greedy_recompute(half, ids, 12)[0].tolist()
    b = greedy_cached(half, ids, 12)[0].tolist()
    assert float32_identity(half, ids, 12, (a, b)) == -1
    assert next(half.parameters()).dtype == torch.float16  # the copy was converted, not the model
    assert first_mismatch([1, 2, 3], [1, 2, 3]) == -1 and first_mismatch([1, 2, 3], [1, 4, 3]) == 1
    same = split_finding(half, ids, a, a)
    assert same == {"first_mismatch": -1, "split_gap": None, "split_logit_diff": None, "split_at_near_tie": False}
    forced = a[:4] + [(a[4] + 1) % 512] + a[5:]  # a made-up split at position 4
    found = split_finding(half, ids, a, forced)
    assert found["first_mismatch"] == 4 and found["split_gap"] >= 0 and found["split_logit_diff"] >= 0
    assert found["split_at_near_tie"] == (found["split_gap"] <= 2 * found["split_logit_diff"])
