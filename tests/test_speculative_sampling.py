"""§8: the speculative sampling rule (measure/experiments/speculative_decoding/sampling.py) on hand-worked
distributions, its exactness by a chi-square test, and the test itself."""

import math

import pytest
import torch

from measure.experiments.speculative_decoding.sampling import (
    SIGNIFICANCE,
    acceptance_probability,
    chi_square_goodness_of_fit,
    chi_square_sf,
    emitted_tokens,
    expected_acceptance,
    judged_drafts,
    residual,
    tempered,
    verify_round,
)

P = torch.tensor([0.5, 0.3, 0.2, 0.0], dtype=torch.float64)
Q = torch.tensor([0.2, 0.3, 0.4, 0.1], dtype=torch.float64)


def test_acceptance_probability_by_hand():
    # min(1, p/q): 0.5/0.2 caps at 1; 0.3/0.3 = 1; 0.2/0.4 = 0.5; 0/0.1 = 0.
    got = [float(acceptance_probability(P, Q, torch.tensor(x))) for x in range(4)]
    assert got == pytest.approx([1.0, 1.0, 0.5, 0.0])


def test_residual_by_hand():
    # max(0, p - q) = (0.3, 0, 0, 0): all of the residual is on token 0.
    assert residual(P, Q).tolist() == pytest.approx([1.0, 0.0, 0.0, 0.0])
    r = residual(torch.tensor([0.4, 0.4, 0.2]), torch.tensor([0.1, 0.2, 0.7]))
    assert r.tolist() == pytest.approx([0.6, 0.4, 0.0])  # (0.3, 0.2, 0) / 0.5
    assert residual(P, P).tolist() == P.tolist()  # nothing is ever rejected: p itself


def test_expected_acceptance_by_hand():
    assert float(expected_acceptance(P, Q)) == pytest.approx(0.2 + 0.3 + 0.2 + 0.0)
    assert float(expected_acceptance(P, P)) == pytest.approx(1.0)  # identical: always kept
    disjoint = torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=torch.float64)
    assert float(expected_acceptance(P, disjoint)) == 0.0  # disjoint: never kept


def test_rule_emits_p_exactly_by_hand():
    # P(emit y) = q(y) min(1, p/q)(y) + (1 - Σ min(p, q)) residual(y): the rule's own
    # algebra, worked for P and Q, gives p back.
    keep = Q * torch.stack([acceptance_probability(P, Q, torch.tensor(x)) for x in range(4)])
    emitted = keep + (1 - expected_acceptance(P, Q)) * residual(P, Q)
    assert emitted.tolist() == pytest.approx(P.tolist())


def test_temperature_limits():
    logits = torch.tensor([1.0, 3.0, 2.0, -1.0])
    assert tempered(logits, 0).tolist() == [0.0, 1.0, 0.0, 0.0]  # greedy: one-hot argmax
    assert tempered(logits, 1).tolist() == pytest.approx(torch.softmax(logits.double(), 0).tolist())
    assert tempered(logits, 1e-3).tolist() == pytest.approx([0.0, 1.0, 0.0, 0.0])  # T -> 0 is greedy
    flat = tempered(logits, 1e6)
    assert flat.tolist() == pytest.approx([0.25] * 4, abs=1e-5)  # T -> infinity is uniform
    with pytest.raises(ValueError, match="temperature"):
        tempered(logits, -1)


def test_greedy_acceptance_is_agreement():
    """At T = 0 Σ min(p, q) is 1 where the argmaxes agree and 0 elsewhere."""
    p = tempered(torch.tensor([[2.0, 1.0, 0.0], [0.0, 1.0, 2.0]]), 0)
    q = tempered(torch.tensor([[3.0, 1.0, 0.0], [0.0, 2.0, 1.0]]), 0)
    assert expected_acceptance(p, q).tolist() == [1.0, 0.0]


def test_verify_round_keeps_and_rejects():
    g = torch.Generator().manual_seed(0)
    sure = torch.tensor([[0.0, 1.0, 0.0]] * 3, dtype=torch.float64)
    # The target is certain of token 1 everywhere: drafts of 1 are kept, the bonus is 1.
    assert verify_round(sure, sure[:2], [1, 1], g) == (2, 1)
    # A draft of 2 where the target gives it probability 0 is rejected; its replacement
    # comes from the residual, here all on token 1.
    q = torch.tensor([[0.0, 0.5, 0.5]] * 2, dtype=torch.float64)
    assert verify_round(sure, q, [1, 2], g) == (1, 1)
    with pytest.raises(ValueError, match="rows"):
        verify_round(sure, q, [1], g)


def test_judged_drafts():
    # gamma 4: a full round judges 4; a round stopped at the 2nd draft judged 2.
    assert judged_drafts([4, 1, 0], 4) == 4 + 2 + 1


def test_chi_square_sf_against_hand_values():
    # dof 2: the survival function is exp(-x/2); dof 1: erfc(sqrt(x/2)).
    for x in (0.5, 2.0, 5.991):
        assert chi_square_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-9)
    assert chi_square_sf(3.841, 1) == pytest.approx(math.erfc(math.sqrt(3.841 / 2)), rel=1e-9)
    assert chi_square_sf(3.841, 1) == pytest.approx(0.05, abs=1e-4)  # the textbook 5 % point
    assert chi_square_sf(6.635, 1) == pytest.approx(0.01, abs=1e-4)  # and the 1 % point
    assert chi_square_sf(0.0, 3) == 1.0
    with pytest.raises(ValueError, match="degree"):
        chi_square_sf(1.0, 0)


def test_chi_square_by_hand():
    # 100 draws from (0.5, 0.5) split 60/40: (10² + 10²) / 50 = 4 on one degree of freedom.
    samples = torch.tensor([0] * 60 + [1] * 40)
    test = chi_square_goodness_of_fit(samples, torch.tensor([0.5, 0.5]))
    assert (test.statistic, test.dof, test.cells) == (pytest.approx(4.0), 1, 2)
    assert test.p_value == pytest.approx(math.erfc(math.sqrt(2.0)))


def test_chi_square_pools_rare_tokens():
    # 100 draws: tokens 2 and 3 expect 2 and 1, pooled into one cell expecting 3, too
    # few, so it joins the smallest other cell (token 1, expecting 17): 2 cells in all.
    probs = torch.tensor([0.80, 0.17, 0.02, 0.01])
    samples = torch.tensor([0] * 80 + [1] * 17 + [2] * 2 + [3])
    test = chi_square_goodness_of_fit(samples, probs)
    assert (test.cells, test.dof, test.pooled_tokens) == (2, 1, 2)
    assert test.statistic == pytest.approx(0.0)
    # Four tokens each expecting 2.5 pool into one cell of 10, kept on its own.
    probs = torch.tensor([0.45, 0.45, 0.025, 0.025, 0.025, 0.025])
    samples = torch.tensor([0] * 45 + [1] * 45 + [2, 3, 4, 5] * 2 + [2, 3])
    test = chi_square_goodness_of_fit(samples, probs)
    assert (test.cells, test.dof) == (3, 2)


def _random_pair(seed: int, vocab: int = 50):
    g = torch.Generator().manual_seed(seed)
    p = torch.softmax(torch.randn(vocab, generator=g, dtype=torch.float64) * 2, 0)
    q = torch.softmax(torch.randn(vocab, generator=g, dtype=torch.float64) * 2, 0)
    return p, q


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_rule_passes_and_the_draft_fails_the_chi_square_test(seed):
    """Fixed seeds: the rule's emitted tokens are not rejected at SIGNIFICANCE, the
    draft's own samples are, and so are the samples of two deliberately wrong rules."""
    p, q = _random_pair(seed)
    assert float(expected_acceptance(p, q)) < 0.8  # q differs enough to be caught
    g = torch.Generator().manual_seed(seed)
    n = 50_000
    exact = chi_square_goodness_of_fit(emitted_tokens(p, q, n, g), p)
    assert not exact.rejects(SIGNIFICANCE), exact
    always_accept = torch.multinomial(q, n, replacement=True, generator=g)
    assert chi_square_goodness_of_fit(always_accept, p).rejects(SIGNIFICANCE)
    # Wrong on rejection: resample from p instead of from the residual.
    x = torch.multinomial(q, n, replacement=True, generator=g)
    keep = torch.rand(n, generator=g, dtype=torch.float64) < acceptance_probability(p, q, x)
    wrong = torch.where(keep, x, torch.multinomial(p, n, replacement=True, generator=g))
    assert chi_square_goodness_of_fit(wrong, p).rejects(SIGNIFICANCE)


def test_the_rule_with_identical_distributions_always_keeps():
    p, _ = _random_pair(3)
    g = torch.Generator().manual_seed(0)
    n = 20_000
    a = emitted_tokens(p, p, n, g)
    g = torch.Generator().manual_seed(0)
    b = torch.multinomial(p, n, replacement=True, generator=g)
    assert torch.equal(a, b)  # every draft kept: the emitted tokens are the drafts
