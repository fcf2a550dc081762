"""The roofline's memory, operator and compute terms taken from a sweep's own rounds."""

import pytest
import torch

from measure.lab.medians import MIN_ROUNDS, Estimate
from measure.lab.roofline import Rate, Roofline
from measure.lab.roofline_in_rounds import COMPUTE, COPY, OPERATOR, RoundProbes, measured, value_names
from measure.lab.sampling import Sweep, interleaved

CALIBRATED = Roofline(
    bandwidth=Rate(20e9, 19e9, 21e9),
    read_bandwidth=Rate(22e9, 21e9, 23e9),
    ceilings={"float32": ((1, Rate(30e9, 28e9, 32e9)), (1024, Rate(100e9, 90e9, 110e9)))},
    dispatch=Rate(3e-6, 2.8e-6, 3.2e-6),
    trivial=Rate(1.5e-6, 1.4e-6, 1.6e-6),
)


def _point(median: float, low: float, high: float) -> Estimate:
    return Estimate((low, median, high), median, low, high, 0.03, False)


def _sweep(points: dict) -> Sweep:
    return Sweep(points=points, seed=0, rounds=3, seconds=1.0, budget_s=1.0, target=0.03)


def _probes(**kw) -> RoundProbes:
    """Probes whose multiply computes 2 GFLOP on 1,024 rows of float32."""
    return RoundProbes(points={}, dtype="float32", rows=1024, flops=2_000_000_000, **kw)


def test_the_rounds_replace_the_bandwidth_and_the_operator_cost_and_scale_the_ceilings():
    probes = _probes(moved_bytes=2_000_000_000, ops_per_call=100)
    # a copy of 2 GB moved in 0.1 s [0.08, 0.125]: 20 GB/s, its range [16, 25] GB/s;
    # 100 operators in 500 µs [400, 600]: 5 µs each [4, 6]; 2 GFLOP in 25 ms [20, 40]:
    # 80 GFLOP/s [50, 100], 0.8 of the calibration's 100 at the same shape [0.5, 1.0]
    sweep = _sweep(
        {
            ("eager", 16): _point(0.04, 0.039, 0.041),
            COPY: _point(0.1, 0.08, 0.125),
            OPERATOR: _point(5e-4, 4e-4, 6e-4),
            COMPUTE: _point(0.025, 0.02, 0.04),
        }
    )
    roof = probes.roofline(sweep, CALIBRATED)
    assert (roof.bandwidth.value, roof.bandwidth.low, roof.bandwidth.high) == pytest.approx((20e9, 16e9, 25e9))
    assert (roof.dispatch.value, roof.dispatch.low, roof.dispatch.high) == pytest.approx((5e-6, 4e-6, 6e-6))
    # every ceiling times 0.8, its low end times 0.5 and its high end times 1.0
    (one, one_rate), (most, most_rate) = roof.ceilings["float32"]
    assert (one, most) == (1, 1024)
    assert (one_rate.value, one_rate.low, one_rate.high) == pytest.approx((24e9, 14e9, 32e9))
    assert (most_rate.value, most_rate.low, most_rate.high) == pytest.approx((80e9, 45e9, 110e9))
    assert roof.read_bandwidth == CALIBRATED.read_bandwidth and roof.trivial == CALIBRATED.trivial
    assert list(measured(sweep.points)) == [("eager", 16)]
    values = probes.values("decode_round", sweep)
    assert (
        list(values)
        == list(value_names("decode_round"))
        == [
            "decode_round_gb_s",
            "decode_round_low_gb_s",
            "decode_round_high_gb_s",
            "decode_round_operator_us",
            "decode_round_operator_low_us",
            "decode_round_operator_high_us",
            "decode_round_gflop_s",
            "decode_round_low_gflop_s",
            "decode_round_high_gflop_s",
        ]
    )
    assert list(values.values()) == pytest.approx([20, 16, 25, 5, 4, 6, 80, 50, 100])


def test_a_calibration_without_the_multiplys_shape_keeps_its_ceilings():
    probes = RoundProbes(points={}, moved_bytes=2_000, ops_per_call=1, dtype="float32", rows=2048, flops=10**9)
    sweep = _sweep({COPY: _point(1e-3, 1e-3, 1e-3), OPERATOR: _point(1e-5, 1e-5, 1e-5), COMPUTE: _point(1, 1, 1)})
    assert probes.roofline(sweep, CALIBRATED).ceilings == CALIBRATED.ceilings


def test_a_slower_machine_in_the_rounds_raises_the_prediction_by_as_much():
    """The point of the terms: a step predicted from them moves with the machine. Halve the
    copy's and the operators' speed and a memory-bound step's prediction doubles."""
    probes = _probes(moved_bytes=2_000_000, ops_per_call=10)

    def predicted(copy_s: float, ops_s: float, multiply_s: float) -> tuple[float, float]:
        sweep = _sweep(
            {
                COPY: _point(copy_s, copy_s, copy_s),
                OPERATOR: _point(ops_s, ops_s, ops_s),
                COMPUTE: _point(multiply_s, multiply_s, multiply_s),
            }
        )
        roof = probes.roofline(sweep, CALIBRATED)
        # a step reading 1 MB and dispatching 100 operators; a prefill of 1 TFLOP on 1,024 rows
        memory_bound = roof.bandwidth.inverse(1e6).value + 100 * roof.dispatch.value
        compute_bound = roof.predict(moved_bytes=1e6, flops=1e12, rows=1024, dtype="float32").total.value
        return memory_bound, compute_bound

    assert predicted(1e-3, 1e-4, 0.02)[0] == pytest.approx(1e6 / 2e9 + 100 * 1e-5)
    assert predicted(1e-3, 1e-4, 0.02)[1] == pytest.approx(1e12 / 100e9)  # the calibration's own rate
    slower, faster = predicted(2e-3, 2e-4, 0.04), predicted(1e-3, 1e-4, 0.02)
    assert slower == pytest.approx((2 * faster[0], 2 * faster[1]))


def test_a_sweep_times_the_probes_beside_its_points():
    """Run for real on a tiny model: the probes are points of the sweep's own rounds, and
    the steps' rows come out without them."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=4,
    )
    model = LlamaForCausalLM(config).eval()
    probes = RoundProbes.of(model, torch.device("cpu"))
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    assert probes.moved_bytes == 2 * weights and probes.ops_per_call > 0
    ids = torch.ones((1, 4), dtype=torch.long)
    sweep = interleaved(
        {"forward": lambda: model(ids)} | probes.points,
        device=torch.device("cpu"),
        seed=0,
        budget_s=0.5,
        min_sample_s=1e-3,
    )
    assert set(sweep.points) == {"forward", COPY, OPERATOR, COMPUTE}
    assert min(e.n for e in sweep.points.values()) >= MIN_ROUNDS
    roof = probes.roofline(sweep, CALIBRATED)
    assert roof.bandwidth != CALIBRATED.bandwidth and roof.dispatch != CALIBRATED.dispatch
    # its multiply is the model's up projection (32 x 64) on 1,024 rows, as the calibration's
    assert (probes.dtype, probes.rows, probes.flops) == ("float32", 1024, 2 * 1024 * 32 * 64)
    assert roof.ceilings != CALIBRATED.ceilings
    assert list(measured(sweep.points)) == ["forward"]
