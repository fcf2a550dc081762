"""§8's tables of speculative sampling: ``exactness`` (the rule's emitted tokens tested
against the target's distribution) and ``sampled_run`` (the rule run for real)."""

from __future__ import annotations

import time

import torch

from measure.experiments.speculative_decoding.algorithm import draft_label
from measure.experiments.speculative_decoding.config import Config
from measure.experiments.speculative_decoding.sampling import (
    SIGNIFICANCE,
    chi_square_goodness_of_fit,
    emitted_tokens,
    expected_acceptance,
    judged_drafts,
    speculative_sampled,
    tempered,
)
from measure.lab.formulas import binomial_interval, expected_tokens_per_verification


def exactness_rows(p_rows: torch.Tensor, q_rows: torch.Tensor, cfg: Config) -> list[dict]:
    """Rows of ``exactness``: at the positions where the draft differs most from the
    target (largest 1 − Σ min(p, q)), the rule's emitted tokens and the draft's own
    samples, each tested against the target's distribution p."""
    p_all = tempered(p_rows, cfg.exactness_temperature)
    q_all = tempered(q_rows, cfg.exactness_temperature)
    kept = expected_acceptance(p_all, q_all)
    positions = sorted(kept.argsort()[: cfg.exactness_positions].tolist())
    g = torch.Generator().manual_seed(cfg.seed)
    rows = []
    for i in positions:
        p, q = p_all[i], q_all[i]
        for sampler, draws in (
            ("speculative rule", emitted_tokens(p, q, cfg.exactness_draws, g)),
            ("draft alone", torch.multinomial(q, cfg.exactness_draws, replacement=True, generator=g)),
        ):
            test = chi_square_goodness_of_fit(draws, p)
            rows.append(
                {
                    "position": i,
                    "sampler": sampler,
                    "expected_acceptance": float(kept[i]),
                    "draws": cfg.exactness_draws,
                    "cells": test.cells,
                    "dof": test.dof,
                    "chi_square": test.statistic,
                    "p_value": test.p_value,
                    "rejected": test.rejects(SIGNIFICANCE),
                }
            )
    return rows


def _interval(kept: int, judged: int) -> dict:
    """The 95 % interval of the share kept (Wilson score; none where nothing was judged)."""
    low, high = binomial_interval(kept, judged) if judged else (None, None)
    return {"acceptance_low": low, "acceptance_high": high}


def sampled_rows(target, models: dict, ids: torch.Tensor, by_temperature: list[dict], cfg: Config) -> list[dict]:
    """Rows of ``sampled_run``: speculative sampling with each draft, seeded, timed once."""
    rows = []
    for name, draft in models.items():
        g = torch.Generator().manual_seed(cfg.seed)
        t0 = time.perf_counter()
        tokens, accepted = speculative_sampled(
            target, draft, ids, cfg.sampled_tokens, cfg.sampled_gamma, cfg.sampled_temperature, g
        )
        seconds = time.perf_counter() - t0
        alpha = next(
            r["expected_acceptance"]
            for r in by_temperature
            if r["draft"] == name and r["temperature"] == cfg.sampled_temperature
        )
        judged, kept = judged_drafts(accepted, cfg.sampled_gamma), sum(accepted)
        rows.append(
            {
                "draft": name,
                "label": draft_label(name),
                "temperature": cfg.sampled_temperature,
                "gamma": cfg.sampled_gamma,
                "new_tokens": len(tokens),
                "rounds": len(accepted),
                "judged": judged,
                "accepted": kept,
                "acceptance": kept / judged if judged else 0.0,
                **_interval(kept, judged),
                "expected_acceptance": alpha,
                "predicted_tokens_per_round": expected_tokens_per_verification(alpha=alpha, gamma=cfg.sampled_gamma),
                # Every round's tokens, the last round's surplus over new_tokens included.
                "tokens_per_round": sum(n + 1 for n in accepted) / len(accepted),
                "seconds": seconds,
            }
        )
    return rows
