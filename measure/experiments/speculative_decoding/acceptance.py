"""§8's acceptance counts: each draft's agreement with the target's greedy continuation
(its α, with the 95 % interval of a proportion, Wilson score), Σ min(p_T, q_T) at each
temperature, and how often the i-th drafted token of a real run's rounds was kept."""

from __future__ import annotations

import gc

import torch

from measure.experiments.speculative_decoding.algorithm import draft_kernels, draft_label, make_draft
from measure.experiments.speculative_decoding.sampling import expected_acceptance, tempered
from measure.lab.context import Context
from measure.lab.evaluation import agreement_of, logits_given_prefix
from measure.lab.formulas import binomial_interval


def _proportion(name: str, k: int, n: int) -> dict:
    """``name_low`` and ``name_high``: the 95 % interval of k in n (Wilson score, as the
    quality page's; none for n = 0)."""
    low, high = binomial_interval(k, n) if n else (None, None)
    return {f"{name}_low": low, f"{name}_high": high}


def position_rows(draft: str, gamma: int, accepted: list[int], alpha: float) -> list[dict]:
    """Rows of ``acceptance_by_position``: how often the i-th drafted token of a round was
    kept, given that the ones before it were."""
    rows = []
    for i in range(1, gamma + 1):
        reached = sum(1 for n in accepted if n >= i - 1)
        kept = sum(1 for n in accepted if n >= i)
        rows.append(
            {
                "draft": draft,
                "gamma": gamma,
                "position": i,
                "proposed": reached,
                "accepted": kept,
                "rate": kept / reached if reached else 0.0,
                **_proportion("rate", kept, reached),
                "alpha": alpha,
            }
        )
    return rows


def acceptance_rows(
    target,
    ids: torch.Tensor,
    names: list[str],
    keep: list[str],
    ctx: Context,
    reference: torch.Tensor,
    temperatures: tuple[float, ...] = (),
    keep_logits: tuple[str, ...] = (),
) -> tuple:
    """Rows of ``acceptance``: each draft's agreement with the target's greedy
    continuation ``reference`` (the same count as measure/lab/evaluation.py's
    ``agreement``); rows of ``acceptance_by_temperature``: at every position of the same
    continuation, the chance Σ min(p_T, q_T) that speculative sampling at temperature T
    keeps the draft's token, averaged over the positions; the drafts named in ``keep``,
    built once, by name in the order of ``keep``; and the draft logits (positions, vocab)
    of those named in ``keep_logits``, with the target's under the key "target"."""
    target_logits = logits_given_prefix(target, ids, reference)[0]
    p_at = {t: tempered(target_logits, t) for t in temperatures}
    rows, by_temperature, models, logits_of = [], [], {}, {"target": target_logits}
    for name in ctx.progress(names, "acceptance of each quantized draft"):
        draft = make_draft(target, name)
        logits = logits_given_prefix(draft, ids, reference).float()  # a bf16 draft's too
        a = agreement_of(logits.argmax(dim=-1), reference)
        rows.append(
            {
                "draft": name,
                "label": draft_label(name),
                "kernels": draft_kernels(name),
                "agreed": a.agreed,
                "positions": a.total,
                "alpha": a.fraction,
                **_proportion("alpha", a.agreed, a.total),
                "first_disagreement": a.first_disagreement,
            }
        )
        for t in temperatures:
            kept = expected_acceptance(p_at[t], tempered(logits[0], t))
            by_temperature.append(
                {
                    "draft": name,
                    "label": draft_label(name),
                    "temperature": t,
                    "positions": kept.numel(),
                    # A sum divided by the count, as agreed / positions is: at T = 0 the two are equal floats.
                    "expected_acceptance": float(kept.sum()) / kept.numel(),
                    "lowest": float(kept.min()),
                }
            )
        if name in keep_logits:
            logits_of[name] = logits[0]
        if name in keep:
            models[name] = draft
        else:
            del draft
            gc.collect()
    return rows, {name: models[name] for name in keep}, by_temperature, logits_of
