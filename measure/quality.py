"""§7 Does quality survive? The same model with its weights quantized in place, per scheme.

For the full-precision reference and every scheme of ``measure.quantizers.SCHEMES``
(projection matrices quantized, embeddings and norms untouched), measures:

* ``quality``: perplexity on a fixed stretch of the committed book; a battery of 16
  short factual questions answered greedily and scored, with a Wilson 95% interval,
  once without a repetition penalty (true greedy, which is also this model's default)
  and once with a common serving penalty; agreement with the reference's greedy
  continuation, position by position, given identical prefixes.
* ``battery``: every answer, per model and penalty, and whether it was scored right.
* ``protocol``: the evaluation protocol (text, tokens, context, stride, dtype, decoding).

The quantized weights are written into the run's model and the originals restored
afterwards (the model is shared with the experiments that follow).

Writes ``site_data/quality/``. Alone: ``python -m measure run --only quality``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import torch

from measure import quantizers as q
from measure.context import Context, book_token_ids
from measure.evaluation import agreement, greedy_answers, perplexity, reference_continuation
from measure.formulas import binomial_interval
from measure.schema import Column, Result, Table, Value

TITLE = "Does quality survive?"
NEEDS_TRAINED = True

# Keskar et al., 2019 (CTRL, arXiv:1909.05858, §4.1) found a penalty of about 1.2 to
# balance truthful generation against repetition; it is the usual serving value.
SERVING_PENALTY = 1.2
INSTRUCTION = "Answer in a few words."
AGREEMENT_PROMPT = "Explain step by step how bread is made."

# (question, accepted answers as regular expressions, matched case-insensitively on
# word boundaries anywhere in the answer). Written for this site; answers are textbook facts.
QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is the capital of France?", ("paris",)),
    ("How many legs does a spider have?", ("8", "eight")),
    ("Who wrote Romeo and Juliet?", ("shakespeare",)),
    ("What is the largest planet in our solar system?", ("jupiter",)),
    ("How many days are there in a week?", ("7", "seven")),
    ("What is the chemical formula of water?", ("h2o", "h₂o")),
    ("Which planet is known as the Red Planet?", ("mars",)),
    ("What is the capital of Japan?", ("tokyo",)),
    ("What gas do plants take in from the air to make food?", ("carbon dioxide", "co2", "co₂")),
    ("At what temperature in degrees Celsius does water freeze?", ("0", "zero")),
    ("What is the largest ocean on Earth?", ("pacific",)),
    ("What language is mainly spoken in Brazil?", ("portuguese",)),
    ("Who painted the Mona Lisa?", ("leonardo", "da vinci")),
    ("How many continents are there on Earth?", ("7", "seven")),
    ("What is the closest star to the Earth?", ("sun",)),
    ("What do bees make?", ("honey",)),
)


@dataclass(frozen=True, kw_only=True)
class Config:
    schemes: tuple[str, ...] = tuple(q.SCHEMES)
    eval_tokens: int = 2048  # spec §7: scored tokens of held-out prose
    text_offset: int = 0  # first token of the book used
    context: int = 2048  # one window: every token is scored with its whole prefix
    stride: int = 2048
    questions: int = 16  # spec §7
    max_new_tokens: int = 16
    agreement_tokens: int = 144  # spec §7

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile in ("full", "cpu"):
            return cls()  # the spec's sizes fit the CPU budget
        return cls(
            schemes=("int8_row", "int4_tensor"),
            eval_tokens=48,
            context=32,
            stride=16,
            questions=2,
            max_new_tokens=6,
            agreement_tokens=8,
        )


def score(answer: str, accepted: tuple[str, ...]) -> bool:
    text = answer.lower()
    return any(re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text) for a in accepted)


def _default_penalty(model) -> tuple[float, str]:
    gc = getattr(model, "generation_config", None)
    p = getattr(gc, "repetition_penalty", None) if gc is not None else None
    if p is None:
        return 1.0, "none in the model's generation config: 1.0"
    return float(p), "from the model's generation config"


class _Variants:
    """Quantize the run's model in place, one scheme at a time, restoring the originals."""

    def __init__(self, model) -> None:
        self.model = model
        self.saved = {name: lin.weight.detach().clone() for name, lin in q.projection_layers(model)}

    @torch.no_grad()
    def restore(self) -> None:
        for name, lin in q.projection_layers(self.model):
            lin.weight.copy_(self.saved[name])


def run(cfg: Config, ctx: Context) -> Result:
    model, tok = ctx.model.model, ctx.model.tokenizer
    all_ids = book_token_ids(tok)
    text_ids = torch.tensor(all_ids[cfg.text_offset : cfg.text_offset + cfg.eval_tokens + 1], device=ctx.device)
    default_p, default_src = _default_penalty(model)
    penalties = list(dict.fromkeys([default_p, 1.0, SERVING_PENALTY]))
    questions = QUESTIONS[: cfg.questions]
    prompts = [
        tok.apply_chat_template(
            [{"role": "user", "content": f"{INSTRUCTION} {qq}"}], add_generation_prompt=True, return_tensors="pt"
        )["input_ids"][0].to(ctx.device)
        for qq, _ in questions
    ]
    agree_prompt = tok.apply_chat_template(
        [{"role": "user", "content": AGREEMENT_PROMPT}], add_generation_prompt=True, return_tensors="pt"
    )["input_ids"].to(ctx.device)
    ctx.log(f"  reference: greedy continuation of {cfg.agreement_tokens} tokens")
    reference = reference_continuation(model, agree_prompt, cfg.agreement_tokens)

    variants = _Variants(model)
    layers = q.projection_layers(model)
    n_proj = sum(lin.weight.numel() for _, lin in layers)
    rows, answer_rows, seconds = [], [], {}
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
            ppl = perplexity(model, text_ids, context=cfg.context, stride=cfg.stride)
            row = {"variant": variant, "label": label, "bits_per_weight": bits, "perplexity": ppl.value}
            for p in penalties:
                answers = greedy_answers(
                    model,
                    prompts,
                    max_new_tokens=cfg.max_new_tokens,
                    repetition_penalty=p,
                    eos_token_id=tok.eos_token_id,
                    pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else 0,
                )
                correct = 0
                for (question, accepted), ids in zip(questions, answers, strict=True):
                    text = tok.decode(ids, skip_special_tokens=True).strip()
                    ok = score(text, accepted)
                    correct += ok
                    answer_rows.append(
                        {
                            "variant": variant,
                            "repetition_penalty": p,
                            "question": question,
                            "expected": " / ".join(accepted),
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
    quality = Table(
        name="quality",
        title="Quality of the same model with its projection matrices quantized, per scheme",
        columns=(
            Column(name="variant", label="key"),
            Column(name="label", label="weights"),
            Column(name="bits_per_weight", unit="bits", kind="numeric", label="bits per weight"),
            Column(name="perplexity", kind="numeric", label="perplexity"),
            Column(name="battery_greedy", unit="correct", label=f"battery of {n}, greedy"),
            Column(name="battery_greedy_low", unit="fraction", kind="numeric", label="95% CI from"),
            Column(name="battery_greedy_high", unit="fraction", kind="numeric", label="to"),
            Column(name="battery_penalty", unit="correct", label=f"battery, penalty {SERVING_PENALTY:g}"),
            Column(name="battery_penalty_low", unit="fraction", kind="numeric", label="95% CI from"),
            Column(name="battery_penalty_high", unit="fraction", kind="numeric", label="to"),
            Column(name="agreement_agreed", unit="positions", kind="numeric", label="agreeing positions"),
            Column(name="agreement_positions", unit="positions", label="of"),
            Column(name="agreement", unit="fraction", kind="numeric", label="agreement"),
            Column(name="first_disagreement", kind="numeric", label="first disagreement"),
            Column(name="perplexity_ratio", unit="x", kind="numeric", label="perplexity vs reference"),
            Column(name="seconds", unit="s", kind="timing", label="time"),
        ),
        rows=[{k: r[k] for k in _ORDER} for r in rows],
    )
    battery = Table(
        name="battery",
        title="Every answer of the battery",
        columns=(
            Column(name="variant", label="weights"),
            Column(name="repetition_penalty", kind="numeric", label="repetition penalty"),
            Column(name="question", label="question"),
            Column(name="expected", label="accepted"),
            Column(name="answer", label="answer", kind="numeric"),
            Column(name="correct", label="scored right"),
        ),
        rows=answer_rows,
    )
    protocol_rows = [
        ("text", "Alice's Adventures in Wonderland (Lewis Carroll, 1865), measure/data/alice29.txt"),
        (
            "tokens scored",
            f"{text_ids.numel() - 1:,} (book tokens {cfg.text_offset:,} to {cfg.text_offset + text_ids.numel() - 1:,})",
        ),
        ("context window", f"{cfg.context:,} tokens"),
        ("stride", f"{cfg.stride:,} tokens ({ppl.windows} forward pass{'es' if ppl.windows > 1 else ''})"),
        ("dtype", str(ctx.dtype).removeprefix("torch.")),
        ("quantized", f"the {len(layers)} projection matrices; embeddings, output head and norms as loaded"),
        (
            "battery",
            f"{n} questions, chat template, '{INSTRUCTION}' before each, at most {cfg.max_new_tokens} new tokens",
        ),
        (
            "decoding",
            "greedy (argmax) by hand, batched with left padding; CTRL repetition penalty over prompt and answer",
        ),
        ("scoring", "an accepted answer appears as a whole word anywhere in the answer, case-insensitive"),
        ("default repetition penalty", f"{default_p:g} ({default_src})"),
        (
            "agreement",
            f"{cfg.agreement_tokens} greedy reference tokens after '{AGREEMENT_PROMPT}'; "
            "argmax given identical prefixes",
        ),
    ]
    protocol = Table(
        name="protocol",
        title="The evaluation protocol",
        columns=(Column(name="item", label="item"), Column(name="setting", label="setting")),
        rows=[{"item": a, "setting": b} for a, b in protocol_rows],
    )
    by = {r["variant"]: r for r in rows}
    values = [
        Value(name="eval_tokens", value=text_ids.numel() - 1, unit="tokens"),
        Value(name="context", value=cfg.context, unit="tokens"),
        Value(name="stride", value=cfg.stride, unit="tokens"),
        Value(name="questions", value=n, unit="questions"),
        Value(name="agreement_tokens", value=cfg.agreement_tokens, unit="tokens"),
        Value(name="default_repetition_penalty", value=default_p, kind="numeric"),
        Value(name="default_penalty_source", value=default_src),
        Value(name="serving_penalty", value=SERVING_PENALTY, kind="numeric"),
        Value(name="agreement_prompt", value=AGREEMENT_PROMPT),
        Value(name="reference_text", value=tok.decode(reference[0], skip_special_tokens=True), kind="numeric"),
        Value(name="reference_perplexity", value=ref, kind="numeric"),
    ]
    for v, r in by.items():
        values.append(Value(name=f"ppl_{v}", value=r["perplexity"], kind="numeric"))
        values.append(Value(name=f"agreement_{v}", value=r["agreement"], unit="fraction", kind="numeric"))
    return Result(tables=[quality, battery, protocol], values=values)


_ORDER = (
    "variant",
    "label",
    "bits_per_weight",
    "perplexity",
    "battery_greedy",
    "battery_greedy_low",
    "battery_greedy_high",
    "battery_penalty",
    "battery_penalty_low",
    "battery_penalty_high",
    "agreement_agreed",
    "agreement_positions",
    "agreement",
    "first_disagreement",
    "perplexity_ratio",
    "seconds",
)
