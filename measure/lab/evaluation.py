"""Quality measurements shared by §7 (quality of quantized models) and §8 (a quantized
draft for a full-precision target): perplexity, and agreement of argmax
predictions under identical prefixes (the greedy question battery is ``battery``).

The stable API::

    perplexity(model, ids, context=..., stride=...) -> Perplexity
    token_scores(model, ids, context=..., stride=..., reference_logp=None, keep=False) -> TokenScores
    reference_continuation(model, prompt_ids, new_tokens) -> Tensor (1, new_tokens)
    argmax_given_prefix(model, prompt_ids, continuation) -> Tensor (1, new_tokens)
    agreement(ref_model, quant_model, prompt_ids, new_tokens=144, reference=None) -> Agreement
    agreement_prompt_ids(tokenizer, device) -> Tensor (1, prompt tokens)

All are plain forward passes in ``torch.inference_mode()``; nothing is sampled.

Agreement is measured once, one way, for both pages that show it: the quality page's
agreement column and the speculative-decoding page's acceptance α continue the same
prompt (AGREEMENT_PROMPT) for the same number of tokens (AGREEMENT_TOKENS), so the two
tables hold the same counts by construction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from measure.lab.continuations import greedy_once

AGREEMENT_PROMPT = "Explain step by step how bread is made."
AGREEMENT_TOKENS = 144  # spec §7: the reference's greedy continuation that agreement is measured on


@dataclass(frozen=True)
class Perplexity:
    nll_sum: float  # natural log, summed over scored tokens
    tokens: int  # tokens scored (each exactly once)
    windows: int  # forward passes

    @property
    def mean_nll(self) -> float:
        return self.nll_sum / self.tokens

    @property
    def value(self) -> float:
        return math.exp(self.mean_nll)


@dataclass(frozen=True)
class TokenScores:
    """Every scored target of a text, position by position: what ``perplexity`` sums,
    and what the scorer-free comparisons with a reference model need."""

    nll: torch.Tensor  # (n,) negative log-likelihood of each target, natural log
    top1: torch.Tensor  # (n,) the argmax of each position's next-token distribution
    kl: torch.Tensor | None  # (n,) KL(reference || this model) at each position, given the reference's log-probs
    logp: torch.Tensor | None  # (n, vocab) the log-probs themselves, where kept (the reference's)
    nll_sum: float
    windows: int

    @property
    def perplexity(self) -> Perplexity:
        return Perplexity(nll_sum=self.nll_sum, tokens=self.nll.numel(), windows=self.windows)


KL_ROWS = 256  # positions per step of the KL sum, to bound its temporaries


def _kl(reference_logp: torch.Tensor, logp: torch.Tensor) -> torch.Tensor:
    """KL(P || Q) = sum_v P(v) (log P(v) - log Q(v)), one value per position."""
    out = [(r.exp() * (r - q)).sum(-1) for r, q in zip(reference_logp.split(KL_ROWS), logp.split(KL_ROWS), strict=True)]
    return torch.cat(out) if out else logp.new_zeros(0)


@torch.inference_mode()
def token_scores(
    model,
    ids: torch.Tensor,
    *,
    context: int,
    stride: int,
    reference_logp: torch.Tensor | None = None,
    keep: bool = False,
) -> TokenScores:
    """Score ``ids[1:]`` given what precedes them (windows as ``perplexity`` describes),
    keeping each position's NLL and argmax; with ``reference_logp`` (a reference model's
    ``logp`` on the same text) also each position's KL divergence from it; with ``keep``
    the log-probs themselves."""
    if not 0 < stride <= context:
        raise ValueError("need 0 < stride <= context")
    ids = ids.reshape(-1)
    n = ids.numel() - 1
    total, scored, windows = 0.0, 0, 0
    nll, top1, kl, kept = [], [], [], []
    for end in range(stride, n + stride, stride):
        end = min(end, n)  # targets ids[scored + 1 .. end] are predicted by inputs ids[start:end]
        start = max(0, end - context)
        logits = model(input_ids=ids[start:end].unsqueeze(0), use_cache=False).logits[0].float()
        first = scored + 1  # first target not scored yet
        pred = logits[first - 1 - start :]  # the position before target i predicts i
        logp = torch.log_softmax(pred, dim=-1)
        targets = ids[first : end + 1]
        window_nll = -logp.gather(1, targets.unsqueeze(1)).squeeze(1)
        total += float(window_nll.sum())
        nll.append(window_nll)
        top1.append(logp.argmax(-1))
        if reference_logp is not None:
            kl.append(_kl(reference_logp[first - 1 : end], logp))
        if keep:
            kept.append(logp)
        scored, windows = end, windows + 1
        if end == n:
            break
    return TokenScores(
        nll=torch.cat(nll),
        top1=torch.cat(top1),
        kl=torch.cat(kl) if reference_logp is not None else None,
        logp=torch.cat(kept) if keep else None,
        nll_sum=total,
        windows=windows,
    )


def perplexity(model, ids: torch.Tensor, *, context: int, stride: int) -> Perplexity:
    """exp(mean negative log-likelihood) of ``ids[1:]`` given what precedes them.

    ``ids`` is 1-D: N + 1 tokens give N scored targets. Windows of at most ``context``
    input tokens end every ``stride`` targets; each window scores only the targets no
    earlier window scored, so every target is scored once, with between
    ``context - stride + 1`` and ``context`` tokens before it (all of them when one
    window covers the text). ``stride == context`` is non-overlapping windows.
    """
    return token_scores(model, ids, context=context, stride=stride).perplexity


@dataclass(frozen=True)
class Agreement:
    agreed: int
    total: int
    first_disagreement: int  # position in the continuation, -1 if none

    @property
    def fraction(self) -> float:
        return self.agreed / self.total


def reference_continuation(model, prompt_ids: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """The reference model's greedy continuation (cached decoding), shape (1, new_tokens),
    decoded once per run for the weights it is asked with (``continuations``)."""
    return greedy_once(model, prompt_ids, new_tokens)


def agreement_prompt_ids(tokenizer, device) -> torch.Tensor:
    """AGREEMENT_PROMPT as a user turn in the model's chat template, shape (1, tokens)."""
    enc = tokenizer.apply_chat_template(
        [{"role": "user", "content": AGREEMENT_PROMPT}], add_generation_prompt=True, return_tensors="pt"
    )
    return enc["input_ids"].to(device)


@torch.inference_mode()
def logits_given_prefix(model, prompt_ids: torch.Tensor, continuation: torch.Tensor) -> torch.Tensor:
    """At every position of ``continuation``, the model's next-token logits given the
    prompt and the continuation's tokens before that position (teacher forcing: one
    forward pass), shape (1, positions, vocab)."""
    seq = torch.cat([prompt_ids, continuation], dim=1)[:, :-1]
    logits = model(input_ids=seq, use_cache=False).logits
    return logits[:, prompt_ids.shape[1] - 1 :, :]


def argmax_given_prefix(model, prompt_ids: torch.Tensor, continuation: torch.Tensor) -> torch.Tensor:
    """At every position of ``continuation``, the model's argmax given the prompt and the
    continuation's tokens before that position."""
    return logits_given_prefix(model, prompt_ids, continuation).argmax(dim=-1)


def agreement(
    ref_model,
    quant_model,
    prompt_ids: torch.Tensor,
    new_tokens: int = 144,
    *,
    reference: torch.Tensor | None = None,
) -> Agreement:
    """Fraction of positions where ``quant_model``'s argmax equals the token the reference
    produced greedily, given the identical prefix. This is the greedy acceptance rate of
    ``quant_model`` as a speculative draft for ``ref_model``. Pass ``reference`` (from
    ``reference_continuation``) to reuse one reference for many models."""
    if reference is None:
        reference = reference_continuation(ref_model, prompt_ids, new_tokens)
    return agreement_of(argmax_given_prefix(quant_model, prompt_ids, reference), reference)


def agreement_of(pred: torch.Tensor, reference: torch.Tensor) -> Agreement:
    """The agreement of argmax predictions ``pred`` with the ``reference`` tokens, both
    shaped (1, positions)."""
    same = (pred == reference)[0]
    wrong = (~same).nonzero()
    return Agreement(
        agreed=int(same.sum()),
        total=int(same.numel()),
        first_disagreement=int(wrong[0, 0]) if wrong.numel() else -1,
    )
