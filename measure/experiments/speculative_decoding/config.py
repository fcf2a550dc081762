"""§8's parameters: the published sweep, and the smaller profiles."""

from __future__ import annotations

from dataclasses import dataclass

from measure.experiments.speculative_decoding.algorithm import DYNAMIC_INT8, INT8_WEIGHTS
from measure.experiments.speculative_decoding.tables import FORMULA_GAMMAS
from measure.lab.evaluation import AGREEMENT_TOKENS
from measure.lab.quantizers import SCHEMES


@dataclass(frozen=True, kw_only=True)
class Config:
    agreement_tokens: int = AGREEMENT_TOKENS  # spec §7: the agreement column that gives alpha
    schemes: tuple[str, ...] = tuple(SCHEMES)
    formula_alphas: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)  # spec §8
    formula_gammas: tuple[int, ...] = FORMULA_GAMMAS
    formula_costs: tuple[float, ...] = (0.1, 0.2)  # spec §8
    # the drafts whose step is timed and that run for real; those on low-bit kernels
    # (DYNAMIC_INT8, INT8_WEIGHTS) on CPU runs only
    drafts: tuple[str, ...] = ("int8_row", "nf4_b64", DYNAMIC_INT8, INT8_WEIGHTS)
    run_gammas: tuple[int, ...] = (1, 2, 4, 8)
    new_tokens: int = 128
    # every run is called once for its tokens and its rounds, and its time predicted from
    # the passes (runs.py); plain greedy and this many runs, the prediction's first, timed
    timed_runs: int = 2
    # Two interleaved sweeps (measure/lab/sampling.py), each with its seed (the order of
    # its rounds) and its time budget (warm-up included; the first six rounds are always
    # completed): the forward passes that give c and the verification's cost, and the
    # generations, plain greedy and every draft x gamma.
    target: float = 0.03  # the relative half-width of every interval asked for
    step_seed: int = 80
    run_seed: int = 81
    step_budget_s: float = 20.0
    run_budget_s: float = 120.0
    temperatures: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5)
    exactness_draft: str = "int4_row"  # a draft that differs from the target enough to show
    exactness_positions: int = 3
    exactness_draws: int = 100_000
    exactness_temperature: float = 1.0
    sampled_temperature: float = 1.0
    sampled_gamma: int = 4
    sampled_tokens: int = 128
    seed: int = 0

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile == "full":
            return cls()
        if profile == "cpu":
            # Each fake-quantized draft step costs a full target step on a CPU; the two on
            # low-bit kernels do not. Two gammas each. The generations stay 48 tokens long,
            # since the acceptance counts they give (exact columns, and claims) need that
            # many positions: one call of each of the six runs (about 12 s on two quiet
            # cores), then six rounds of plain greedy and the two runs the prediction puts
            # first (about 5 s a round: 30 s, where six rounds of every run took 60 to 110 s).
            # The single passes get 12 s, about twenty rounds: at seven, one draft's c had
            # an interval as wide as its samples' extremes and straddled 1/2 in one run of two.
            return cls(
                drafts=("int8_row", DYNAMIC_INT8, INT8_WEIGHTS),
                run_gammas=(2, 4),
                new_tokens=48,
                step_budget_s=12.0,
                run_budget_s=20.0,
                sampled_tokens=96,
            )
        return cls(
            agreement_tokens=8,
            schemes=("int8_row",),
            drafts=("int8_row", INT8_WEIGHTS),
            run_gammas=(2,),
            new_tokens=6,
            step_budget_s=0.1,
            run_budget_s=0.1,
            timed_runs=1,
            exactness_draft="int8_row",
            exactness_positions=2,
            exactness_draws=2_000,
            sampled_tokens=6,
        )
