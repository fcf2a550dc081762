"""Claims that rank or place a count on its interval, decided on made-up tables: a
ranking of the drafts' agreement is 'apart' only where their 95 % intervals are, and the
int8 per-row perplexity is 'above the reference' only where its Δ interval is. The claims
are the project's own (measure/experiments/*/claims.toml)."""

import pytest

from sitekit.claims import claims
from sitekit.claims.claim_files import load
from sitekit.rendering.pagedata import SiteData
from tests.conftest import REPO, write_data

BOOK = load(REPO / "measure/experiments", REPO, claims.CALLS)
FAKE = "target dtype (fake-quantized weights)"
DRAFTS = ("int8_tensor", "int8_row", "int4_tensor", "int4_row", "int4_g128", "int4_g64", "nf4_b64")
RANKING = [
    "int8_row_agrees_most",
    "int8_row_agreement_apart",
    "finer_scales_agree_more",
    "finer_scales_agreement_apart",
]


def _decide(tmp_path, experiment: str, tables: dict, ids: list[str]) -> tuple:
    write_data(tmp_path, experiment, tables)
    data = SiteData(tmp_path)
    return tuple(claims.check(data, BOOK.get(f"{experiment}.{i}").expression)[0] for i in ids)


def _acceptance(alphas: dict[str, tuple[float, float, float]]) -> list[dict]:
    return [
        {"draft": d, "kernels": FAKE, "alpha": a, "alpha_low": lo, "alpha_high": hi}
        for d, (a, lo, hi) in alphas.items()
    ]


# the published run's intervals (Wilson, 144 positions), rounded: int8 per-row's low end,
# 0.912, lies under int8 per-tensor's high end, 0.919; int4 per-row's high end, 0.628,
# over group-128's low end, 0.608
PUBLISHED = {
    "int8_tensor": (0.875, 0.811, 0.919),
    "int8_row": (0.958, 0.912, 0.981),
    "int4_tensor": (0.007, 0.001, 0.038),
    "int4_row": (0.549, 0.467, 0.628),
    "int4_g128": (0.688, 0.608, 0.758),
    "int4_g64": (0.764, 0.688, 0.826),
    "nf4_b64": (0.757, 0.681, 0.820),
}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, (True, False, True, False)),  # ranked by count, not by interval
        # every interval apart: int8 per-tensor's ends under 0.90, the 4-bit ones one above the other
        (
            {
                "int8_tensor": (0.80, 0.75, 0.85),
                "int4_row": (0.40, 0.35, 0.45),
                "int4_g128": (0.55, 0.50, 0.60),
                "int4_g64": (0.70, 0.65, 0.75),
                "nf4_b64": (0.70, 0.65, 0.75),
            },
            (True, True, True, True),
        ),
        # the first pair of 4-bit schemes apart, the second not: not apart
        ({"int4_row": (0.40, 0.35, 0.45), "int4_g128": (0.55, 0.50, 0.70)}, (True, False, True, False)),
        # NF4 counted more than int8 per-row: int8 per-row neither most nor apart
        ({"nf4_b64": (0.97, 0.93, 0.99)}, (False, False, True, False)),
        # group-128 counted under per-row: the order breaks, whatever the intervals
        ({"int4_g128": (0.50, 0.42, 0.58)}, (True, False, False, False)),
    ],
)
def test_the_drafts_are_ranked_by_count_and_apart_only_where_their_intervals_are(tmp_path, changes, expected):
    table = _acceptance({**PUBLISHED, **changes})
    assert set(DRAFTS) == {row["draft"] for row in table}
    assert _decide(tmp_path, "speculative_decoding", {"acceptance": table}, RANKING) == expected


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        ((0.031, -0.046, 0.113), (False, True)),  # the published run: the interval holds 0
        ((0.20, 0.05, 0.35), (True, False)),  # above, beyond its interval
        ((-0.20, -0.35, -0.05), (False, False)),  # below: neither sentence
        ((0.0, 0.0, 0.1), (False, True)),  # an end on 0 is no change told apart
    ],
)
def test_int8_per_row_perplexity_is_above_only_where_its_interval_is(tmp_path, delta, expected):
    columns = ("delta_perplexity", "delta_perplexity_low", "delta_perplexity_high")
    row = {"variant": "int8_row"} | dict(zip(columns, delta, strict=True))
    ids = ["int8_row_perplexity_above", "int8_row_perplexity_within_noise"]
    assert _decide(tmp_path, "quality", {"divergence": [row]}, ids) == expected
