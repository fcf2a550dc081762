"""Reusing the prompt: prefix caching and chunked prefill.

Measures, on the run's model, one prefill at each prompt length of ``prompt_tokens``,
every length timed in one sweep of interleaved rounds (``measure/lab/sampling.py``): each
time the median of its samples with the 95 % interval of that median.

``make section`` wrote this skeleton: replace the measurement with the section's own and
keep its shape (a ``Config`` with its profiles, ``run`` returning a ``Result`` of the
tables declared in ``tables``, the claims and answers beside it). AUTHORING.md walks a
number from here to the page.

Writes ``site_data/prompt_reuse/``. Alone: ``make measure ONLY=prompt_reuse``.
"""

from __future__ import annotations

from dataclasses import dataclass

from measure.experiments.prompt_reuse.tables import TABLES, VALUES
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.generation import prefill
from measure.lab.medians import MIN_ROUNDS
from measure.lab.sampling import interleaved
from sitedata.schema import Result

__all__ = ["CHAPTER_COUNTERPART", "TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "Reusing the prompt: prefix caching and chunked prefill"
# The source chapter has no section on this: its page has no "Beside the chapter".
CHAPTER_COUNTERPART = False


@dataclass(frozen=True, kw_only=True)
class Config:
    prompt_tokens: tuple[int, ...] = (64, 256)
    seed: int = 1  # the order of the sweep's rounds
    budget_s: float = 4.0  # the sweep's time, warm-up included (six rounds are always completed)
    target: float = 0.03  # the relative half-width of every interval asked for

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile in ("full", "cpu"):
            return cls()
        return cls(prompt_tokens=(4, 8), budget_s=0.1)  # smoke: the tests' tiny model, in a second


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run at the fewest rounds (six, and a warm-up)."""
    return ForwardPasses(prefill_tokens=sum(cfg.prompt_tokens) * (MIN_ROUNDS + 1))


def run(cfg: Config, ctx: Context) -> Result:
    model = ctx.model.model
    ids = {n: ctx.prompt_ids(n) for n in cfg.prompt_tokens}
    ctx.log(f"  prefilling {', '.join(map(str, ids))} tokens, interleaved (budget {cfg.budget_s:.0f} s)")
    sweep = interleaved(
        {n: (lambda ids=ids[n]: prefill(model, ids)) for n in ids},
        device=ctx.device,
        seed=cfg.seed,
        budget_s=cfg.budget_s,
        target=cfg.target,
    )
    rows = [
        {"prompt_tokens": n, **est.columns("time_ms"), "tokens_per_s": n / est.median_s}
        for n, est in sweep.points.items()
    ]
    values = {"shortest_prompt_tokens": min(cfg.prompt_tokens), "longest_prompt_tokens": max(cfg.prompt_tokens)}
    return Result(tables={"prefill": rows}, values=values, notes={"sweep": sweep.describe()})
