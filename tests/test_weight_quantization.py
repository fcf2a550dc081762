"""§5 smoke run (tiny random-weights model): schema-level invariants of the error tables."""

import json

import pytest

from tests.helpers import table_rows

pytestmark = pytest.mark.smoke  # every test reads the smoke run


def test_errors_cover_every_projection_matrix(smoke_data):
    d = smoke_data / "weight_quantization"
    matrices = table_rows(d, "matrix_errors")
    assert len(matrices) == 2 * 7  # tiny: 2 layers x q, k, v, o, gate, up, down
    for r in table_rows(d, "errors"):
        errs = [float(m[r["scheme"]]) for m in matrices]
        assert abs(float(r["mean_rel_error"]) - sum(errs) / len(errs)) < 1e-12
        assert float(r["worst_rel_error"]) == max(errs)


def test_finer_scales_do_not_lose_on_gaussian_weights(smoke_data):
    by = {r["scheme"]: float(r["mean_rel_error"]) for r in table_rows(smoke_data / "weight_quantization", "errors")}
    assert by["int8_row"] <= by["int8_tensor"]
    assert by["int4_row"] <= by["int4_tensor"]
    assert by["int8_row"] < by["int4_row"]


def test_random_weights_are_not_on_a_distributed_grid(smoke_data):
    meta = json.loads((smoke_data / "weight_quantization" / "meta.json").read_text())
    assert meta["values"]["already_on_q4_1_grid"]["value"] is False
    for r in table_rows(smoke_data / "weight_quantization", "distributed_grid"):
        assert float(r["q4_1_requantize_error"]) > 0.01


def test_outlier_codes_count_every_weight(smoke_data):
    d = smoke_data / "weight_quantization"
    m = table_rows(d, "outlier_matrix")[0]
    codes = table_rows(d, "outlier_codes")
    assert sum(int(r["all_weights"]) for r in codes) == int(m["rows"]) * int(m["cols"])


def test_each_kernel_step_is_predicted_and_split_into_its_multiplies_and_the_rest(smoke_data):
    """Every timed variant: the roofline's prediction with its kernel's own ceiling (the
    variant's weights as stored, not the fp32 model's), its multiplies, profiled, and the
    rest of the step; the cap is the fp32 step over the smallest rest
    resolved above zero."""
    d = smoke_data / "weight_quantization"
    meta = json.loads((d / "meta.json").read_text())
    rows = [r for r in table_rows(d, "decode_kernels") if r["status"] == "ok"]
    for r in rows:
        memory, compute, fixed = (float(r[f"step_{t}_ms"]) for t in ("memory", "compute", "fixed"))
        assert float(r["step_predicted_ms"]) == pytest.approx(max(memory, compute) + fixed)
        assert int(r["step_moved_bytes"]) >= int(r["weight_bytes"])
        assert float(r["kernel_gflop_s"]) > 0 and int(r["step_ops"]) > 0
        assert float(r["rest_ms"]) == pytest.approx(float(r["step_ms"]) - float(r["matmul_ms"]))
        assert float(r["rest_low_ms"]) == pytest.approx(float(r["step_low_ms"]) - float(r["matmul_high_ms"]))
    # every variant does the same arithmetic: the FLOPs counted are the same
    assert len({int(r["step_flops"]) for r in rows}) == 1
    v = {k: x["value"] for k, x in meta["values"].items()}
    # only a rest its interval holds above zero counts (decomposition.cap_values)
    resolved = [float(r["rest_ms"]) for r in rows if float(r["rest_low_ms"]) > 0]
    assert (v["kernel_cap"] is None) == (not resolved)
    if resolved:
        assert v["kernel_cap"] == pytest.approx(v["kernel_fp32_step_ms"] / min(resolved))
