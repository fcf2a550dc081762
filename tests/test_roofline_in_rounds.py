"""The roofline's memory and operator terms taken from a sweep's own rounds."""

import pytest
import torch

from measure.lab.medians import MIN_ROUNDS, Estimate
from measure.lab.roofline import Rate, Roofline
from measure.lab.roofline_in_rounds import COPY, OPERATOR, RoundProbes, measured, value_names
from measure.lab.sampling import Sweep, interleaved

CALIBRATED = Roofline(
    bandwidth=Rate(20e9, 19e9, 21e9),
    read_bandwidth=Rate(22e9, 21e9, 23e9),
    ceilings={"float32": ((1, Rate(30e9, 28e9, 32e9)),)},
    dispatch=Rate(3e-6, 2.8e-6, 3.2e-6),
    trivial=Rate(1.5e-6, 1.4e-6, 1.6e-6),
)


def _point(median: float, low: float, high: float) -> Estimate:
    return Estimate((low, median, high), median, low, high, 0.03, False)


def _sweep(points: dict) -> Sweep:
    return Sweep(points=points, seed=0, rounds=3, seconds=1.0, budget_s=1.0, target=0.03)


def test_the_rounds_replace_the_bandwidth_and_the_operator_cost_only():
    probes = RoundProbes(points={}, moved_bytes=2_000_000_000, ops_per_call=100)
    # a copy of 2 GB moved in 0.1 s [0.08, 0.125]: 20 GB/s, its range [16, 25] GB/s;
    # 100 operators in 500 µs [400, 600]: 5 µs each [4, 6]
    sweep = _sweep(
        {("eager", 16): _point(0.04, 0.039, 0.041), COPY: _point(0.1, 0.08, 0.125), OPERATOR: _point(5e-4, 4e-4, 6e-4)}
    )
    roof = probes.roofline(sweep, CALIBRATED)
    assert (roof.bandwidth.value, roof.bandwidth.low, roof.bandwidth.high) == pytest.approx((20e9, 16e9, 25e9))
    assert (roof.dispatch.value, roof.dispatch.low, roof.dispatch.high) == pytest.approx((5e-6, 4e-6, 6e-6))
    assert roof.ceilings == CALIBRATED.ceilings and roof.read_bandwidth == CALIBRATED.read_bandwidth
    assert roof.trivial == CALIBRATED.trivial
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
        ]
    )
    assert list(values.values()) == pytest.approx([20, 16, 25, 5, 4, 6])


def test_a_slower_machine_in_the_rounds_raises_the_prediction_by_as_much():
    """The point of the terms: a step predicted from them moves with the machine. Halve the
    copy's and the operators' speed and a memory-bound step's prediction doubles."""
    probes = RoundProbes(points={}, moved_bytes=2_000_000, ops_per_call=10)

    def predicted(copy_s: float, ops_s: float) -> float:
        sweep = _sweep({COPY: _point(copy_s, copy_s, copy_s), OPERATOR: _point(ops_s, ops_s, ops_s)})
        roof = probes.roofline(sweep, CALIBRATED)
        # a step reading 1 MB and dispatching 100 operators
        return roof.bandwidth.inverse(1e6).value + 100 * roof.dispatch.value

    assert predicted(1e-3, 1e-4) == pytest.approx(1e6 / 2e9 + 100 * 1e-5)
    assert predicted(2e-3, 2e-4) == pytest.approx(2 * predicted(1e-3, 1e-4))


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
    assert set(sweep.points) == {"forward", COPY, OPERATOR}
    assert min(e.n for e in sweep.points.values()) >= MIN_ROUNDS
    roof = probes.roofline(sweep, CALIBRATED)
    assert roof.bandwidth != CALIBRATED.bandwidth and roof.dispatch != CALIBRATED.dispatch
    assert list(measured(sweep.points)) == ["forward"]
