"""§9 Distillation: what soft labels carry.

Measures, on the run's (trained) model, the next-token distribution after one fixed
sentence, read from a single forward pass over the plain text (no chat template):

* ``top_tokens``: the most probable next tokens at temperature 1, with their ids.
* ``temperatures``: the logits divided by T for each T: the top-k probabilities, the
  entropy of the whole distribution (every vocabulary entry, in bits), the mass in the
  top k, the top-to-third probability ratio, and the perplexity 2^H, the number of
  equally likely tokens that would carry the same uncertainty.
* ``distribution``: the probabilities of the top tokens (ranked at T = 1) at every T,
  long format, for the figure.

A hard label says "the next token is X" and nothing else; the soft label is the whole
distribution a student model is trained to match.

Writes ``site_data/distillation/``. Alone: ``python -m measure run --only distillation``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from measure.context import Context
from measure.schema import Column, Result, Table, Value

TITLE = "Distillation: what soft labels carry"
NEEDS_TRAINED = True  # the distribution of random weights says nothing about language
SENTENCE = "She poured the milk into the"  # spec §9


@dataclass(frozen=True, kw_only=True)
class Config:
    sentence: str = SENTENCE
    top_k: int = 5  # spec §9: top-5
    temperatures: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)  # spec §9
    figure_k: int = 10  # tokens drawn in the figure
    significant: float = 0.01  # a token "carries something" above 1% probability

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        # One forward pass over a few tokens: the same work in every profile.
        return cls()


def _token_text(tok, i: int) -> str:
    return tok.decode([i]) if tok is not None else f"<{i}>"


def _entropy_bits(p: torch.Tensor) -> float:
    nz = p[p > 0]
    return float(-(nz * nz.log2()).sum())


def run(cfg: Config, ctx: Context) -> Result:
    tok = ctx.model.tokenizer
    if tok is not None:
        ids = tok(cfg.sentence, return_tensors="pt", add_special_tokens=False)["input_ids"].to(ctx.device)
    else:
        ids = ctx.prompt_ids(7)
    with torch.inference_mode():
        logits = ctx.model.model(input_ids=ids, use_cache=False).logits[0, -1].to(torch.float64)
    ranked = torch.argsort(logits, descending=True)
    k = max(cfg.top_k, cfg.figure_k, 3)
    top_ids = [int(i) for i in ranked[:k]]

    p1 = torch.softmax(logits, dim=-1)
    top_rows = [
        {
            "rank": r + 1,
            "token_id": i,
            "token": _token_text(tok, i),
            "logit": float(logits[i]),
            "probability": float(p1[i]),
        }
        for r, i in enumerate(top_ids[: cfg.top_k])
    ]

    temp_rows, dist_rows = [], []
    for t in cfg.temperatures:
        p = torch.softmax(logits / t, dim=-1)
        row = {"temperature": t}
        for r in range(cfg.top_k):
            row[f"p{r + 1}"] = float(p[top_ids[r]])
        h = _entropy_bits(p)
        row |= {
            "top_k_mass": float(p[top_ids[: cfg.top_k]].sum()),
            "entropy_bits": h,
            "perplexity": 2.0**h,
            "tokens_above_threshold": int((p > cfg.significant).sum()),
            "top_to_third": float(p[top_ids[0]] / p[top_ids[2]]),
        }
        temp_rows.append(row)
        for r, i in enumerate(top_ids[: cfg.figure_k]):
            dist_rows.append(
                {
                    "temperature": t,
                    "rank": r + 1,
                    "token_id": i,
                    "token": _token_text(tok, i),
                    "probability": float(p[i]),
                }
            )

    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}
    tables = [
        Table(
            name="top_tokens",
            title=f"The most probable next tokens after “{cfg.sentence}” (T = 1)",
            columns=(
                Column(name="rank"),
                Column(name="token_id", label="token id"),
                Column(name="token", label="token", kind="numeric"),
                Column(name="logit", kind="numeric", label="logit"),
                Column(name="probability", kind="numeric", label="probability"),
            ),
            rows=top_rows,
        ),
        Table(
            name="temperatures",
            title="The same logits divided by a temperature T",
            columns=(
                Column(name="temperature", label="T"),
                *(
                    Column(name=f"p{r + 1}", kind="numeric", label=f"p({ordinal.get(r + 1, f'{r + 1}th')})")
                    for r in range(cfg.top_k)
                ),
                Column(name="top_k_mass", kind="numeric", label=f"top-{cfg.top_k} mass"),
                Column(name="entropy_bits", unit="bits", kind="numeric", label="entropy"),
                Column(name="perplexity", unit="tokens", kind="numeric", label="2^entropy"),
                Column(
                    name="tokens_above_threshold",
                    unit="tokens",
                    kind="numeric",
                    label=f"tokens above {cfg.significant:.0%}",
                ),
                Column(name="top_to_third", unit="x", kind="numeric", label="top / third"),
            ),
            rows=temp_rows,
        ),
        Table(
            name="distribution",
            title="Probabilities of the top tokens at each temperature",
            columns=(
                Column(name="temperature", label="T"),
                Column(name="rank", label="rank at T = 1"),
                Column(name="token_id", label="token id"),
                Column(name="token", kind="numeric"),
                Column(name="probability", kind="numeric"),
            ),
            rows=dist_rows,
        ),
    ]
    at = {r["temperature"]: r for r in temp_rows}
    one = at.get(1.0, temp_rows[0])
    # p_a / p_c = exp((z_a - z_c) / T): the ratio at T is the ratio at 1 to the power 1/T.
    power_law_error = max(abs(r["top_to_third"] - one["top_to_third"] ** (1.0 / r["temperature"])) for r in temp_rows)
    values = [
        Value(name="sentence", value=cfg.sentence),
        Value(name="prompt_tokens", value=int(ids.shape[1]), unit="tokens"),
        Value(name="vocabulary", value=int(logits.numel()), unit="tokens"),
        Value(name="top_token", value=top_rows[0]["token"], kind="numeric"),
        Value(name="top_probability", value=top_rows[0]["probability"], kind="numeric"),
        Value(
            name="entropy_bits_t1",
            value=one["entropy_bits"],
            unit="bits",
            kind="numeric",
            description="entropy of the full next-token distribution at T = 1",
        ),
        Value(
            name="tokens_above_threshold_t1",
            value=one["tokens_above_threshold"],
            unit="tokens",
            kind="numeric",
            description=f"tokens with probability above {cfg.significant:.0%} at T = 1",
        ),
        Value(name="threshold", value=cfg.significant, unit="fraction"),
        Value(
            name="ratio_power_law_error",
            value=power_law_error,
            kind="numeric",
            description="largest |ratio(T) - ratio(1)^(1/T)| over the temperatures",
        ),
    ]
    return Result(tables=tables, values=values)
