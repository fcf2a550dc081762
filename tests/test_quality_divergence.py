"""§7's scorer-free measures: per-position scores, KL divergence and the block bootstrap."""

import numpy as np
import pytest
import scipy.stats
import torch

from measure.experiments.quality import divergence
from measure.lab.evaluation import _kl, perplexity, token_scores
from tests.test_quality import _Bigram


def test_kl_is_torchs_and_zero_against_itself():
    g = torch.Generator().manual_seed(3)
    p = torch.log_softmax(torch.randn(300, 17, generator=g), -1)
    q = torch.log_softmax(torch.randn(300, 17, generator=g), -1)
    expected = torch.nn.functional.kl_div(q, p, log_target=True, reduction="none").sum(-1)
    assert torch.allclose(_kl(p, q), expected, atol=1e-6)
    assert torch.allclose(_kl(p, p), torch.zeros(300), atol=1e-6)
    assert (_kl(p, q) > 0).all()


@pytest.mark.parametrize(("context", "stride"), [(64, 64), (16, 4)])
def test_token_scores_are_perplexitys_and_a_model_agrees_with_itself(context, stride):
    model = _Bigram()
    ids = torch.randint(0, 11, (41,), generator=torch.Generator().manual_seed(1))
    ref = token_scores(model, ids, context=context, stride=stride, keep=True)
    assert ref.logp.shape == (40, 11) and ref.kl is None
    assert ref.perplexity == perplexity(model, ids, context=context, stride=stride)
    assert abs(float(ref.nll.sum()) - ref.nll_sum) < 1e-4
    same = token_scores(model, ids, context=context, stride=stride, reference_logp=ref.logp)
    assert same.kl.abs().max() < 1e-6 and bool((same.top1 == ref.top1).all())
    other = _Bigram()
    with torch.no_grad():
        other.table.add_(torch.randn(11, 11, generator=torch.Generator().manual_seed(5)))
    moved = token_scores(other, ids, context=context, stride=stride, reference_logp=ref.logp)
    assert (moved.kl > 0).all()
    cells = divergence.row(ref, moved)
    assert cells["kl_low"] <= cells["kl"] <= cells["kl_high"]
    assert 0 <= cells["top1_agreement_low"] <= cells["top1_agreement"] <= cells["top1_agreement_high"] <= 1
    assert cells["kl_samples"] == 40 // divergence.BLOCK


def test_blocks_are_means_of_consecutive_positions():
    x = np.arange(40, dtype=float)
    assert divergence.blocks(x, 16).tolist() == [7.5, 27.5]  # the last 8 join the second block
    assert divergence.blocks(np.arange(32.0), 16).tolist() == [7.5, 23.5]
    assert divergence.blocks(np.arange(5.0), 16).tolist() == [2.0]


def test_the_bootstrap_is_scipys_percentile_interval():
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, 0.05, size=128)
    mine = divergence.bootstrap(lambda s: s.mean(axis=-1), (x,))
    ref = scipy.stats.bootstrap((x,), np.mean, n_resamples=20000, method="percentile", random_state=1)
    low, high = ref.confidence_interval
    width = high - low
    assert abs(mine[0] - low) < 0.05 * width and abs(mine[1] - high) < 0.05 * width
    assert divergence.bootstrap(lambda s: s.mean(axis=-1), (x,)) == mine  # seeded


def test_the_paired_bootstrap_of_a_difference_uses_the_same_blocks():
    rng = np.random.default_rng(1)
    a = rng.normal(3.0, 0.5, size=128)
    b = a + 0.01  # the same blocks, shifted: paired, the difference never moves
    low, high = divergence.bootstrap(lambda x, y: y.mean(-1) - x.mean(-1), (a, b))
    assert abs(low - 0.01) < 1e-9 and abs(high - 0.01) < 1e-9
