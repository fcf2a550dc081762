"""§7 Does quality survive? The same model with its weights quantized in place, per scheme.

For the full-precision reference and every scheme of ``measure.lab.quantizers.SCHEMES``
(projection matrices quantized, embeddings and norms untouched), measures:

* ``quality``: perplexity on a fixed stretch of the committed book; a battery of 16
  short factual questions answered greedily and scored, with a Wilson 95% interval,
  once without a repetition penalty (true greedy, which is also this model's default)
  and once with a common serving penalty; agreement with the reference's greedy
  continuation, position by position, given identical prefixes.
* ``divergence``: per scheme, the scorer-free measures against the reference on the same
  tokens (KL divergence, top-1 agreement, Δ perplexity), each with a 95% interval
  (``divergence``).
* ``battery``: every answer, per model and penalty, and whether it was scored right.
* ``protocol``: the evaluation protocol (text, tokens, context, stride, dtype, decoding).

The quantized weights are written into the run's model and the originals restored
afterwards (the model is shared with the experiments that follow).

The package: ``tables`` declares what is written, ``questions`` is the battery and
``scoring`` its strict scorer, ``divergence`` the scorer-free measures' intervals,
``variants`` quantizes the model in place and restores it; the rest is here.

Writes ``site_data/quality/``. Alone: ``python -m measure run --only quality``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from measure.experiments.quality import divergence
from measure.experiments.quality.questions import INSTRUCTION, QUESTIONS, SERVING_PENALTY, score
from measure.experiments.quality.tables import TABLES, VALUES
from measure.experiments.quality.variants import Variants, default_penalty
from measure.lab import quantizers as q
from measure.lab.battery import greedy_answers
from measure.lab.context import Context, book_token_ids
from measure.lab.evaluation import (
    AGREEMENT_PROMPT,
    AGREEMENT_TOKENS,
    agreement,
    agreement_prompt_ids,
    reference_continuation,
    token_scores,
)
from measure.lab.formulas import binomial_interval
from sitedata import wording
from sitedata.schema import Result

__all__ = ["NEEDS_TRAINED", "TABLES", "TITLE", "VALUES", "Config", "run"]

TITLE = "Does quality survive?"
NEEDS_TRAINED = True


@dataclass(frozen=True, kw_only=True)
class Config:
    schemes: tuple[str, ...] = tuple(q.SCHEMES)
    eval_tokens: int = 2048  # spec §7: scored tokens of held-out prose
    text_offset: int = 0  # first token of the book used
    context: int = 2048  # one window: every token is scored with its whole prefix
    stride: int = 2048
    questions: int = 16  # spec §7
    max_new_tokens: int = 16
    agreement_tokens: int = AGREEMENT_TOKENS  # shared with §8, whose acceptance α is this agreement

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile in ("full", "cpu"):
            return cls()  # the spec's sizes fit the CPU budget
        # Every scheme even in smoke runs: the values name each variant (ppl_<variant>, ...).
        return cls(
            eval_tokens=48,
            context=32,
            stride=16,
            questions=2,
            max_new_tokens=6,
            agreement_tokens=8,
        )


def run(cfg: Config, ctx: Context) -> Result:
    model, tok = ctx.model.model, ctx.model.tokenizer
    all_ids = book_token_ids(tok)
    text_ids = torch.tensor(all_ids[cfg.text_offset : cfg.text_offset + cfg.eval_tokens + 1], device=ctx.device)
    default_p, default_src = default_penalty(model)
    penalties = list(dict.fromkeys([default_p, 1.0, SERVING_PENALTY]))
    questions = QUESTIONS[: cfg.questions]
    prompts = [
        tok.apply_chat_template(
            [{"role": "user", "content": f"{INSTRUCTION} {qq.text}"}], add_generation_prompt=True, return_tensors="pt"
        )["input_ids"][0].to(ctx.device)
        for qq in questions
    ]
    agree_prompt = agreement_prompt_ids(tok, ctx.device)
    ctx.log(f"  reference: greedy continuation of {cfg.agreement_tokens} tokens")
    reference = reference_continuation(model, agree_prompt, cfg.agreement_tokens)

    variants = Variants(model)
    layers = q.projection_layers(model)
    n_proj = sum(lin.weight.numel() for _, lin in layers)
    rows, answer_rows, divergence_rows, seconds = [], [], [], {}
    ref_scores = None
    try:
        for variant in ctx.progress(["reference", *cfg.schemes], "quantized variants"):
            t0 = time.perf_counter()
            if variant == "reference":
                label, bits = "reference (as loaded)", float(torch.finfo(ctx.dtype).bits)
            else:
                scheme = q.SCHEMES[variant]
                label = scheme.label
                q.quantize_model_(model, scheme)
                bits = sum(q.bits_per_weight(scheme, tuple(lin.weight.shape)) * lin.weight.numel() for _, lin in layers)
                bits /= n_proj
            scores = token_scores(
                model,
                text_ids,
                context=cfg.context,
                stride=cfg.stride,
                reference_logp=None if ref_scores is None else ref_scores.logp,
                keep=ref_scores is None,
            )
            if ref_scores is None:
                ref_scores = scores
            else:
                divergence_rows.append({"variant": variant, "label": label, **divergence.row(ref_scores, scores)})
            ppl = scores.perplexity
            row = {"variant": variant, "label": label, "bits_per_weight": bits, "perplexity": ppl.value}
            by_penalty = greedy_answers(
                model,
                prompts,
                max_new_tokens=cfg.max_new_tokens,
                repetition_penalties=tuple(penalties),
                eos_token_id=tok.eos_token_id,
                pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else 0,
            )
            for p, answers in zip(penalties, by_penalty, strict=True):
                correct = 0
                for question, ids in zip(questions, answers, strict=True):
                    text = tok.decode(ids, skip_special_tokens=True).strip()
                    ok = score(text, question)
                    correct += ok
                    answer_rows.append(
                        {
                            "variant": variant,
                            "repetition_penalty": p,
                            "question": question.text,
                            "expected": " / ".join(question.accepted),
                            "answer": text,
                            "correct": ok,
                        }
                    )
                lo, hi = binomial_interval(correct, len(questions))
                key = "greedy" if p == 1.0 else "penalty"
                row[f"battery_{key}"] = correct
                row[f"battery_{key}_low"] = lo
                row[f"battery_{key}_high"] = hi
            agree = agreement(model, model, agree_prompt, cfg.agreement_tokens, reference=reference)
            row["agreement_agreed"] = agree.agreed
            row["agreement_positions"] = agree.total
            row["agreement"] = agree.fraction
            row["first_disagreement"] = agree.first_disagreement
            rows.append(row)
            seconds[variant] = time.perf_counter() - t0
            variants.restore()
    finally:
        variants.restore()
    ref = rows[0]["perplexity"]
    for r in rows:
        r["perplexity_ratio"] = r["perplexity"] / ref
        r["seconds"] = seconds[r["variant"]]
    n = len(questions)
    scored = text_ids.numel() - 1
    stride = wording.PROTOCOL_STRIDE_ONE if ppl.windows == 1 else wording.PROTOCOL_STRIDE
    protocol_rows = [
        ("text", "Alice's Adventures in Wonderland (Lewis Carroll, 1865), measure/data/alice29.txt"),
        (
            "tokens scored",
            wording.PROTOCOL_TOKENS.format(
                scored=f"{scored:,}",
                first=f"{cfg.text_offset + 1:,}",
                last=f"{cfg.text_offset + scored:,}",
                start=f"{cfg.text_offset:,}",
            ),
        ),
        ("context window", wording.PROTOCOL_WINDOW.format(tokens=f"{cfg.context:,}")),
        ("stride", stride.format(tokens=f"{cfg.stride:,}", passes=ppl.windows)),
        ("dtype", str(ctx.dtype).removeprefix("torch.")),
        ("quantized", wording.PROTOCOL_QUANTIZED.format(count=len(layers))),
        (
            "battery",
            wording.PROTOCOL_BATTERY.format(count=n, instruction=INSTRUCTION, tokens=cfg.max_new_tokens),
        ),
        ("decoding", wording.PROTOCOL_DECODING),
        ("scoring", wording.PROTOCOL_SCORING.format(source="measure/experiments/quality/scoring.py")),
        (
            "divergence",
            wording.PROTOCOL_DIVERGENCE.format(
                confidence=f"{divergence.CONFIDENCE:.0%}",
                resamples=f"{divergence.RESAMPLES:,}",
                seed=divergence.SEED,
                block=divergence.BLOCK,
            ),
        ),
        ("default repetition penalty", wording.PROTOCOL_PENALTY.format(penalty=f"{default_p:g}", source=default_src)),
        ("agreement", wording.PROTOCOL_AGREEMENT.format(tokens=cfg.agreement_tokens, prompt=AGREEMENT_PROMPT)),
    ]
    values = {
        "eval_tokens": text_ids.numel() - 1,
        "context": cfg.context,
        "stride": cfg.stride,
        "questions": n,
        "agreement_tokens": cfg.agreement_tokens,
        "default_repetition_penalty": default_p,
        "default_penalty_source": default_src,
        "serving_penalty": SERVING_PENALTY,
        "agreement_prompt": AGREEMENT_PROMPT,
        "reference_text": tok.decode(reference[0], skip_special_tokens=True),
        "reference_perplexity": ref,
    }
    for r in rows:
        values[f"ppl_{r['variant']}"] = r["perplexity"]
        values[f"agreement_{r['variant']}"] = r["agreement"]
    tables = {
        "quality": rows,
        "divergence": divergence_rows,
        "battery": answer_rows,
        "protocol": [{"item": a, "setting": b} for a, b in protocol_rows],
    }
    return Result(tables=tables, values=values)
