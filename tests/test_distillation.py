"""§9: the next-token distribution and its temperatures, smoke-run on the embedded model."""

import math

import pytest

from sitedata import read_experiment
from tests.helpers import table_rows

pytestmark = pytest.mark.smoke  # every test reads the smoke run


def test_top_tokens_and_temperatures(smoke_data):
    d = smoke_data / "distillation"
    top = [float(r["probability"]) for r in table_rows(d, "top_tokens")]
    assert len(top) == 5 and top == sorted(top, reverse=True) and sum(top) < 1
    temps = table_rows(d, "temperatures")
    assert [float(r["temperature"]) for r in temps] == [0.5, 1.0, 2.0, 4.0]
    one = next(r for r in temps if float(r["temperature"]) == 1.0)
    assert float(one["p1"]) == top[0]
    entropy = [float(r["entropy_bits"]) for r in temps]
    assert entropy == sorted(entropy)
    for r in temps:
        t = float(r["temperature"])
        # p1 / p3 = exp((z1 - z3) / T): the ratio at T is the ratio at 1 to the power 1/T
        assert math.isclose(float(r["top_to_third"]), float(one["top_to_third"]) ** (1 / t), rel_tol=1e-9)
        assert math.isclose(float(r["perplexity"]), 2 ** float(r["entropy_bits"]), rel_tol=1e-9)
    meta = read_experiment(d.parent, "distillation").meta
    assert meta["values"]["ratio_power_law_error"]["value"] < 1e-9
    assert len(table_rows(d, "distribution")) == 4 * 10
