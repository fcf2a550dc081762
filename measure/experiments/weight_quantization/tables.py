"""What §5 writes (``site_data/weight_quantization/``): its tables and values, declared once."""

from measure.experiments.weight_quantization.grid import Q4_1_BLOCK
from measure.lab import quantizers as q
from measure.lab.prediction import prediction_columns
from sitedata.policies import EXACT_ON_DEVICE, EXACT_ON_MACHINE, NUMERIC, NUMERIC_ANYWHERE, NUMERIC_ON_MACHINE, TIMING
from sitedata.schema import Column, Table, derived_columns, interval_columns

RATIO_PAIRS = (
    ("int4_tensor", "int4_row"),
    ("int4_row", "int4_g128"),
    ("int4_g128", "nf4_b64"),
    ("int4_g64", "nf4_b64"),
)

# Everything read from the weights reproduces on the same device type and dtype only: the
# weights are loaded (random ones initialised) in the run's dtype, fp16 on a GPU, and are
# quantized on the run's device, the reconstruction cast back to that dtype. Which matrix
# comes out worst or most outlier-heavy, and counts of weights or levels, follow them
# (NUMERIC, EXACT_ON_DEVICE). Sizes, bits and shapes are counted from the shapes alone and
# hold anywhere (EXACT, NUMERIC_ANYWHERE). Whether a low-bit kernel runs, and the last bits
# of what it computes, belong to the machine, its PyTorch build and vector instructions
# (EXACT_ON_MACHINE, NUMERIC_ON_MACHINE); its speed is a timing, a median with its 95 %
# interval beside it, and a ratio of
# two timings of the sweep the median of their ratios round by round, with its interval.

SPEEDUP = ("speedup_vs_fp32", "speedup_vs_fp32_low", "speedup_vs_fp32_high")
FRACTION = ("fraction_of_floor", "fraction_of_floor_low", "fraction_of_floor_high")


TABLES = (
    Table(
        "sizes",
        "The model's parameters stored at each precision",
        (
            Column("storage", words=True),
            Column("bits_per_parameter", "bits", "bits per parameter", policy=NUMERIC_ANYWHERE),
            Column("bytes", "bytes", "size"),
        ),
        description=(
            "The model's parameters stored at 4, 2, 1 and 0.5 bytes each, and as each scheme would store them"
            " (projection matrices quantized, everything else fp16)."
        ),
    ),
    Table(
        "errors",
        "Relative error ||W − Ŵ|| / ||W|| over all {projection_matrices} projection matrices",
        (
            Column("scheme", label="key"),
            Column("label", label="scheme", words=True),
            Column("bits_per_weight", "bits", "bits per weight", policy=NUMERIC_ANYWHERE),
            Column("mean_rel_error", label="mean error", policy=NUMERIC),
            Column("worst_rel_error", label="worst error", policy=NUMERIC),
            Column("worst_matrix", label="worst matrix", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "Every projection matrix quantized with every scheme: the relative Frobenius error, its mean over"
            " the matrices and the worst matrix, named."
        ),
    ),
    Table(
        "matrix_errors",
        "Relative error of every projection matrix under every scheme",
        (
            Column("matrix"),
            Column("kind"),
            Column("rows"),
            Column("cols", label="columns"),
            # One column per scheme: every profile quantizes with every scheme of SCHEMES.
            *(Column(s, label=scheme.label, policy=NUMERIC) for s, scheme in q.SCHEMES.items()),
        ),
        description="The relative error of every projection matrix under every scheme.",
    ),
    Table(
        "outlier_matrix",
        "The most outlier-heavy projection matrix (largest max|w| / std)",
        (
            Column("matrix", policy=EXACT_ON_DEVICE),
            Column("rows", policy=EXACT_ON_DEVICE),
            Column("cols", label="columns", policy=EXACT_ON_DEVICE),
            Column("mean_abs", label="mean |w|", policy=NUMERIC),
            Column("std", policy=NUMERIC),
            Column("max_abs", label="max |w|", policy=NUMERIC),
            Column("max_over_std", "x", "max / std", policy=NUMERIC),
            Column("beyond_6_sigma", "weights", "beyond 6σ", policy=EXACT_ON_DEVICE),
            Column("beyond_6_sigma_share", "fraction", "share beyond 6σ", policy=NUMERIC),
        ),
        description="The projection matrix with the largest max|w| / std, and its statistics.",
    ),
    Table(
        "outlier_levels",
        "Where that matrix's ordinary weights (within {ordinary_sigmas:g}σ) land, by scale granularity",
        (
            Column("scheme", words=True),
            Column("levels_available", "levels", "levels available"),
            Column("ordinary_levels_used", "levels", "levels the ordinary weights use", policy=EXACT_ON_DEVICE),
            Column("ordinary_to_zero_share", "fraction", "ordinary weights set to 0", policy=NUMERIC),
            Column("rel_error", label="error on this matrix", policy=NUMERIC),
        ),
        description="Which int4 levels that matrix's ordinary weights land on under each scale granularity.",
    ),
    Table(
        "outlier_codes",
        "Int4 per-tensor: how many of that matrix's weights fall on each level",
        (
            Column("code"),
            Column("value", label="level value", policy=NUMERIC),
            Column("all_weights", "weights", "all weights", policy=EXACT_ON_DEVICE),
            Column("ordinary_weights", "weights", "ordinary weights", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "How many of that matrix's weights, all and ordinary, fall on each int4 level under one scale for"
            " the whole matrix."
        ),
    ),
    Table(
        "distributed_grid",
        f"Were the weights already quantized? Distinct values per block of {Q4_1_BLOCK} consecutive weights",
        (
            Column("matrices"),
            Column("blocks", "blocks", "blocks of 32"),
            Column("max_distinct_per_block", "values", "most distinct values in a block", policy=EXACT_ON_DEVICE),
            Column("blocks_within_16_share", "fraction", "blocks with ≤ 16 values", policy=NUMERIC),
            Column("q4_1_requantize_error", label="error of re-quantizing as Q4_1", policy=NUMERIC),
            Column("q8_0_requantize_error", label="error of re-quantizing as Q8_0", policy=NUMERIC),
        ),
        description=(
            "Whether the weights were already quantized before this run saw them, read from the weights "
            "alone: the distinct values per block of consecutive weights (a GGUF Q4_1 block holds at most "
            "16), and the error of re-quantizing them with Q4_1's and Q8_0's own rules."
        ),
    ),
    Table(
        "decode_kernels",
        "One decode step ({kernel_cache_tokens}-token cache, batch 1) with the projections on low-bit kernels",
        (
            Column("variant", label="key"),
            Column("label", label="projections", words=True),
            Column("activations"),
            Column("kernel", policy=EXACT_ON_MACHINE),
            Column("bits_per_weight", "bits", "bits per projection weight", policy=NUMERIC_ANYWHERE),
            Column("weight_bytes", "bytes", "weights read per step", policy=NUMERIC_ANYWHERE),
            Column("max_rel_error", label="kernel vs its weights: worst error", policy=NUMERIC_ON_MACHINE),
            Column("tolerance"),
            Column("status", policy=EXACT_ON_MACHINE),
            *interval_columns("step_ms", "ms", "step"),
            *derived_columns("speedup_vs_fp32", "x", "speed vs fp32"),
            Column("floor_ms", "ms", "floor: bytes / bandwidth", policy=TIMING),
            *derived_columns("fraction_of_floor", "fraction", "floor / step"),
            Column("kernel_gflop_s", "GFLOP/s", "its kernel's ceiling at one row", policy=TIMING),
            *prediction_columns("step"),
            *interval_columns("matmul_ms", "ms", "matrix multiplies, profiled"),
            *derived_columns("rest_ms", "ms", "the rest of the step"),
        ),
        description=(
            "One decode step (one token, batch 1) with the projection matrices computed by the low-bit "
            "kernels this PyTorch ships, against the fp32 and bf16 steps, every variant interleaved in one "
            "sweep: bits per weight, weight bytes read per step, step time (the median with its 95 % "
            "interval), speed against fp32, and the floor (the weight bytes over the run's one bandwidth, the "
            "calibration's) with the fraction of it reached; the speed-up paired round by round with its "
            "interval, the fraction with the range the intervals give. "
            "Each kernel is checked against its dequantized weights first; a variant this machine cannot run "
            "is a row that says why. Beside each step, its prediction by the run's roofline (its weights' "
            "bytes as stored and the cache's over the bandwidth, its FLOPs over its own kernel's ceiling at "
            "one row, its operators times the cost of one), and its matrix multiplies' self time, profiled in "
            "a sweep of their own, with the rest of the step (the step's median minus theirs, the range the "
            "two intervals give)."
        ),
    ),
)
