"""What §7 writes (``site_data/quality/``): its tables and values, declared once."""

from measure.experiments.quality.questions import QUESTIONS, SERVING_PENALTY
from measure.lab import quantizers as q
from sitedata.schema import Column, Table, Value

# Perplexity, answers and agreement come from the model's float computation: they
# reproduce on the same device type and dtype (fp32 on any CPU). Counts of right answers
# and of agreeing positions are exact there; the Wilson intervals are floats of those counts.
_MODEL = dict(compare="exact", scope="device")
_FLOAT = dict(compare="numeric")
_PARAM = dict(compare="numeric", scope="any")
_FRACTION = dict(unit="fraction", compare="numeric")
VARIANTS = ("reference", *q.SCHEMES)  # every variant a full run measures, each with its values

TABLES = (
    Table(
        "quality",
        "Quality of the same model with its projection matrices quantized, per scheme",
        (
            Column("variant", label="key"),
            Column("label", label="weights"),
            # The reference's is its dtype's width (fp16 on a GPU, fp32 on a CPU).
            Column("bits_per_weight", "bits", "bits per weight", **_FLOAT),
            Column("perplexity", label="perplexity", **_FLOAT),
            # The label is static: the run's battery (cfg.questions) is all of QUESTIONS except in smoke runs.
            Column("battery_greedy", "correct", f"battery of {len(QUESTIONS)}, greedy", **_MODEL),
            Column("battery_greedy_low", label="95% CI from", **_FRACTION),
            Column("battery_greedy_high", label="to", **_FRACTION),
            Column("battery_penalty", "correct", f"battery, penalty {SERVING_PENALTY:g}", **_MODEL),
            Column("battery_penalty_low", label="95% CI from", **_FRACTION),
            Column("battery_penalty_high", label="to", **_FRACTION),
            Column("agreement_agreed", "positions", "agreeing positions", **_MODEL),
            Column("agreement_positions", "positions", "of"),
            Column("agreement", "fraction", "agreement", **_FLOAT),
            Column("first_disagreement", label="first disagreement", **_MODEL),
            Column("perplexity_ratio", "x", "perplexity vs reference", **_FLOAT),
            Column("seconds", "s", "time", compare="timing"),
        ),
    ),
    Table(
        "battery",
        "Every answer of the battery",
        (
            Column("variant", label="weights"),
            Column("repetition_penalty", label="repetition penalty", **_PARAM),
            Column("question", label="question"),
            Column("expected", label="accepted"),
            Column("answer", label="answer", **_MODEL),
            Column("correct", label="scored right", **_MODEL),
        ),
    ),
    Table("protocol", "The evaluation protocol", (Column("item", label="item"), Column("setting", label="setting"))),
)
VALUES = (
    Value("eval_tokens", "tokens"),
    Value("context", "tokens"),
    Value("stride", "tokens"),
    Value("questions", "questions"),
    Value("agreement_tokens", "tokens"),
    Value("default_repetition_penalty", **_PARAM),
    Value("default_penalty_source"),
    Value("serving_penalty", **_PARAM),
    Value("agreement_prompt"),
    Value("reference_text", **_MODEL),
    Value("reference_perplexity", **_FLOAT),
    *(v for name in VARIANTS for v in (Value(f"ppl_{name}", **_FLOAT), Value(f"agreement_{name}", **_FRACTION))),
)
