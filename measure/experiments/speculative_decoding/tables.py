"""What §8 writes (``site_data/speculative_decoding/``): its tables and values, declared once."""

from sitedata.intervals import interval_values
from sitedata.policies import EXACT_ON_MACHINE, NUMERIC_ANYWHERE, NUMERIC_ON_MACHINE, TIMING
from sitedata.schema import Column, Table, Value, derived_columns, interval_columns

FORMULA_GAMMAS = (1, 2, 4, 8)  # spec §8; the columns of the formula tables

# What a draft agrees on, and all that follows from it, reproduces with the draft's
# kernels: fake-quantized drafts compute in the target's dtype (same device type and
# dtype), the dynamic int8 draft in CPU int8 kernels that round differently from one CPU
# model to another (same machine). A column holds rows of both kinds: EXACT_ON_MACHINE,
# and NUMERIC_ON_MACHINE for its floats.

_DRAFT = Column("draft")
_LABEL = Column("label", label="draft", words=True)
_ALPHA = Column("alpha", label="α", policy=NUMERIC_ON_MACHINE)


def _proportion_bounds(name: str, what: str) -> tuple[Column, Column]:
    """A proportion's 95 % interval (Wilson score), from its counts."""
    return (
        Column(f"{name}_low", label=f"{what}: 95 % interval, low", policy=NUMERIC_ON_MACHINE),
        Column(f"{name}_high", label=f"{what}: 95 % interval, high", policy=NUMERIC_ON_MACHINE),
    )


_GAMMA = Column("gamma", label="γ")
_SOURCE = Column("alpha_source", label="α from", words=True)

# Every timing is the median of an interleaved sweep's samples with its 95 % interval and
# its sample count beside it (interval_columns); a ratio of two points of the sweep, the
# median of their ratios round by round with its 95 % interval (measure/lab/medians.py),
# no count of its own.


TABLES = (
    Table(
        "acceptance",
        "Acceptance α of each quantized draft: agreement with the target's greedy tokens",
        (
            _DRAFT,
            _LABEL,
            Column("kernels", label="computes in", words=True),
            Column("agreed", policy=EXACT_ON_MACHINE),
            Column("positions"),
            _ALPHA,
            *_proportion_bounds("alpha", "α"),
            Column("first_disagreement", label="first disagreement", policy=EXACT_ON_MACHINE),
        ),
        description=(
            "The acceptance α of each quantized draft: the agreement of its argmax with the target's greedy "
            "continuation under identical prefixes, with the 95 % interval of a proportion of that many "
            "positions (Wilson score)."
        ),
    ),
    Table(
        "expected_tokens",
        "Tokens per verification, by the formula",
        (
            _SOURCE,
            _ALPHA,
            *(Column(f"tokens_g{g}", "tokens", f"γ = {g}", policy=NUMERIC_ON_MACHINE) for g in FORMULA_GAMMAS),
        ),
        description=("The formula's tokens per verification over the measured α and a few assumed ones."),
    ),
    Table(
        "speedup",
        "Net speedup, tokens per verification / (γ·c + 1); below 1 is a loss",
        (
            _SOURCE,
            _ALPHA,
            Column("draft_cost", label="draft cost c"),  # a parameter, copied as given
            *(Column(f"speedup_g{g}", "x", f"γ = {g}", policy=NUMERIC_ON_MACHINE) for g in FORMULA_GAMMAS),
            Column("best_gamma", label="best γ", policy=EXACT_ON_MACHINE),
            Column("losses", label="losses (speedup < 1)", policy=EXACT_ON_MACHINE, words=True),
        ),
        description=(
            "The formula's net speedup, tokens per verification / (γ·c + 1), over the α and the draft costs "
            "c; the losses (speedup below 1) listed."
        ),
    ),
    Table(
        "draft_cost",
        "The draft's cost c: one decode step, relative to the target's",
        (
            _DRAFT,
            _LABEL,
            *interval_columns("target_step_ms", "ms", "target step"),
            *interval_columns("draft_step_ms", "ms", "draft step"),
            *derived_columns("draft_cost", "", "c"),
        ),
        description=(
            "The measured time of one decode step of each draft, relative to the target's: the draft cost c, "
            "paired round by round: the median of the per-round ratios, with its 95 % interval. Every pass "
            "of this table and the next is a point of one interleaved sweep."
        ),
    ),
    Table(
        "verify_cost",
        "Verifying γ + 1 tokens in one target pass, relative to one decode step",
        (
            _GAMMA,
            Column("tokens_verified", "tokens", "tokens in the pass"),
            *interval_columns("verify_ms", "ms", "one pass"),
            *derived_columns("relative_to_one_step", "x", "vs one decode step"),
            *derived_columns("vs_fewer", "x", "vs the pass before it"),
        ),
        description=(
            "The time of verifying γ + 1 tokens in one target pass, relative to one decode step and to the "
            "pass over the fewer tokens of the row before, each paired round by round: the median of the "
            "per-round ratios, with its 95 % interval."
        ),
    ),
    Table(
        "real_run",
        "Speculative decoding run for real, next to the formula",
        (
            _DRAFT,
            _LABEL,
            _GAMMA,
            Column("new_tokens", "tokens", "tokens"),
            Column("identical_to_greedy", label="same tokens as greedy", policy=EXACT_ON_MACHINE),
            Column("first_mismatch", label="first mismatch", policy=EXACT_ON_MACHINE),
            Column("rounds", policy=EXACT_ON_MACHINE),
            _ALPHA,
            Column("predicted_tokens_per_round", "tokens", "tokens/round, formula", policy=NUMERIC_ON_MACHINE),
            Column("tokens_per_round", "tokens", "tokens/round, run", policy=NUMERIC_ON_MACHINE),
            Column("draft_cost", label="c, measured", policy=TIMING),
            Column("predicted_speedup", "x", "speedup, formula", policy=TIMING),
            Column("predicted_with_verify_cost", "x", "formula with run's tokens/round and verify cost", policy=TIMING),
            *derived_columns("predicted_ms", "ms", "time predicted from the passes"),
            *derived_columns("predicted_run_speedup", "x", "speedup predicted from the passes"),
            Column("timed", label="timed for real", policy=TIMING),
            *interval_columns("greedy_ms", "ms", "plain greedy"),
            *interval_columns("speculative_ms", "ms", "speculative"),
            *derived_columns("measured_speedup", "x", "speedup, measured"),
            *derived_columns("measured_over_predicted", "x", "measured / predicted time"),
        ),
        description=(
            "Greedy speculative decoding actually run, per draft and γ: its output checked token for token "
            "against plain greedy decoding, tokens per round, the formula's prediction, and its wall time "
            "predicted from the passes the cost tables timed (the prefills, γ draft steps and one "
            "verification per round the run made; the range from the ends of every pass's interval). Plain "
            "greedy and the runs the prediction puts first are timed for real, points of one interleaved "
            "sweep: the measured speedup is plain greedy's time over the run's, paired round by round (the "
            "median of the per-round ratios, with its 95 % interval), beside the measured time over the "
            "predicted one. The tokens come from each run's first call."
        ),
    ),
    Table(
        "acceptance_by_position",
        "Acceptance of the i-th drafted token of a round, given the ones before it were kept",
        (
            _DRAFT,
            _LABEL,
            _GAMMA,
            Column("position", label="position i"),
            Column("proposed", label="rounds reaching i", policy=EXACT_ON_MACHINE),
            Column("accepted", label="kept", policy=EXACT_ON_MACHINE),
            Column("rate", policy=NUMERIC_ON_MACHINE),
            *_proportion_bounds("rate", "rate"),
            Column("alpha", label="α (agreement)", policy=NUMERIC_ON_MACHINE),
        ),
        description=(
            "How often the i-th drafted token of a round was kept, given that the ones before it were, with "
            "the 95 % interval of that proportion (Wilson score)."
        ),
    ),
    Table(
        "acceptance_by_temperature",
        "Chance that speculative sampling keeps a drafted token, mean over the text",
        (
            _DRAFT,
            _LABEL,
            Column("temperature", label="T", policy=NUMERIC_ANYWHERE),
            Column("positions"),
            Column("expected_acceptance", label="acceptance", policy=NUMERIC_ON_MACHINE),
            Column("lowest", label="lowest at one position", policy=NUMERIC_ON_MACHINE),
        ),
        description=(
            "Speculative sampling keeps a drafted token with probability Σ min(p_T, q_T): its mean over the "
            "positions of the agreement text, per draft and temperature T (T = 0 is greedy, where it is α)."
        ),
    ),
    Table(
        "exactness",
        "Tokens emitted by the sampling rule against the target's distribution: chi-square goodness of fit",
        (
            Column("position"),
            Column("sampler", label="tokens from", words=True),
            Column("expected_acceptance", label="Σ min(p, q) here", policy=NUMERIC_ON_MACHINE),
            Column("draws"),
            Column("cells", policy=EXACT_ON_MACHINE),
            Column("dof", label="degrees of freedom", policy=EXACT_ON_MACHINE),
            Column("chi_square", label="χ²", policy=NUMERIC_ON_MACHINE),
            Column("p_value", label="p-value", policy=NUMERIC_ON_MACHINE),
            Column("rejected", policy=EXACT_ON_MACHINE),
        ),
        description=(
            "The sampling rule run many times at the positions where one draft differs most from the target, "
            "its emitted tokens tested against the target's distribution by a chi-square goodness-of-fit "
            "test; the draft's own samples beside them."
        ),
    ),
    Table(
        "sampled_run",
        "Speculative sampling run for real, next to the formula",
        (
            _DRAFT,
            _LABEL,
            Column("temperature", label="T", policy=NUMERIC_ANYWHERE),
            _GAMMA,
            Column("new_tokens", "tokens", "tokens"),
            Column("rounds", policy=EXACT_ON_MACHINE),
            Column("judged", label="drafts judged", policy=EXACT_ON_MACHINE),
            Column("accepted", label="kept", policy=EXACT_ON_MACHINE),
            Column("acceptance", label="acceptance, run", policy=NUMERIC_ON_MACHINE),
            *_proportion_bounds("acceptance", "acceptance"),
            Column("expected_acceptance", label="acceptance, Σ min over the text", policy=NUMERIC_ON_MACHINE),
            Column("predicted_tokens_per_round", "tokens", "tokens/round, formula", policy=NUMERIC_ON_MACHINE),
            Column("tokens_per_round", "tokens", "tokens/round, run", policy=NUMERIC_ON_MACHINE),
            Column("seconds", "s", "time", policy=TIMING),
        ),
        description=(
            "Speculative sampling actually run at one temperature, per draft: the share of judged drafts kept"
            " and the tokens per round, next to the formula."
        ),
    ),
)
VALUES = (
    Value("prompt"),
    Value("agreement_tokens", "tokens"),
    Value("new_tokens", "tokens"),
    Value(
        "all_identical",
        description="every speculative run produced exactly the target's greedy tokens",
        policy=EXACT_ON_MACHINE,
    ),
    Value("runs"),
    # Picked by the measured speedup: may change with timing noise even here, so
    # compared only where timings are.
    Value("best_draft", policy=TIMING, words=True),
    Value("best_gamma", policy=TIMING),
    *interval_values("best_measured_speedup", "x", bounds=("", "")),
    Value("best_predicted_speedup", "x", policy=TIMING),  # uses the measured draft cost c
    Value("best_predicted_run_speedup", "x", description="its speedup predicted from the passes", policy=TIMING),
    Value("timed_runs", "runs", description="runs timed for real beside plain greedy", policy=TIMING),
    Value("predicted_first_draft", description="the draft of the run predicted fastest", policy=TIMING, words=True),
    Value("predicted_first_gamma", description="its γ", policy=TIMING),
    *(
        Value(
            f"predicted_first_speedup{end}",
            "x",
            description=f"its speedup predicted from the passes{what}",
            policy=TIMING,
        )  # fmt: skip
        for end, what in (("", ""), ("_low", ", the range's low end"), ("_high", ", the range's high end"))
    ),
    Value("runner_up_draft", description="the second fastest timed run's draft", policy=TIMING, words=True),
    Value("runner_up_gamma", description="its γ", policy=TIMING),
    *(
        Value(name, "x", description=f"its time over the fastest's, paired round by round{end}", policy=TIMING)
        for name, end in (
            ("runner_up_over_best", ""),
            ("runner_up_over_best_low", ", 95 % interval low"),
            ("runner_up_over_best_high", ", 95 % interval high"),
        )
    ),
    Value("significance", policy=NUMERIC_ANYWHERE),
    Value("exactness_draft", words=True),
    Value("exactness_draws"),
    Value("exactness_temperature", policy=NUMERIC_ANYWHERE),
    Value("exact_rule_passes", description="the rule's samples passed every chi-square test", policy=EXACT_ON_MACHINE),
    Value(
        "draft_alone_rejected",
        description="the draft's own samples failed every chi-square test",
        policy=EXACT_ON_MACHINE,
    ),
    Value("sampled_temperature", policy=NUMERIC_ANYWHERE),
    Value("sampled_gamma"),
    Value("sampled_tokens", "tokens"),
    Value("greedy_samples_ms", "ms", policy=TIMING),
    Value("target_step_ms", "ms", policy=TIMING),
)
