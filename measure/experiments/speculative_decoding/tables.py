"""What §8 writes (``site_data/speculative_decoding/``): its tables and values, declared once."""

from sitedata.schema import Column, Table, Value

FORMULA_GAMMAS = (1, 2, 4, 8)  # spec §8; the columns of the formula tables

# What a draft agrees on, and all that follows from it, reproduces with the draft's
# kernels: fake-quantized drafts compute in the target's dtype (same device type and
# dtype), the dynamic int8 draft in CPU int8 kernels that round differently from one CPU
# model to another (same machine). A column holds rows of both kinds: machine.
_DRAFTED = dict(scope="machine")
_NUM_DRAFTED = dict(compare="numeric", **_DRAFTED)
_TIMING = dict(compare="timing")

_DRAFT = Column("draft")
_LABEL = Column("label", label="draft")
_ALPHA = Column("alpha", label="α", **_NUM_DRAFTED)
_GAMMA = Column("gamma", label="γ")
_SOURCE = Column("alpha_source", label="alpha from")

TABLES = (
    Table(
        "acceptance",
        "Acceptance α of each quantized draft: agreement with the target's greedy tokens",
        (
            _DRAFT,
            _LABEL,
            Column("kernels", label="computes in"),
            Column("agreed", label="agreed", **_DRAFTED),
            Column("positions", label="positions"),
            _ALPHA,
            Column("first_disagreement", label="first disagreement", **_DRAFTED),
        ),
    ),
    Table(
        "expected_tokens",
        "Tokens per verification, (1 − α^(γ+1)) / (1 − α)",
        (
            _SOURCE,
            _ALPHA,
            *(Column(f"tokens_g{g}", "tokens", f"γ = {g}", **_NUM_DRAFTED) for g in FORMULA_GAMMAS),
        ),
    ),
    Table(
        "speedup",
        "Net speedup, tokens per verification / (γ·c + 1); below 1 is a loss",
        (
            _SOURCE,
            _ALPHA,
            Column("draft_cost", label="draft cost c"),  # a parameter, copied as given
            *(Column(f"speedup_g{g}", "x", f"γ = {g}", **_NUM_DRAFTED) for g in FORMULA_GAMMAS),
            Column("best_gamma", label="best γ", **_DRAFTED),
            Column("losses", label="losses (speedup < 1)", **_DRAFTED),
        ),
    ),
    Table(
        "draft_cost",
        "The draft's cost c: one decode step, relative to the target's",
        (
            _DRAFT,
            _LABEL,
            Column("target_step_ms", "ms", "target step", **_TIMING),
            Column("draft_step_ms", "ms", "draft step", **_TIMING),
            Column("draft_cost", label="c", **_TIMING),
        ),
    ),
    Table(
        "verify_cost",
        "Verifying γ + 1 tokens in one target pass, relative to one decode step",
        (
            _GAMMA,
            Column("tokens_verified", "tokens", "tokens in the pass"),
            Column("verify_ms", "ms", "one pass", **_TIMING),
            Column("relative_to_one_step", "x", "vs one decode step", **_TIMING),
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
            Column("identical_to_greedy", label="same tokens as greedy", **_DRAFTED),
            Column("first_mismatch", label="first mismatch", **_DRAFTED),
            Column("rounds", label="rounds", **_DRAFTED),
            _ALPHA,
            Column("predicted_tokens_per_round", "tokens", "tokens/round, formula", **_NUM_DRAFTED),
            Column("tokens_per_round", "tokens", "tokens/round, run", **_NUM_DRAFTED),
            Column("draft_cost", label="c, measured", **_TIMING),
            Column("predicted_speedup", "x", "speedup, formula", **_TIMING),
            Column("predicted_with_verify_cost", "x", "formula with run's tokens/round and verify cost", **_TIMING),
            Column("greedy_ms", "ms", "plain greedy", **_TIMING),
            Column("speculative_ms", "ms", "speculative", **_TIMING),
            Column("measured_speedup", "x", "speedup, measured", **_TIMING),
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
            Column("proposed", label="rounds reaching i", **_DRAFTED),
            Column("accepted", label="kept", **_DRAFTED),
            Column("rate", label="rate", **_NUM_DRAFTED),
            Column("alpha", label="α (agreement)", **_NUM_DRAFTED),
        ),
    ),
    Table(
        "acceptance_by_temperature",
        "Chance that speculative sampling keeps a drafted token, Σ min(p_T, q_T), mean over the text",
        (
            _DRAFT,
            _LABEL,
            Column("temperature", label="T", compare="numeric", scope="any"),
            Column("positions", label="positions"),
            Column("expected_acceptance", label="acceptance", **_NUM_DRAFTED),
            Column("lowest", label="lowest at one position", **_NUM_DRAFTED),
        ),
    ),
    Table(
        "exactness",
        "Tokens emitted by the sampling rule against the target's distribution: chi-square goodness of fit",
        (
            Column("position", label="position"),
            Column("sampler", label="tokens from"),
            Column("expected_acceptance", label="Σ min(p, q) here", **_NUM_DRAFTED),
            Column("draws", label="draws"),
            Column("cells", label="cells", **_DRAFTED),
            Column("dof", label="degrees of freedom", **_DRAFTED),
            Column("chi_square", label="χ²", **_NUM_DRAFTED),
            Column("p_value", label="p-value", **_NUM_DRAFTED),
            Column("rejected", label="rejected", **_DRAFTED),
        ),
    ),
    Table(
        "sampled_run",
        "Speculative sampling run for real, next to the formula",
        (
            _DRAFT,
            _LABEL,
            Column("temperature", label="T", compare="numeric", scope="any"),
            _GAMMA,
            Column("new_tokens", "tokens", "tokens"),
            Column("rounds", label="rounds", **_DRAFTED),
            Column("judged", label="drafts judged", **_DRAFTED),
            Column("accepted", label="kept", **_DRAFTED),
            Column("acceptance", label="acceptance, run", **_NUM_DRAFTED),
            Column("expected_acceptance", label="acceptance, Σ min over the text", **_NUM_DRAFTED),
            Column("predicted_tokens_per_round", "tokens", "tokens/round, formula", **_NUM_DRAFTED),
            Column("tokens_per_round", "tokens", "tokens/round, run", **_NUM_DRAFTED),
            Column("seconds", "s", "time", **_TIMING),
        ),
    ),
)
VALUES = (
    Value("prompt"),
    Value("agreement_tokens", "tokens"),
    Value("new_tokens", "tokens"),
    Value("all_identical", description="every speculative run produced exactly the target's greedy tokens", **_DRAFTED),
    Value("runs"),
    # Picked by the measured speedup: may change with timing noise even here, so
    # compared only where timings are.
    Value("best_draft", compare="timing"),
    Value("best_gamma", compare="timing"),
    Value("best_measured_speedup", "x", **_TIMING),
    Value("best_predicted_speedup", "x", **_TIMING),  # uses the measured draft cost c
    Value("significance", compare="numeric", scope="any"),
    Value("exactness_draft"),
    Value("exactness_draws"),
    Value("exactness_temperature", compare="numeric", scope="any"),
    Value("exact_rule_passes", description="the rule's samples passed every chi-square test", **_DRAFTED),
    Value("draft_alone_rejected", description="the draft's own samples failed every chi-square test", **_DRAFTED),
    Value("sampled_temperature", compare="numeric", scope="any"),
    Value("sampled_gamma"),
    Value("sampled_tokens", "tokens"),
    Value("greedy_samples_ms", "ms", **_TIMING),
    Value("target_step_ms", "ms", **_TIMING),
)
