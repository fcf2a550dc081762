"""The low-bit kernels of the weight-quantization page: each layer against hand-worked
codes and its dequantized reference, the bytes it stores, and the decode variants'
failures reported as rows."""

import json

import pytest
import torch

from measure.experiments.weight_quantization import lowbit_decode as ld
from measure.lab import lowbit_kernels as lk
from measure.lab import lowbit_variants as lv
from measure.lab.roofline_in_rounds import PROBES
from tests.helpers import paired_ratio, table_rows


def _linear(w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.nn.Linear:
    lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=bias is not None)
    with torch.no_grad():
        lin.weight.copy_(w)
        if bias is not None:
            lin.bias.copy_(bias)
    return lin


def test_int8_codes_by_hand():
    # Row 0's largest magnitude is 127, so its scale is 1 and the codes are the rounded
    # weights; row 1 is row 0 halved: the same codes at scale 0.5.
    w = torch.tensor([[127.0, -3.0, 0.4, 5.6], [63.5, -1.5, 0.2, 2.8]])
    codes, scale = lk.int8_row_codes(w)
    assert codes.tolist() == [[127, -3, 0, 6], [127, -3, 0, 6]]
    assert scale.tolist() == [1.0, 0.5]


def test_int8_kernel_computes_with_its_codes():
    w = torch.tensor([[127.0, -3.0, 0.4, 5.6], [63.5, -1.5, 0.2, 2.8]])
    layer, reference = lk.build("int8_weight_only", _linear(w, torch.tensor([1.0, -1.0])), dtype=torch.float32)
    assert reference.tolist() == [[127.0, -3.0, 0.0, 6.0], [63.5, -1.5, 0.0, 3.0]]
    with torch.inference_mode():
        y = layer(torch.tensor([[[1.0, 2.0, 3.0, 4.0]]]))
    assert y.shape == (1, 1, 2)
    # 127 - 6 + 0 + 24 = 145, plus the bias 1; half of it, minus 1.
    assert y.flatten().tolist() == pytest.approx([146.0, 71.5])


def test_int4_codes_by_hand_and_the_packing_round_trip():
    # Every group of 32 holds 0..15 twice: minimum 0, maximum 15, so the step is 1, the
    # codes are the weights themselves, and the kernel's zero is 0 + 8 steps.
    row = torch.arange(16.0).repeat(2)
    w = torch.stack([row + 100 * r for r in range(16)])  # 16 rows: the packing's block
    codes, scale, zero = lk.int4_group_codes(w, 32, torch.float32)
    assert torch.equal(codes, row.to(torch.int32).expand(16, 32))
    assert scale.flatten().tolist() == [1.0] * 16
    assert zero.flatten().tolist() == [100.0 * r + 8 for r in range(16)]
    layer, reference = lk.build("int4_weight_only", _linear(w), dtype=torch.float32, group=32)
    assert torch.equal(reference, w)
    # The identity through the kernel reads every code back out of the packed bytes,
    # whatever the CPU's packed layout.
    with torch.inference_mode():
        assert torch.equal(layer(torch.eye(32)).t(), w)


@pytest.mark.parametrize(
    ("kind", "dtype", "group"),
    [
        ("dense", torch.float32, None),
        ("dense", torch.bfloat16, None),
        ("int8_weight_only", torch.float32, None),
        ("int8_weight_only", torch.bfloat16, None),
        ("int4_weight_only", torch.bfloat16, 32),
        ("int4_weight_only", torch.float32, 64),
        ("dynamic_int8", torch.float32, None),
    ],
)
def test_every_kernel_agrees_with_its_reference_within_tolerance(kind, dtype, group):
    g = torch.Generator().manual_seed(0)
    lin = _linear(torch.randn(48, 128, generator=g), torch.randn(48, generator=g))
    layer, reference = lk.build(kind, lin, dtype=dtype, group=group)
    tolerance = {torch.float32: lv.TOL_FP32, torch.bfloat16: lv.TOL_BF16}[dtype]
    if kind == "dynamic_int8":
        tolerance = lv.TOL_DYNAMIC
    x = torch.randn(3, 128, generator=g).to(dtype)
    assert lk.relative_error(layer, reference, x) <= tolerance
    # and the check can fail: against another weight the same output is far off
    assert lk.relative_error(layer, reference.flip(0), x) > 0.5


def test_dynamic_int8_differs_by_its_activation_rounding():
    g = torch.Generator().manual_seed(1)
    lin = _linear(torch.randn(32, 256, generator=g))
    layer, reference = lk.build("dynamic_int8", lin, dtype=torch.float32)
    err = lk.relative_error(layer, reference, torch.randn(1, 256, generator=g))
    assert lv.TOL_FP32 < err < lv.TOL_DYNAMIC


def test_bytes_per_weight_by_hand():
    # int4 group-128 with bf16 scales and zeros: 4 + 2 x 16 / 128 = 4.25 bits per weight.
    assert lk.int4_storage_bytes(576, 1536, 128, 2) == 576 * 1536 // 2 + 576 * 12 * 2 * 2 == 470_016
    assert 8 * lk.int4_storage_bytes(576, 1536, 128, 2) / (576 * 1536) == 4.25
    # group-32, float32 scales and zeros: 4 + 2 x 32 / 32 = 6 bits.
    assert 8 * lk.int4_storage_bytes(64, 64, 32, 4) / (64 * 64) == 6.0
    # int8 per row with bf16 scales: one byte per weight and two per row.
    assert lk.int8_storage_bytes(576, 1536, 2) == 884_736 + 1_152


@pytest.mark.parametrize(
    ("kind", "dtype", "group"),
    [
        ("int8_weight_only", torch.bfloat16, None),
        ("int4_weight_only", torch.bfloat16, 32),
        ("dense", torch.float32, None),
    ],
)
def test_storage_bytes_are_the_stored_tensors(kind, dtype, group):
    layer, _ = lk.build(kind, _linear(torch.randn(32, 64)), dtype=dtype, group=group)
    stored = sum(t.numel() * t.element_size() for name, t in layer.state_dict().items() if not name.endswith("bias"))
    assert layer.storage_bytes() == stored


def test_shapes_the_int4_kernel_refuses_are_named():
    with pytest.raises(ValueError, match="a row of 576 weights does not divide into groups of 128"):
        lk.int4_group_codes(torch.zeros(16, 576), 128, torch.bfloat16)
    with pytest.raises(ValueError, match="row count divisible by 16, not 24"):
        lk.int4_group_codes(torch.zeros(24, 64), 32, torch.bfloat16)
    with pytest.raises(ValueError, match="unknown kind of layer 'int3'"):
        lk.build("int3", _linear(torch.zeros(16, 32)), dtype=torch.float32)


@pytest.fixture(scope="module")
def tiny():
    from measure.lab.models import load_model

    return load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32, log=lambda *_: None).model


def _measure(model, variant):
    token = torch.tensor([[1]])
    p = ld.prepare_variant(model, variant, token=token, cache_tokens=4)
    assert all((x is None) == (p.row["status"] != "ok") for x in (p.step, p.reset, p.model, p.cache))
    return p.row


def test_a_variant_that_cannot_be_built_is_a_row(tiny, monkeypatch):
    def refuse(*args, **kwargs):
        raise RuntimeError("no such kernel on this device\nsecond line")

    monkeypatch.setattr(lk, "build", refuse)
    row = _measure(tiny, ld.VARIANTS["int8_bf16"])
    assert row["status"] == "not built: RuntimeError: no such kernel on this device"
    assert "step_ms" not in row


def test_a_step_that_fails_is_a_row(tiny, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("kernel crashed")

    monkeypatch.setattr(ld, "decode_step", broken)
    row = _measure(tiny, ld.VARIANTS["fp32"])
    assert row["status"] == "step failed: RuntimeError: kernel crashed"
    assert row["max_rel_error"] < lv.TOL_FP32  # it was built and checked first


def test_a_wrong_kernel_is_reported_and_not_timed(tiny, monkeypatch):
    monkeypatch.setattr(torch, "_weight_int8pack_mm", lambda x, w, s: torch.zeros(x.shape[0], w.shape[0]))
    row = _measure(tiny, ld.VARIANTS["int8_fp32"])
    assert row["status"] == "wrong: above tolerance, not timed"
    assert row["max_rel_error"] == 1.0
    assert "step_ms" not in row


def test_the_model_is_left_untouched(tiny):
    before = {k: v.clone() for k, v in tiny.state_dict().items()}
    row = _measure(tiny, ld.VARIANTS["int4_g32_bf16"])
    assert row["status"] == "ok"
    after = tiny.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(isinstance(m, torch.nn.Linear) for _, m in lv.projection_layers(tiny))


def _keyed(folder, table):
    """The rows by variant where the table has one, else by position."""
    return {r["variant"] if "variant" in r else i: r for i, r in enumerate(table_rows(folder, table))}


@pytest.mark.smoke
def test_the_variant_table_on_smoke(smoke_data):
    d = smoke_data / "weight_quantization"
    rows = _keyed(d, "decode_kernels")
    assert list(rows) == list(ld.VARIANTS)
    meta = json.loads((d / "meta.json").read_text())
    bandwidth = meta["run"]["bandwidth_gb_s"] * 1e9  # the run's one bandwidth, its calibration's
    low_bw, high_bw = meta["run"]["bandwidth_low_gb_s"] * 1e9, meta["run"]["bandwidth_high_gb_s"] * 1e9
    samples = meta["values"]["kernel_samples_ms"]["value"]
    for r in rows.values():
        if r["status"] != "ok":
            assert r["step_ms"] == "" and r["floor_ms"] == "" and r["fraction_of_floor"] == ""
            continue
        step, low, high = (float(r[k]) for k in ("step_ms", "step_low_ms", "step_high_ms"))
        assert low <= step <= high and int(r["step_samples"]) >= 6
        assert float(r["max_rel_error"]) <= float(r["tolerance"])
        assert float(r["floor_ms"]) == pytest.approx(int(r["weight_bytes"]) / bandwidth * 1e3)
        # the fp32 step over this one, paired round by round in the one sweep of every kernel
        speedup = tuple(float(r[f"speedup_vs_fp32{s}"]) for s in ("", "_low", "_high"))
        assert speedup == pytest.approx(paired_ratio(samples["fp32"], samples[r["variant"]]), rel=1e-3)
        # floor / step, as a percentage on the page; its range from the bandwidth's and the step's intervals
        assert float(r["fraction_of_floor"]) == pytest.approx(float(r["floor_ms"]) / step)
        assert float(r["fraction_of_floor_low"]) == pytest.approx(int(r["weight_bytes"]) / high_bw * 1e3 / high)
        assert float(r["fraction_of_floor_high"]) == pytest.approx(int(r["weight_bytes"]) / low_bw * 1e3 / low)
    # a variant's step, its kernel's ceiling probe ("ceiling <variant>") or one of the
    # roofline's probes ("roofline probe copy", ...), timed in the same sweep
    missed = {m.removeprefix("ceiling ") for m in meta["notes"]["kernel_sweep"]["missed"]}
    assert missed - {" ".join(probe) for probe in PROBES} <= set(rows)
    values = meta["values"]
    for term in ("gb_s", "gflop_s"):
        assert 0 < values[f"kernel_round_low_{term}"]["value"] <= values[f"kernel_round_{term}"]["value"]
        assert values[f"kernel_round_{term}"]["value"] <= values[f"kernel_round_high_{term}"]["value"]
    assert values["kernel_round_operator_us"]["value"] > 0
    assert float(rows["fp32"]["bits_per_weight"]) == 32.0 and float(rows["bf16"]["bits_per_weight"]) == 16.0
    size = {k: int(r["weight_bytes"]) for k, r in rows.items() if r["weight_bytes"]}
    assert size["int4_g64_bf16"] < size["int4_g32_bf16"] < size["int8_bf16"] < size["bf16"] < size["fp32"]
    # The tiny model's rows of 64 weights cannot be cut into groups of 128: a row, not a crash.
    assert rows["int4_g128_bf16"]["status"].startswith("not built: ValueError: a row of 64 weights")


@pytest.mark.smoke
def test_the_variant_values_on_smoke(smoke_data):
    d = smoke_data / "weight_quantization"
    values = {k: v["value"] for k, v in json.loads((d / "meta.json").read_text())["values"].items()}
    rows = _keyed(d, "decode_kernels")
    ok = {k: r for k, r in rows.items() if r["status"] == "ok"}
    assert values["kernel_timed"] == len(ok) and values["kernel_not_run"] == len(rows) - len(ok)
    assert values["kernel_wrong"] == 0
    lowbit = {k: r for k, r in ok.items() if k not in ("fp32", "bf16")}

    def named(r):  # int8 x int8's label names its activations already: not told twice
        return r["label"] if r["variant"] == "dynamic_int8" else f"{r['label']}, {r['activations']} activations"

    best = min(lowbit.values(), key=lambda r: float(r["step_ms"]))
    assert values["kernel_lowbit_fastest"] == named(best)
    assert values["kernel_lowbit_fastest_bytes_saving"] == pytest.approx(
        int(rows["fp32"]["weight_bytes"]) / int(best["weight_bytes"])
    )
    closest = max(lowbit.values(), key=lambda r: float(r["fraction_of_floor"]))
    assert values["kernel_lowbit_closest"] == named(closest)
    assert values["kernel_lowbit_best_fraction_of_floor"] == float(closest["fraction_of_floor"])
    assert values["kernel_fp32_fraction_of_floor"] == float(rows["fp32"]["fraction_of_floor"])
    assert set(values["kernel_samples_ms"]) == set(ok)


def test_a_variant_is_named_with_its_activations_once():
    from measure.experiments.weight_quantization.kernels import _described

    assert _described({"label": "int4 weight-only, group 32", "activations": "bfloat16"}) == (
        "int4 weight-only, group 32, bfloat16 activations"
    )
    assert _described({"label": "int8 weights × int8 activations", "activations": "float32"}) == (
        "int8 weights × int8 activations"
    )
    assert _described(None) is None
