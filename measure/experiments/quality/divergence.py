"""§7's scorer-free measures, per scheme, against the reference on the same scored tokens
of the book (the measures llama.cpp's perplexity tool reports for a quantized model):

* ``kl``: the mean, over positions, of KL(reference || scheme) between the two models'
  next-token distributions, in nats;
* ``top1_agreement``: the fraction of positions where both put the same token first;
* ``delta_perplexity``: the scheme's perplexity minus the reference's.

Each with a 95 % interval from a seeded percentile bootstrap over blocks of BLOCK
consecutive positions (neighbouring tokens are not independent; resampling blocks keeps
their correlation within each block), the same blocks for the scheme and the reference
(paired). A few lines of numpy, checked against ``scipy.stats.bootstrap`` in the tests:
scipy is not needed where the measurements run.
"""

from __future__ import annotations

import numpy as np

from measure.lab.evaluation import TokenScores

BLOCK = 16  # positions per resampled block: 2,048 scored tokens are 128 blocks
RESAMPLES = 4000
SEED = 7  # recorded in the protocol table
CONFIDENCE = 0.95


def blocks(x: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """Means of consecutive blocks of ``x`` (a short last block joins the one before)."""
    n = max(1, len(x) // block)
    edges = [i * block for i in range(n)] + [len(x)]
    return np.array([x[a:b].mean() for a, b in zip(edges, edges[1:], strict=False)])


def bootstrap(statistic, samples: tuple[np.ndarray, ...], *, seed: int = SEED) -> tuple[float, float]:
    """Percentile interval of ``statistic(*samples)`` over RESAMPLES resamples of the
    samples' indices with replacement, the same indices for every sample (paired)."""
    n = len(samples[0])
    idx = np.random.default_rng(seed).integers(0, n, size=(RESAMPLES, n))
    stats = statistic(*(s[idx] for s in samples))
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return float(low), float(high)


def _mean(x: np.ndarray) -> np.ndarray:
    return x.mean(axis=-1)


def _delta_ppl(nll: np.ndarray, ref_nll: np.ndarray) -> np.ndarray:
    return np.exp(nll.mean(axis=-1)) - np.exp(ref_nll.mean(axis=-1))


def row(reference: TokenScores, scheme: TokenScores) -> dict:
    """The table's cells for one scheme: each measure, its interval and the blocks resampled."""
    ref_nll = reference.nll.double().cpu().numpy()
    nll = scheme.nll.double().cpu().numpy()
    kl = scheme.kl.double().cpu().numpy()
    top1 = (scheme.top1 == reference.top1).double().cpu().numpy()
    kl_b, top1_b, nll_b, ref_b = (blocks(x) for x in (kl, top1, nll, ref_nll))
    cells = {"kl_samples": len(kl_b)}
    for name, value, stat, samples in (
        ("kl", kl.mean(), _mean, (kl_b,)),
        ("top1_agreement", top1.mean(), _mean, (top1_b,)),
        ("delta_perplexity", scheme.perplexity.value - reference.perplexity.value, _delta_ppl, (nll_b, ref_b)),
    ):
        low, high = bootstrap(stat, samples)
        cells |= {name: float(value), f"{name}_low": low, f"{name}_high": high}
    return cells
