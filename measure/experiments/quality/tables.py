"""What §7 writes (``site_data/quality/``): its tables and values, declared once."""

from measure.experiments.quality.questions import QUESTIONS, SERVING_PENALTY
from measure.lab import quantizers as q
from sitedata.policies import EXACT_ON_DEVICE, NUMERIC, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Column, Table, Value

# Perplexity, answers and agreement come from the model's float computation: they
# reproduce on the same device type and dtype (fp32 on any CPU): NUMERIC. Counts of right
# answers and of agreeing positions are exact there (EXACT_ON_DEVICE); the Wilson
# intervals are floats of those counts (NUMERIC).
VARIANTS = ("reference", *q.SCHEMES)  # every variant a full run measures, each with its values

TABLES = (
    Table(
        "quality",
        "Quality of the same model with its projection matrices quantized, per scheme",
        (
            Column("variant", label="key"),
            Column("label", label="weights", words=True),
            # The reference's is its dtype's width (fp16 on a GPU, fp32 on a CPU).
            Column("bits_per_weight", "bits", "bits per weight", policy=NUMERIC),
            Column("perplexity", policy=NUMERIC),
            # The label is static: the run's battery (cfg.questions) is all of QUESTIONS except in smoke runs.
            Column("battery_greedy", "correct", f"battery of {len(QUESTIONS)}, greedy", policy=EXACT_ON_DEVICE),
            Column("battery_greedy_low", "fraction", "95% CI from", policy=NUMERIC),
            Column("battery_greedy_high", "fraction", "to", policy=NUMERIC),
            Column("battery_penalty", "correct", f"battery, penalty {SERVING_PENALTY:g}", policy=EXACT_ON_DEVICE),
            Column("battery_penalty_low", "fraction", "95% CI from", policy=NUMERIC),
            Column("battery_penalty_high", "fraction", "to", policy=NUMERIC),
            Column("agreement_agreed", "positions", "agreeing positions", policy=EXACT_ON_DEVICE),
            Column("agreement_positions", "positions", "of"),
            Column("agreement", "fraction", policy=NUMERIC),
            Column("first_disagreement", label="first disagreement", policy=EXACT_ON_DEVICE),
            Column("perplexity_ratio", "x", "perplexity vs reference", policy=NUMERIC),
            Column("seconds", "s", "time", policy=TIMING),
        ),
        description=(
            "The reference and every quantization scheme: perplexity on a fixed stretch of the book; a "
            "battery of short factual questions answered greedily and scored, with Wilson 95% intervals, "
            "without and with a serving repetition penalty; agreement with the reference's greedy "
            "continuation, position by position."
        ),
    ),
    Table(
        "battery",
        "Every answer of the battery",
        (
            Column("variant", label="weights"),
            Column("repetition_penalty", label="repetition penalty", policy=NUMERIC_ANYWHERE),
            Column("question"),
            Column("expected", label="accepted"),
            Column("answer", policy=EXACT_ON_DEVICE),
            Column("correct", label="scored right", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "Every answer of the battery, per variant and repetition penalty, and whether it was scored right."
        ),
    ),
    Table(
        "protocol",
        "The evaluation protocol",
        (Column("item", words=True), Column("setting")),
        description="The evaluation protocol: text, tokens, context, stride, dtype, decoding.",
    ),
)
VALUES = (
    Value("eval_tokens", "tokens"),
    Value("context", "tokens"),
    Value("stride", "tokens"),
    Value("questions", "questions"),
    Value("agreement_tokens", "tokens"),
    Value("default_repetition_penalty", policy=NUMERIC_ANYWHERE),
    Value("default_penalty_source", words=True),
    Value("serving_penalty", policy=NUMERIC_ANYWHERE),
    Value("agreement_prompt"),
    Value("reference_text", policy=EXACT_ON_DEVICE),
    Value("reference_perplexity", policy=NUMERIC),
    *(
        v
        for name in VARIANTS
        for v in (Value(f"ppl_{name}", policy=NUMERIC), Value(f"agreement_{name}", "fraction", policy=NUMERIC))
    ),
)
