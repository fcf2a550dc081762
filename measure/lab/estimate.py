"""How long a run will take, printed before it starts: each experiment counts its own
work (``work(cfg)`` in its module), and the two unit costs are measured on the device
just before, with the model the run uses.

The counts are of forward passes: prompt tokens processed in prefills (a prefill's cost
grows with its tokens) and decode steps (a step costs about the same at any context or
batch this small, a first-order assumption), plus compilations, which no quick probe can
price: each is charged ``COMPILE_S``, an allowance, said so in the output.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

COMPILE_S = 60.0  # an allowance per compilation of the decode step (46-82 s were seen on two CPU cores)


@dataclass(frozen=True)
class ForwardPasses:
    """What a run will ask of the model, counted: the unit of the estimate."""

    prefill_tokens: int = 0  # prompt tokens processed, over every prefill and recompute pass
    decode_steps: int = 0  # single-token steps, eager or compiled
    compiles: int = 0  # compilations of the decode step

    def __add__(self, other: ForwardPasses) -> ForwardPasses:
        return ForwardPasses(
            self.prefill_tokens + other.prefill_tokens,
            self.decode_steps + other.decode_steps,
            self.compiles + other.compiles,
        )


@dataclass(frozen=True)
class UnitCosts:
    prompt_token_s: float  # one prompt token of a 256-token prefill
    step_s: float  # one eager decode step, one request, a short cache

    def seconds(self, work: ForwardPasses) -> float:
        return work.prefill_tokens * self.prompt_token_s + work.decode_steps * self.step_s + work.compiles * COMPILE_S

    def describe(self) -> str:
        return (
            f"a decode step {self.step_s * 1e3:.2f} ms and a prompt token {self.prompt_token_s * 1e3:.3f} ms "
            f"(measured now); {COMPILE_S:.0f} s allowed per compilation"
        )


def calibrate(model, device: torch.device, *, prompt_tokens: int = 256, repeats: int = 5) -> UnitCosts:
    """The two unit costs, median of ``repeats`` after a warm-up, on this device."""
    from measure.lab.generation import decode_step_at, prefill, random_cache
    from measure.lab.timing import time_call

    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (1, prompt_tokens), generator=torch.Generator().manual_seed(0)).to(device)
    pre = time_call(lambda: prefill(model, ids), device=device, warmup=1, repeats=repeats)
    cache = random_cache(model, batch=1, tokens=16)
    step = time_call(lambda: decode_step_at(model, ids[:, :1], cache, 16), device=device, warmup=2, repeats=repeats)
    return UnitCosts(prompt_token_s=pre.median_s / prompt_tokens, step_s=step.median_s)
