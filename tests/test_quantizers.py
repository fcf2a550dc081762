"""The quantizers against hand-worked matrices, round trips and properties."""

import pytest
import torch

from measure.lab import quantizers as q
from measure.lab.quantizers import SCHEMES, Scheme, bits_per_weight, dequantize, fake_quantize, quantize

UNIFORM = [s for s in SCHEMES.values() if s.levels == "uniform"]

# bitsandbytes' published NF4 table (functional.py, ``create_normal_map`` output),
# the levels QLoRA's appendix lists.
NF4_PUBLISHED = [
    -1.0,
    -0.6961928009986877,
    -0.5250730514526367,
    -0.39491748809814453,
    -0.28444138169288635,
    -0.18477343022823334,
    -0.09105003625154495,
    0.0,
    0.07958029955625534,
    0.16093020141124725,
    0.24611230194568634,
    0.33791524171829224,
    0.44070982933044434,
    0.5626170039176941,
    0.7229568362236023,
    1.0,
]


def test_nf4_levels_match_the_published_table():
    assert torch.allclose(q.nf4_levels(), torch.tensor(NF4_PUBLISHED), atol=1e-6)


def test_int4_per_tensor_hand_worked():
    # absmax 1.75 -> scale 1.75 / 7 = 0.25 (exact in binary); W / scale = [7, -2.5, 1.2, 0]
    # round half to even: -2.5 -> -2; 1.2 -> 1.
    w = torch.tensor([[1.75, -0.625], [0.3, 0.0]])
    qt = quantize(w, "int4_tensor")
    assert qt.codes.view(-1).tolist() == [7, -2, 1, 0]
    assert qt.scales.view(-1).tolist() == [0.25]
    assert dequantize(qt).tolist() == [[1.75, -0.5], [0.25, 0.0]]


def test_int4_per_row_hand_worked():
    # row 0: scale 0.25, codes [7, -2]; row 1: scale 0.3 / 7, codes [7, 0]: exact.
    w = torch.tensor([[1.75, -0.625], [0.3, 0.0]])
    qt = quantize(w, "int4_row")
    assert qt.codes.tolist() == [[7, -2], [7, 0]]
    assert torch.allclose(dequantize(qt), torch.tensor([[1.75, -0.5], [0.3, 0.0]]), rtol=0, atol=1e-7)


def test_int4_group_hand_worked():
    # groups of 2 in row-major order: [1.75, 0.25] scale 0.25 -> [7, 1];
    # [0.07, -0.035] scale 0.01 -> [7, -3.5 -> -4] -> [0.07, -0.04].
    w = torch.tensor([[1.75, 0.25, 0.07, -0.035]])
    g2 = Scheme(name="g2", label="int4 group-2", bits=4, granularity="group", group=2)
    assert quantize(w, g2).codes.tolist() == [[7, 1], [7, -4]]
    assert torch.allclose(fake_quantize(w, g2), torch.tensor([[1.75, 0.25, 0.07, -0.04]]), atol=1e-7)
    # one scale for all four: the small pair is rounded to zero
    assert fake_quantize(w, "int4_tensor").tolist() == [[1.75, 0.25, 0.0, 0.0]]


def test_int8_per_tensor_hand_worked():
    # absmax 127 -> scale 1: integers survive, 0.5 rounds to 0 and 1.5 to 2 (half to even)
    w = torch.tensor([127.0, -3.0, 0.5, 1.5])
    assert fake_quantize(w, "int8_tensor").tolist() == [127.0, -3.0, 0.0, 2.0]


def test_nf4_hand_worked():
    # absmax 2: x / 2 = [1, 0.45, -0.1, 0] -> nearest levels 1, 0.4407, -0.0911, 0
    levels = q.nf4_levels()
    w = torch.tensor([2.0, 0.9, -0.2, 0.0] + [0.0] * 60)
    qt = quantize(w, "nf4_b64")
    assert qt.codes.view(-1)[:4].tolist() == [15, 12, 6, 7]
    expected = torch.stack([levels[15], levels[12], levels[6], levels[7]]) * 2
    assert torch.equal(dequantize(qt)[:4], expected)


def test_bits_per_weight_including_scales():
    assert bits_per_weight("int4_g128", (576, 1536)) == 4.125  # spec §5.3: 4 + 16/128
    assert bits_per_weight("nf4_b64", (576, 1536)) == 4.25
    assert bits_per_weight("int4_g64", (576, 1536)) == bits_per_weight("nf4_b64", (576, 1536))
    assert bits_per_weight("int8_row", (576, 1536)) == 8 + 16 / 1536
    assert bits_per_weight("int4_tensor", (576, 1536)) == 4 + 16 / (576 * 1536)


def _grid_matrix(scheme: Scheme, rows: int = 8, cols: int = 128, seed: int = 0) -> torch.Tensor:
    """A matrix already on ``scheme``'s grid: codes times power-of-two scales, every scope
    holding its extreme code so that absmax recovers the scale exactly."""
    g = torch.Generator().manual_seed(seed)
    if scheme.granularity == "tensor":
        scope = rows * cols
    elif scheme.granularity == "row":
        scope = cols
    else:
        scope = scheme.group
    n_scopes = rows * cols // scope
    scales = 2.0 ** torch.randint(-8, 0, (n_scopes, 1), generator=g).float()
    if scheme.levels == "nf4":
        idx = torch.randint(0, 16, (n_scopes, scope), generator=g)
        idx[:, 0] = 15
        values = q.nf4_levels()[idx] * scales
    else:
        codes = torch.randint(-scheme.qmax, scheme.qmax + 1, (n_scopes, scope), generator=g)
        codes[:, 0] = scheme.qmax
        values = codes.float() * scales
    return values.reshape(rows, cols)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_matrix_on_the_grid_reconstructs_exactly(name):
    w = _grid_matrix(SCHEMES[name])
    assert torch.equal(fake_quantize(w, name), w)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_round_trip_is_idempotent_and_keeps_shape(name):
    w = torch.randn(16, 192, generator=torch.Generator().manual_seed(1)) * 0.02
    once = fake_quantize(w, name)
    assert once.shape == w.shape and once.dtype == w.dtype
    assert torch.allclose(fake_quantize(once, name), once, rtol=0, atol=1e-7)
    assert q.levels_used(quantize(w, name)) <= (16 if SCHEMES[name].levels == "nf4" else 2 * SCHEMES[name].qmax + 1)


@pytest.mark.parametrize("name", list(SCHEMES))
def test_zeros_stay_zero(name):
    w = torch.zeros(4, 128)
    assert torch.equal(fake_quantize(w, name), w)
    w[0, :64] = torch.linspace(-1, 1, 64)  # zero rows and groups next to non-zero ones
    out = fake_quantize(w, name)
    assert torch.isfinite(out).all() and torch.equal(out[1:], w[1:])


def test_single_huge_outlier():
    g = torch.Generator().manual_seed(2)
    w = torch.randn(8, 128, generator=g) * 0.02
    w[3, 5] = 1000.0
    # one tensor-wide int4 scale: the outlier is exact, every other weight becomes zero
    t = fake_quantize(w, "int4_tensor")
    assert t[3, 5] == 1000.0
    others = torch.ones_like(w, dtype=torch.bool)
    others[3, 5] = False
    assert (t[others] == 0).all()
    # per row: only the outlier's row collapses; groups of 64: only its group
    r = fake_quantize(w, "int4_row")
    assert (r[3, torch.arange(128) != 5] == 0).all()
    assert q.relative_error(torch.cat([w[:3], w[4:]]), torch.cat([r[:3], r[4:]])) < 0.2
    g64 = fake_quantize(w, "int4_g64")
    assert (g64[3, :64][torch.arange(64) != 5] == 0).all()
    assert q.relative_error(w[3, 64:], g64[3, 64:]) < 0.2
    # NF4 block 64 the same way; the outlier itself is exact (it is the block's absmax)
    n = fake_quantize(w, "nf4_b64")
    assert n[3, 5] == 1000.0 and q.relative_error(w[3, 64:], n[3, 64:]) < 0.2


def _heavy_tailed(seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(64, 512, generator=g) * 0.02
    hits = torch.randint(0, w.numel(), (20,), generator=g)
    w.view(-1)[hits] *= 15  # a few outliers, as trained matrices have
    return w


@pytest.mark.parametrize("seed", range(5))
def test_step_never_grows_when_the_group_shrinks(seed):
    """The guaranteed property: a weight's scale (step) under a group of k/2 is at most its
    scale under a group of k (nested groups), so the rounding bound step/2 never grows."""
    w = _heavy_tailed(seed)
    prev_step = None
    for k in (w.numel(), 512, 128, 64, 32, 16):
        s = Scheme(name=f"g{k}", label="", bits=4, granularity="group", group=k)
        qt = quantize(w, s)
        step = qt.scales.expand_as(qt.codes).reshape(w.shape)
        err = (w - dequantize(qt)).abs()
        assert (err <= step / 2 + 1e-9).all()
        if prev_step is not None:
            assert (step <= prev_step).all()
        prev_step = step


@pytest.mark.parametrize("seed", range(5))
def test_error_never_grows_when_the_group_shrinks_on_real_sized_data(seed):
    w = _heavy_tailed(seed)
    errs = [q.relative_error(w, fake_quantize(w, n)) for n in ("int4_tensor", "int4_row", "int4_g128", "int4_g64")]
    assert errs == sorted(errs, reverse=True), errs
    assert q.relative_error(w, fake_quantize(w, "int8_row")) <= q.relative_error(w, fake_quantize(w, "int8_tensor"))


def test_smaller_group_can_lose_on_a_handful_of_weights():
    """Why the property above is stated for the step and for matrices, not per weight:
    [7, 1, 6, 2] x 0.25 is on the grid of one group of 4 (exact), but the pair [6, 2]
    alone gets scale 6/7 x 0.25 and 2 x 0.25 no longer lands on a level."""
    w = torch.tensor([7.0, 1.0, 6.0, 2.0]) * 0.25
    g4 = Scheme(name="g4", label="", bits=4, granularity="group", group=4)
    g2 = Scheme(name="g2", label="", bits=4, granularity="group", group=2)
    assert q.relative_error(w, fake_quantize(w, g4)) == 0.0
    assert q.relative_error(w, fake_quantize(w, g2)) > 0.0


def test_nf4_beats_uniform_levels_on_normal_weights_at_equal_bits():
    w = torch.randn(256, 512, generator=torch.Generator().manual_seed(3))
    assert q.relative_error(w, fake_quantize(w, "nf4_b64")) < q.relative_error(w, fake_quantize(w, "int4_g64"))


def test_group_that_does_not_divide_the_size_is_padded():
    w = torch.randn(3, 100, generator=torch.Generator().manual_seed(4))
    out = fake_quantize(w, "int4_g64")  # 300 = 4 x 64 + 44
    assert out.shape == w.shape
    assert bits_per_weight("int4_g64", (3, 100)) == 4 + 16 * 5 / 300


def test_quantize_model_touches_projection_matrices_only():
    from measure.lab.models import load_model

    loaded = load_model("arch:tiny", device=torch.device("cpu"), dtype=torch.float32)
    model = loaded.model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    copy = q.quantized_copy(model, "int4_tensor")
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())  # original untouched
    layers = q.projection_layers(model)
    assert len(layers) == 2 * 7  # tiny: 2 layers x q, k, v, o, gate, up, down
    changed = {k for k, v in copy.state_dict().items() if not torch.equal(v, before[k])}
    assert changed == {f"{name}.weight" for name, _ in layers}
    assert q.quantize_model_(model, SCHEMES["int8_row"]) == 14
    assert torch.equal(model.model.embed_tokens.weight, before["model.embed_tokens.weight"])


def test_unknown_or_inconsistent_scheme_is_refused():
    with pytest.raises(ValueError):
        Scheme(name="x", label="", bits=4, granularity="group")
    with pytest.raises(ValueError):
        Scheme(name="x", label="", bits=8, granularity="tensor", levels="nf4")
    with pytest.raises(KeyError):
        quantize(torch.ones(4), "int3_tensor")


@pytest.mark.parametrize("scheme", list(q.SCHEMES))
def test_quantizers_stay_on_the_weights_device(scheme):
    """A GPU run quantizes on the GPU: nothing may pull a tensor to the CPU on the way.
    The meta device stands in for a GPU here (a CPU tensor mixed in fails the same way)."""
    w = torch.randn(4, 64).to("meta")
    quantized = q.quantize(w, scheme)
    assert quantized.codes.device.type == "meta"
    assert q.dequantize(quantized).device.type == "meta"


def test_nf4_levels_equal_an_independent_float64_derivation():
    """The same quantiles from Python's own normal distribution, in float64: equal to the
    last bit (a float32 derivation is off by up to 4e-7)."""
    import statistics

    normal = statistics.NormalDist()
    offset = 0.5 * ((1 - 1 / 30) + (1 - 1 / 32))

    def points(n):
        return [offset + (0.5 - offset) * i / (n - 1) for i in range(n)][:-1]

    levels = sorted([normal.inv_cdf(p) for p in points(9)] + [0.0] + [-normal.inv_cdf(p) for p in points(8)])
    expected = torch.tensor([x / max(levels) for x in levels], dtype=torch.float64).float()
    got = q.nf4_levels()
    assert got.dtype == torch.float32 and torch.equal(got, expected)


def test_codes_scales_and_dtype_by_hand():
    w = torch.tensor([[1.0, -0.5, 0.25, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float16)
    got = quantize(w, "int8_row")
    assert got.codes.dtype == torch.int8 and got.dtype == torch.float16 and got.shape == (2, 4)
    # row 0: scale 1/127; 1 -> 127, -0.5 -> -63.5 -> -64 (half to even), 0.25 -> 31.75 -> 32
    assert got.codes.tolist() == [[127, -64, 32, 0], [0, 0, 0, 0]]
    assert got.scales.flatten().tolist() == pytest.approx([1 / 127, 0.0])  # an all-zero row keeps scale 0
    assert dequantize(got).dtype == torch.float16
    assert dequantize(got)[1].tolist() == [0.0, 0.0, 0.0, 0.0]
    nf = quantize(torch.tensor([[0.0, 0.0], [2.0, -1.0]]), "nf4_b64")
    assert nf.codes.dtype == torch.int8 and nf.scales.flatten().tolist() == [2.0]  # one group of 64, padded
    # 2 -> level 1.0 (code 15); -1 -> -0.5 of the scale, nearest level -0.5251 (code 2); 0 -> code 7
    assert nf.codes.flatten()[:4].tolist() == [7, 7, 15, 2]
    zero = quantize(torch.zeros(3, 64), "nf4_b64")
    assert zero.scales.flatten().tolist() == [0.0, 0.0, 0.0] and dequantize(zero).abs().sum() == 0


def test_relative_error_by_hand_and_in_float64():
    # ||(0, 4)|| / ||(3, 4)|| = 4 / 5
    assert q.relative_error(torch.tensor([3.0, 4.0]), torch.tensor([3.0, 0.0])) == pytest.approx(0.8, rel=1e-12)
    assert q.relative_error(torch.tensor([3.0, 4.0]), torch.tensor([3.0, 4.0])) == 0.0
    # a million values of 0.1 against 0.1001: the float32 squares summed in float64 (here by
    # NumPy) agree to 12 digits; summed in float32 they do not
    w = torch.full((1_000_000,), 0.1)
    h = torch.full((1_000_000,), 0.1001)
    diff2, w2 = (w - h).square().numpy(), w.square().numpy()
    expected = float((diff2.astype("float64").sum() / w2.astype("float64").sum()) ** 0.5)
    assert q.relative_error(w, h) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(bits=8, granularity="block"), "scheme s: unknown granularity 'block'"),
        (dict(bits=8, granularity="row", group=64), "scheme s: a group size goes with granularity 'group' only"),
        (dict(bits=4, granularity="group"), "scheme s: a group size goes with granularity 'group' only"),
        (dict(bits=8, granularity="group", group=64, levels="nf4"), "scheme s: bad levels 'nf4' for 8 bits"),
        (dict(bits=4, granularity="tensor", levels="fp4"), "scheme s: bad levels 'fp4' for 4 bits"),
    ],
)
def test_bad_schemes_are_refused_with_their_reason(kwargs, message):
    with pytest.raises(ValueError) as e:
        Scheme(name="s", label="s", **kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(bits=8, granularity="tensor"),
        dict(bits=8, granularity="row"),
        dict(bits=5, granularity="row"),
        dict(bits=4, granularity="group", group=32, levels="nf4"),
        dict(bits=3, granularity="group", group=16, levels="uniform"),
    ],
)
def test_good_schemes_are_accepted(kwargs):
    assert Scheme(name="s", label="s", **kwargs).bits == kwargs["bits"]


def test_a_vector_per_row_has_one_scale():
    got = quantize(torch.tensor([1.0, -0.5, 0.25]), "int8_row")
    assert got.scales.shape == (1, 1) and got.codes.tolist() == [[127, -64, 32]]


def test_an_all_zero_nf4_group_is_coded_as_the_zero_level():
    got = quantize(torch.zeros(2, 64), "nf4_b64")
    assert got.codes.tolist() == [[7] * 64, [7] * 64]  # level 7 is the exact zero


def test_bits_per_weight_takes_a_scheme_or_its_name():
    assert bits_per_weight(SCHEMES["int4_g128"], (256, 128)) == bits_per_weight("int4_g128", (256, 128)) == 4.125


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@given(
    w=arrays("float32", st.tuples(st.integers(1, 6), st.integers(1, 130)), elements=st.floats(-8, 8, width=32)),
    name=st.sampled_from([s.name for s in UNIFORM]),
)
def test_uniform_round_trips_stay_within_half_a_step_and_are_idempotent(w, name):
    t = torch.from_numpy(w)
    qz = quantize(t, name)
    back = dequantize(qz)
    assert back.shape == t.shape and back.dtype == t.dtype
    scopes = q._scopes(t, SCHEMES[name])
    err = (q._scopes(back, SCHEMES[name]) - scopes).abs()
    assert bool((err <= qz.scales / 2 * (1 + 1e-5) + 1e-30).all())  # nearest grid point
    assert torch.equal(fake_quantize(back, name), back)  # the grid maps to itself
    # 2 qmax + 1 levels, wherever the scale holds its bits: a scope whose absmax is normal
    normal = scopes.abs().amax(dim=1) >= torch.finfo(torch.float32).tiny
    assert bool((qz.codes[normal].abs() <= SCHEMES[name].qmax).all())
    assert bool((qz.codes >= -SCHEMES[name].qmax - 1).all())


def test_a_subnormal_scope_may_use_the_extra_code_and_errs_by_less_than_its_absmax():
    """Hypothesis found it: 8 units of the last place over 7 is one unit, so -1.1e-44
    (8 of them) is code -8, outside the 2 qmax + 1 levels; 9 units are clamped to -8, and
    8 or 9 above zero to 7: both bounds of the clamp are reached."""
    for units, code in ((-8, -8), (-9, -8), (8, 7), (9, 7)):
        w = torch.tensor([[units * 2.0**-149]])  # float32's smallest subnormal, times units
        qz = quantize(w, "int4_tensor")
        assert int(qz.codes) == code
        assert float((dequantize(qz) - w).abs()) <= float(w.abs())
