"""Speculative *sampling* for §8: the acceptance rule that keeps sampling exact
(Leviathan et al. 2023, §2.3 and appendix A.1; Chen et al. 2023, algorithm 2), the
expected acceptance it implies, temperature, a chi-square goodness-of-fit test to check
the rule's output against the target's distribution, and a loop that runs the rule with
real draft and target models.

The rule, for one drafted token x ~ q where the target's distribution is p: keep x with
probability min(1, p(x) / q(x)); otherwise emit a token drawn from the residual
norm(max(0, p − q)). The emitted token is then distributed exactly as p, whatever q is.
After γ kept tokens the target's distribution at the next position gives a bonus token.
The chance of keeping a token is Σ_x min(p(x), q(x)) (Leviathan et al. 2023, §3.1).

Temperature 0 is greedy decoding: p and q are one-hot on their argmax, so the rule
keeps a token exactly when the target would have chosen it, and speculative sampling
becomes the greedy algorithm of ``algorithm``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from measure.lab.generation import crop_cache

SIGNIFICANCE = 0.01  # the level at which the chi-square test rejects "distributed as p"
MIN_EXPECTED = 5.0  # the usual rule for the chi-square approximation: every cell expects at least 5


def tempered(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Probabilities (float64, last dimension) of sampling at ``temperature``:
    softmax(logits / T); at T = 0, one-hot on the argmax (greedy decoding)."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    logits = logits.double()
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.shape[-1]).double()
    return torch.softmax(logits / temperature, dim=-1)


def expected_acceptance(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Σ_x min(p(x), q(x)) over the last dimension: the probability that the rule keeps a
    token drafted from q when the target's distribution is p (1 − total variation)."""
    return torch.minimum(p, q).sum(dim=-1)


def acceptance_probability(p: torch.Tensor, q: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """min(1, p(x) / q(x)) for drafted token(s) ``x``; x was drawn from q, so q(x) > 0."""
    px, qx = p[..., x], q[..., x]
    return torch.clamp(px / qx, max=1.0)


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p − q)): where a rejected token's replacement is drawn from. When p == q
    nothing is ever rejected and the residual is empty; p itself is returned then."""
    r = torch.clamp(p - q, min=0.0)
    total = r.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, r / total.clamp(min=torch.finfo(r.dtype).tiny), p)


def verify_round(
    p_rows: torch.Tensor, q_rows: torch.Tensor, drafted: list[int], generator: torch.Generator
) -> tuple[int, int]:
    """One round of speculative sampling over probability vectors.

    ``q_rows[i]`` is the draft's distribution that ``drafted[i]`` was drawn from;
    ``p_rows[i]`` the target's at the same position, with one more row (γ + 1 in all) for
    the position after the last draft. Returns (n, token): the first n drafts are kept
    and ``token`` follows them, drawn from the residual at the first rejection or, when
    all γ were kept, from the target's last row (the bonus token).
    """
    gamma = len(drafted)
    if p_rows.shape[0] != gamma + 1 or q_rows.shape[0] != gamma:
        raise ValueError(f"need {gamma + 1} target rows and {gamma} draft rows")
    for i, x in enumerate(drafted):
        u = torch.rand((), generator=generator, dtype=torch.float64)
        if u >= acceptance_probability(p_rows[i], q_rows[i], torch.tensor(x)):
            return i, int(torch.multinomial(residual(p_rows[i], q_rows[i]), 1, generator=generator))
    return gamma, int(torch.multinomial(p_rows[gamma], 1, generator=generator))


def emitted_tokens(p: torch.Tensor, q: torch.Tensor, draws: int, generator: torch.Generator) -> torch.Tensor:
    """The rule applied ``draws`` times at one position, vectorised: draft x ~ q, keep it
    with probability min(1, p(x)/q(x)), else draw from the residual. Returns the emitted
    token of every draw; their distribution is p."""
    x = torch.multinomial(q, draws, replacement=True, generator=generator)
    keep = torch.rand(draws, generator=generator, dtype=torch.float64) < acceptance_probability(p, q, x)
    replacement = torch.multinomial(residual(p, q), draws, replacement=True, generator=generator)
    return torch.where(keep, x, replacement)


def chi_square_sf(statistic: float, dof: int) -> float:
    """P(X ≥ statistic) for X chi-square with ``dof`` degrees of freedom: the regularized
    upper incomplete gamma function Q(dof / 2, statistic / 2)."""
    if dof < 1:
        raise ValueError(f"need at least one degree of freedom, got {dof}")
    return float(
        torch.special.gammaincc(
            torch.tensor(dof / 2, dtype=torch.float64), torch.tensor(statistic / 2, dtype=torch.float64)
        )
    )


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    dof: int
    p_value: float
    cells: int  # after pooling the rare tokens
    pooled_tokens: int  # tokens whose expected counts were pooled into one cell

    def rejects(self, significance: float = SIGNIFICANCE) -> bool:
        return self.p_value < significance


def chi_square_goodness_of_fit(samples: torch.Tensor, probs: torch.Tensor) -> ChiSquare:
    """Pearson's chi-square test of ``samples`` (token ids) against the distribution
    ``probs``. Tokens expected fewer than MIN_EXPECTED times are pooled into one cell;
    when that cell still expects too few, it joins the smallest other cell."""
    n = samples.numel()
    observed = torch.bincount(samples.reshape(-1), minlength=probs.numel()).double()
    expected = probs.double() * n
    common = expected >= MIN_EXPECTED
    obs = observed[common].tolist()
    exp = expected[common].tolist()
    rare_obs, rare_exp = float(observed[~common].sum()), float(expected[~common].sum())
    if rare_exp > 0 or rare_obs > 0:
        if rare_exp >= MIN_EXPECTED or not exp:
            obs.append(rare_obs)
            exp.append(rare_exp)
        else:
            i = min(range(len(exp)), key=exp.__getitem__)
            obs[i] += rare_obs
            exp[i] += rare_exp
    if len(exp) < 2:
        raise ValueError("the distribution has fewer than two cells with enough expected counts to test")
    if any(e == 0 and o > 0 for o, e in zip(obs, exp, strict=True)):
        return ChiSquare(float("inf"), len(exp) - 1, 0.0, len(exp), int((~common).sum()))
    statistic = sum((o - e) ** 2 / e for o, e in zip(obs, exp, strict=True) if e > 0)
    dof = len(exp) - 1
    return ChiSquare(statistic, dof, chi_square_sf(statistic, dof), len(exp), int((~common).sum()))


def _sample(probs: torch.Tensor, generator: torch.Generator) -> int:
    return int(torch.multinomial(probs, 1, generator=generator))


@torch.inference_mode()
def speculative_sampled(
    target, draft, ids: torch.Tensor, new_tokens: int, gamma: int, temperature: float, generator: torch.Generator
) -> tuple[list[int], list[int]]:
    """Speculative sampling with real models, batch 1, at ``temperature``. Returns the
    generated token ids and, per round, how many drafted tokens were kept. The caches
    follow the same invariant as ``speculative_greedy``; at temperature 0 the two give
    the same tokens."""
    out = target(input_ids=ids, use_cache=True)
    tcache = out.past_key_values
    token = _sample(tempered(out.logits[0, -1], temperature), generator)
    seq = ids[0].tolist() + [token]
    dcache = draft(input_ids=ids, use_cache=True).past_key_values
    tokens, accepted = [token], []
    while len(tokens) < new_tokens:
        pending = torch.tensor([seq[dcache.get_seq_length() :]], device=ids.device)
        drafted, q_rows = [], []
        for _ in range(gamma):
            logits = draft(input_ids=pending, past_key_values=dcache, use_cache=True).logits
            q = tempered(logits[0, -1], temperature)
            drafted.append(_sample(q, generator))
            q_rows.append(q)
            pending = torch.tensor([[drafted[-1]]], device=ids.device)
        block = torch.tensor([[seq[-1], *drafted]], device=ids.device)
        p_rows = tempered(target(input_ids=block, past_key_values=tcache, use_cache=True).logits[0], temperature)
        n, token = verify_round(p_rows, torch.stack(q_rows), drafted, generator)
        new = drafted[:n] + [token]
        base = len(seq)
        seq += new
        tokens += new
        accepted.append(n)
        crop_cache(tcache, base + n)
        crop_cache(dcache, min(dcache.get_seq_length(), base + n))
    return tokens[:new_tokens], accepted


def judged_drafts(accepted: list[int], gamma: int) -> int:
    """How many drafted tokens the rule actually decided on: every kept one, plus the one
    rejected in a round that stopped early (the drafts after it were never judged)."""
    return sum(n + 1 if n < gamma else gamma for n in accepted)
