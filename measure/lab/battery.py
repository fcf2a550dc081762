"""§7's question battery: several prompts answered greedily at once, written out by hand,
under one or more repetition penalties (the CTRL rule), all in one batch.

The stable API::

    greedy_answers(model, prompts, max_new_tokens=..., repetition_penalties=(...), eos_token_id=...)
    apply_repetition_penalty(logits, seen, penalty) -> Tensor
"""

from __future__ import annotations

import torch


def apply_repetition_penalty(logits: torch.Tensor, seen: torch.Tensor, penalty: float | torch.Tensor) -> torch.Tensor:
    """The CTRL rule (Keskar et al., 2019, arXiv:1909.05858, §4.1), as transformers'
    RepetitionPenaltyLogitsProcessor applies it: for every token already present in the
    row (prompt included), a positive logit is divided by ``penalty``, a negative one
    multiplied. ``seen`` is a boolean (batch, vocab) mask; ``penalty`` one number, or one
    per row (a (batch, 1) tensor; a row's 1.0 leaves it exactly as it was)."""
    if not isinstance(penalty, torch.Tensor) and penalty == 1.0:
        return logits
    penalised = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, penalised, logits)


@torch.inference_mode()
def greedy_answers(
    model,
    prompts: list[torch.Tensor],
    *,
    max_new_tokens: int,
    repetition_penalties: tuple[float, ...] = (1.0,),
    eos_token_id: int | None = None,
    pad_token_id: int = 0,
) -> list[list[list[int]]]:
    """Greedy continuation of several prompts at once, written out by hand, once per
    repetition penalty: ``answers[k][i]`` is prompt ``i``'s answer under
    ``repetition_penalties[k]``.

    The prompts (1-D id tensors) are left-padded into one batch; the attention mask hides
    the padding and position ids count real tokens only, so each row sees what it would
    alone. A row stops at ``eos_token_id`` (not included in its answer); the loop stops
    when every row has stopped or after ``max_new_tokens``. Padding is never penalised.
    The prompts are read once; the one prefill's cache is then repeated, a copy of every
    row per penalty, and all of them decode in one batch, each row with its own penalty:
    on a CPU one step of twice the rows costs far less than two steps (a step reads every
    weight, whatever the batch).
    """
    device = prompts[0].device
    width = max(p.numel() for p in prompts)
    ids = torch.full((len(prompts), width), pad_token_id, dtype=torch.long, device=device)
    mask = torch.zeros_like(ids)
    for i, p in enumerate(prompts):
        ids[i, width - p.numel() :] = p
        mask[i, width - p.numel() :] = 1
    seen = torch.zeros(len(prompts), model.config.vocab_size, dtype=torch.bool, device=device)
    seen.scatter_(1, ids, mask.bool())
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True)
    k = len(repetition_penalties)
    cache = out.past_key_values
    if k > 1:
        cache.batch_repeat_interleave(k)  # row i's copies are rows i k .. i k + k - 1
    answers = _greedy_from(
        model,
        cache,
        out.logits[:, -1, :].float().repeat_interleave(k, dim=0),
        seen.repeat_interleave(k, dim=0),
        mask.repeat_interleave(k, dim=0),
        positions.repeat_interleave(k, dim=0),
        max_new_tokens=max_new_tokens,
        repetition_penalty=torch.tensor(repetition_penalties, device=device).repeat(len(prompts)).unsqueeze(1),
        eos_token_id=eos_token_id,
    )
    return [answers[j::k] for j in range(k)]


def _greedy_from(
    model, cache, logits, seen, mask, positions, *, max_new_tokens, repetition_penalty, eos_token_id
) -> list[list[int]]:
    """``greedy_answers``' decoding after the prefill: ``cache`` and ``seen`` are its own
    (written to), ``logits`` the prefill's last position's, ``repetition_penalty`` one
    per row."""
    rows = torch.arange(logits.shape[0], device=logits.device)
    answers: list[list[int]] = [[] for _ in range(logits.shape[0])]
    done = torch.zeros(logits.shape[0], dtype=torch.bool, device=logits.device)
    for step in range(max_new_tokens):
        token = apply_repetition_penalty(logits, seen, repetition_penalty).argmax(dim=-1)
        for i, t in enumerate(token.tolist()):
            if not done[i]:
                if eos_token_id is not None and t == eos_token_id:
                    done[i] = True
                else:
                    answers[i].append(t)
        seen[rows, token] = True
        if bool(done.all()) or step == max_new_tokens - 1:
            break
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
        positions = positions[:, -1:] + 1
        out = model(
            input_ids=token.unsqueeze(1),
            attention_mask=mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
        )
        cache = out.past_key_values
        logits = out.logits[:, -1, :].float()
    return answers
