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

from measure.lab.context import Context
from sitedata.policies import EXACT_ON_DEVICE, NUMERIC
from sitedata.schema import Column, Result, Table, Value

TITLE = "Distillation: what soft labels carry"
NEEDS_TRAINED = True  # the distribution of random weights says nothing about language
SENTENCE = "She poured the milk into the"  # spec §9
TOP_K = 5  # spec §9: top-5
SIGNIFICANT = 0.01  # a token "carries something" above 1% probability

# Everything read from the logits is the model's float computation: it reproduces on the
# same device type and dtype (fp32 on any CPU; NUMERIC), and so do the token ids and
# texts that rank top (EXACT_ON_DEVICE).
_ORDINAL = {1: "1st", 2: "2nd", 3: "3rd"}

_TEMPERATURE = Column("temperature", label="T")
_TOKEN_ID = Column("token_id", label="token id", policy=EXACT_ON_DEVICE)

TABLES = (
    Table(
        "top_tokens",
        "The most probable next tokens after “{sentence}” (T = 1)",
        (
            Column("rank"),
            _TOKEN_ID,
            Column("token", policy=EXACT_ON_DEVICE),
            Column("logit", policy=NUMERIC),
            Column("probability", policy=NUMERIC),
        ),
        description=(
            "The most probable next tokens after the sentence at temperature 1, with their ids, logits and "
            "probabilities."
        ),
    ),
    Table(
        "temperatures",
        "The same logits divided by a temperature T",
        (
            _TEMPERATURE,
            *(Column(f"p{r}", label=f"p({_ORDINAL.get(r, f'{r}th')})", policy=NUMERIC) for r in range(1, TOP_K + 1)),
            Column("top_k_mass", label=f"top-{TOP_K} mass", policy=NUMERIC),
            Column("entropy_bits", "bits", "entropy", policy=NUMERIC),
            Column("perplexity", "tokens", "2^entropy", policy=NUMERIC),
            Column("tokens_above_threshold", "tokens", f"tokens above {SIGNIFICANT:.0%}", policy=EXACT_ON_DEVICE),
            Column("top_to_third", "x", "top / third", policy=NUMERIC),
        ),
        description=(
            "The same logits divided by each temperature T: the top-k probabilities, the entropy of the whole"
            " distribution in bits, the mass in the top k, the top-to-third probability ratio, and the "
            "perplexity 2^H."
        ),
    ),
    Table(
        "distribution",
        "Probabilities of the top tokens at each temperature",
        (
            _TEMPERATURE,
            Column("rank", label="rank at T = 1"),
            _TOKEN_ID,
            Column("token", policy=EXACT_ON_DEVICE),
            Column("probability", policy=NUMERIC),
        ),
        description=(
            "The probabilities of the top tokens (ranked at T = 1) at every temperature, long format, for the figure."
        ),
    ),
)
VALUES = (
    Value("sentence"),
    Value("prompt_tokens", "tokens"),
    Value("vocabulary", "tokens"),
    Value("top_token", policy=EXACT_ON_DEVICE),
    Value("top_probability", policy=NUMERIC),
    Value(
        "entropy_bits_t1", "bits", description="entropy of the full next-token distribution at T = 1", policy=NUMERIC
    ),
    Value(
        "tokens_above_threshold_t1",
        "tokens",
        description=f"tokens with probability above {SIGNIFICANT:.0%} at T = 1",
        policy=EXACT_ON_DEVICE,
    ),
    Value("threshold", "fraction"),
    Value(
        "ratio_power_law_error", description="largest |ratio(T) - ratio(1)^(1/T)| over the temperatures", policy=NUMERIC
    ),
)


@dataclass(frozen=True, kw_only=True)
class Config:
    sentence: str = SENTENCE
    top_k: int = TOP_K
    temperatures: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)  # spec §9
    figure_k: int = 10  # tokens drawn in the figure
    significant: float = SIGNIFICANT

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

    at = {r["temperature"]: r for r in temp_rows}
    one = at.get(1.0, temp_rows[0])
    # p_a / p_c = exp((z_a - z_c) / T): the ratio at T is the ratio at 1 to the power 1/T.
    power_law_error = max(abs(r["top_to_third"] - one["top_to_third"] ** (1.0 / r["temperature"])) for r in temp_rows)
    values = {
        "sentence": cfg.sentence,
        "prompt_tokens": int(ids.shape[1]),
        "vocabulary": int(logits.numel()),
        "top_token": top_rows[0]["token"],
        "top_probability": top_rows[0]["probability"],
        "entropy_bits_t1": one["entropy_bits"],
        "tokens_above_threshold_t1": one["tokens_above_threshold"],
        "threshold": cfg.significant,
        "ratio_power_law_error": power_law_error,
    }
    tables = {"top_tokens": top_rows, "temperatures": temp_rows, "distribution": dist_rows}
    return Result(tables=tables, values=values)
