"""§6 smoke run (embedded trained model, a short prompt): the statistics agree with each other."""

import csv
import json


def _rows(folder, table):
    with open(folder / f"{table}.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_histogram_counts_every_dimension(smoke_data):
    d = smoke_data / "activation_outliers"
    meta = json.loads((d / "meta.json").read_text())
    hidden = meta["values"]["hidden"]["value"]
    hist = _rows(d, "histogram")
    assert sum(int(r["dims"]) for r in hist) == hidden
    assert sum(int(r["dims_rest"]) for r in hist) == hidden
    assert float(hist[-1]["bin_high"]) > meta["values"]["mid_top_value"]["value"]


def test_layers_and_int8_are_consistent(smoke_data):
    d = smoke_data / "activation_outliers"
    meta = json.loads((d / "meta.json").read_text())
    v = {k: x["value"] for k, x in meta["values"].items()}
    layers = _rows(d, "layers")
    assert len(layers) == v["layers"]
    assert all(float(r["top1_max"]) >= float(r["top2_max"]) >= float(r["median_dim_max"]) for r in layers)
    assert v["biggest_value"] == max(float(r["top1_max"]) for r in layers)
    # leaving the largest dimensions out can only shrink the scale
    assert v["int8_scale_excluded"] <= v["int8_scale_all"]
    for r in _rows(d, "int8"):
        assert 1 <= int(r["levels_used"]) <= 256


def test_the_gap_counts_only_the_octaves_between_the_outlier_and_the_rest():
    from measure.experiments.activation_outliers import _gap_below_top

    dims = [0, 0, 0, 30, 48, 1, 0, 0, 0, 1]  # three empty bins under the heap, three above it
    assert _gap_below_top([{"dims": d} for d in dims]) == 3
    assert _gap_below_top([{"dims": d} for d in [5, 1]]) == 0
    assert _gap_below_top([{"dims": d} for d in [0, 2, 0]]) == 1  # one occupied bin: all below it
