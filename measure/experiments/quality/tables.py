"""What §7 writes (``site_data/quality/``): its tables and values, declared once."""

from measure.experiments.quality.questions import QUESTIONS, SERVING_PENALTY
from measure.lab import quantizers as q
from sitedata.policies import EXACT_ON_DEVICE, NUMERIC, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Column, Table, Value, interval_names

# Perplexity, answers and agreement come from the model's float computation: they
# reproduce on the same device type and dtype (fp32 on any CPU): NUMERIC. Counts of right
# answers and of agreeing positions are exact there (EXACT_ON_DEVICE); the Wilson
# intervals are floats of those counts (NUMERIC).
VARIANTS = ("reference", *q.SCHEMES)  # every variant a full run measures, each with its values


def _estimate(name: str, unit: str, label: str) -> tuple[Column, ...]:
    """An estimate and the two bounds of its 95% interval, all compared as NUMERIC."""
    low, high, _ = interval_names(name)
    return (
        Column(name, unit, label, policy=NUMERIC),
        Column(low, unit, "95% interval, low", policy=NUMERIC),
        Column(high, unit, "95% interval, high", policy=NUMERIC),
    )


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
        "divergence",
        "How far each scheme's next-token distribution moved from the reference's, with 95% intervals",
        (
            Column("variant", label="key"),
            Column("label", label="weights", words=True),
            # Floats of the model's computation and of a seeded bootstrap: they reproduce like
            # perplexity (NUMERIC), bounds included. Only a timing's interval is its noise
            # (sitedata.schema.Column); these bounds are named alike (interval_names).
            *_estimate("kl", "nats", "KL divergence from the reference"),
            Column("kl_samples", "blocks", "blocks resampled", policy=EXACT_ON_DEVICE),
            *_estimate("top1_agreement", "fraction", "top-1 agreement"),
            *_estimate("delta_perplexity", "", "Δ perplexity"),
        ),
        description=(
            "Every scheme against the reference on the same scored tokens of the book: the mean KL divergence "
            "of its next-token distribution from the reference's, the fraction of positions where both rank "
            "the same token first, and its perplexity minus the reference's; 95% intervals from a seeded "
            "bootstrap over blocks of consecutive positions (kl_samples: the blocks)."
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
        (Column("item", words=True), Column("setting", words=True)),
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
