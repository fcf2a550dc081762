"""What §5 writes (``site_data/weight_quantization/``) besides its tables: its values,
declared once (the tables: tables.py)."""

from measure.experiments.weight_quantization.tables import RATIO_PAIRS
from measure.lab import quantizers as q
from measure.lab.roofline_in_rounds import declared
from sitedata.intervals import interval_values
from sitedata.policies import EXACT_ON_DEVICE, EXACT_ON_MACHINE, NUMERIC, NUMERIC_ANYWHERE, TIMING
from sitedata.schema import Value

VALUES = (
    Value("parameters", "parameters", description="tied embeddings counted once"),
    Value("projection_parameters", "parameters"),
    Value("projection_matrices", "matrices"),
    Value("projection_share", "fraction", policy=NUMERIC_ANYWHERE),
    *(Value(f"{stat}_{s}", policy=NUMERIC) for s in q.SCHEMES for stat in ("mean", "worst")),
    *(
        Value(f"ratio_{a}_over_{b}", "x", description=f"mean error of {a} divided by that of {b}", policy=NUMERIC)
        for a, b in RATIO_PAIRS
    ),
    Value("outlier_matrix", policy=EXACT_ON_DEVICE),
    Value("outlier_tensor_scale", policy=NUMERIC),
    Value("ordinary_sigmas"),
    Value("ordinary_share", "fraction", policy=NUMERIC),
    Value(
        "already_on_q4_1_grid",
        description="every block of 32 projection weights holds at most 16 distinct values",
        policy=EXACT_ON_DEVICE,
    ),
    Value("q4_1_requantize_error_max", policy=NUMERIC),
    Value("kernel_cache_tokens", "tokens"),
    *interval_values(
        "kernel_bandwidth_gb_s",
        "GB/s",
        description="the run's one bandwidth (its calibration)",
        bounds=("its 95 % interval, low", "its 95 % interval, high"),
    ),
    *declared("kernel_round", "the kernel sweep"),
    Value("kernel_fp32_step_ms", "ms", policy=TIMING),
    Value("kernel_fastest", description="the variant with the shortest step", policy=TIMING, words=True),
    *interval_values("kernel_fastest_speedup", "x", description="its speed against fp32"),
    Value("kernel_timed", "variants", description="variants built, checked and timed", policy=EXACT_ON_MACHINE),
    Value(
        "kernel_not_run",
        "variants",
        description="variants not timed: not built, wrong or failed",
        policy=EXACT_ON_MACHINE,
    ),
    Value(
        "kernel_wrong",
        "variants",
        description="variants built whose output missed the tolerance",
        policy=EXACT_ON_MACHINE,
    ),
    *interval_values("kernel_fp32_fraction_of_floor", "fraction", description="the fp32 step's floor over the step"),
    Value("kernel_lowbit_fastest", description="the low-bit variant with the shortest step", policy=TIMING, words=True),
    Value("kernel_lowbit_fastest_variant", description="its key in decode_kernels", policy=TIMING),
    *interval_values("kernel_lowbit_fastest_speedup", "x", description="its speed against fp32"),
    Value(
        "kernel_lowbit_fastest_bytes_saving",
        "x",
        description="fp32's weight bytes over that variant's (which variant is chosen by a timing)",
        policy=TIMING,
    ),
    Value(
        "kernel_lowbit_closest",
        description="the low-bit variant closest to its floor",
        policy=TIMING,
        words=True,
    ),
    Value("kernel_lowbit_closest_variant", description="its key in decode_kernels", policy=TIMING),
    *interval_values(
        "kernel_lowbit_best_fraction_of_floor",
        "fraction",
        description="the largest floor / step among the low-bit variants",
    ),
    Value("kernel_samples_ms", "ms", description="every timed step, per variant", policy=TIMING),
    *interval_values(
        "kernel_int8_fp32_over_bf16",
        "x",
        description="int8 codes: the step with fp32 activations over bf16 ones, paired round by round",
    ),
    # What no weight format shortens (decomposition.cap_values): the rest of every step
    # beyond its matrix multiplies, and the fp32 step over the smallest rest.
    Value("kernel_rest_min_ms", "ms", description="the smallest rest of a step over the variants", policy=TIMING),
    Value("kernel_rest_max_ms", "ms", description="the largest rest of a step over the variants", policy=TIMING),
    *interval_values(
        "kernel_cap",
        "x",
        description="the fp32 step over the smallest rest: the most a format could gain",
        bounds=("its cautious range, low", "its cautious range, high"),
    ),
)
