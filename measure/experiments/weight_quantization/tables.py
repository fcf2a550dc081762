"""What §5 writes (``site_data/weight_quantization/``): its tables and values, declared once."""

from measure.experiments.weight_quantization.grid import Q4_1_BLOCK
from measure.lab import quantizers as q
from sitedata.schema import Column, Table, Value

RATIO_PAIRS = (
    ("int4_tensor", "int4_row"),
    ("int4_row", "int4_g128"),
    ("int4_g128", "nf4_b64"),
    ("int4_g64", "nf4_b64"),
)

# Everything read from the weights reproduces on the same device type and dtype only: the
# weights are loaded (random ones initialised) in the run's dtype, fp16 on a GPU, and are
# quantized on the run's device, the reconstruction cast back to that dtype. Which matrix
# comes out worst or most outlier-heavy, and counts of weights or levels, follow them.
# Sizes, bits and shapes are counted from the shapes alone and hold anywhere.
_ERR = dict(compare="numeric")
_FORMULA = dict(compare="numeric", scope="any")
_FROM_WEIGHTS = dict(compare="exact", scope="device")
# Whether a low-bit kernel runs, and the last bits of what it computes, belong to the
# machine (its PyTorch build and vector instructions); its speed is a timing.
_TIMING = dict(compare="timing")
_KERNEL = dict(compare="exact", scope="machine")
_KERNEL_ERR = dict(compare="numeric", scope="machine")

TABLES = (
    Table(
        "sizes",
        "The model's parameters stored at each precision",
        (
            Column("storage", label="storage"),
            Column("bits_per_parameter", "bits", "bits per parameter", **_FORMULA),
            Column("bytes", "bytes", "size"),
        ),
    ),
    Table(
        "errors",
        "Relative error ||W − Ŵ|| / ||W|| over all {projection_matrices} projection matrices",
        (
            Column("scheme", label="key"),
            Column("label", label="scheme"),
            Column("bits_per_weight", "bits", "bits per weight", **_FORMULA),
            Column("mean_rel_error", label="mean error", **_ERR),
            Column("worst_rel_error", label="worst error", **_ERR),
            Column("worst_matrix", label="worst matrix", **_FROM_WEIGHTS),
        ),
    ),
    Table(
        "matrix_errors",
        "Relative error of every projection matrix under every scheme",
        (
            Column("matrix", label="matrix"),
            Column("kind", label="kind"),
            Column("rows", label="rows"),
            Column("cols", label="columns"),
            # One column per scheme: every profile quantizes with every scheme of SCHEMES.
            *(Column(s, label=scheme.label, **_ERR) for s, scheme in q.SCHEMES.items()),
        ),
    ),
    Table(
        "outlier_matrix",
        "The most outlier-heavy projection matrix (largest max|w| / std)",
        (
            Column("matrix", label="matrix", **_FROM_WEIGHTS),
            Column("rows", label="rows", **_FROM_WEIGHTS),
            Column("cols", label="columns", **_FROM_WEIGHTS),
            Column("mean_abs", label="mean |w|", **_ERR),
            Column("std", label="std", **_ERR),
            Column("max_abs", label="max |w|", **_ERR),
            Column("max_over_std", "x", "max / std", **_ERR),
            Column("beyond_6_sigma", "weights", "beyond 6σ", **_FROM_WEIGHTS),
            Column("beyond_6_sigma_share", "fraction", "share beyond 6σ", **_ERR),
        ),
    ),
    Table(
        "outlier_levels",
        "Where that matrix's ordinary weights (within {ordinary_sigmas:g}σ) land, by scale granularity",
        (
            Column("scheme", label="scheme"),
            Column("levels_available", "levels", "levels available"),
            Column("ordinary_levels_used", "levels", "levels the ordinary weights use", **_FROM_WEIGHTS),
            Column("ordinary_to_zero_share", "fraction", "ordinary weights set to 0", **_ERR),
            Column("rel_error", label="error on this matrix", **_ERR),
        ),
    ),
    Table(
        "outlier_codes",
        "Int4 per-tensor: how many of that matrix's weights fall on each level",
        (
            Column("code", label="code"),
            Column("value", label="level value", **_ERR),
            Column("all_weights", "weights", "all weights", **_FROM_WEIGHTS),
            Column("ordinary_weights", "weights", "ordinary weights", **_FROM_WEIGHTS),
        ),
    ),
    Table(
        "distributed_grid",
        f"Were the weights already quantized? Distinct values per block of {Q4_1_BLOCK} consecutive weights",
        (
            Column("matrices", label="matrices"),
            Column("blocks", "blocks", "blocks of 32"),
            Column("max_distinct_per_block", "values", "most distinct values in a block", **_FROM_WEIGHTS),
            Column("blocks_within_16_share", "fraction", "blocks with ≤ 16 values", **_ERR),
            Column("q4_1_requantize_error", label="error of re-quantizing as Q4_1", **_ERR),
            Column("q8_0_requantize_error", label="error of re-quantizing as Q8_0", **_ERR),
        ),
    ),
    Table(
        "bandwidth",
        "Memory bandwidth, from one large copy",
        (
            Column("copy_bytes", "bytes", "buffer copied"),
            Column("moved_bytes", "bytes", "bytes moved per copy"),
            Column("copies_per_sample", "copies", "copies per sample"),
            Column("time_ms", "ms", "time per copy", **_TIMING),
            Column("spread_ms", "ms", "spread (IQR)", **_TIMING),
            Column("bandwidth_gb_s", "GB/s", "bandwidth", **_TIMING),
        ),
    ),
    Table(
        "decode_kernels",
        "One decode step ({kernel_cache_tokens}-token cache, batch 1) with the projections on low-bit kernels",
        (
            Column("variant", label="key"),
            Column("label", label="projections"),
            Column("activations", label="activations"),
            Column("kernel", label="kernel", **_KERNEL),
            Column("bits_per_weight", "bits", "bits per projection weight", **_FORMULA),
            Column("weight_bytes", "bytes", "weights read per step", **_FORMULA),
            Column("max_rel_error", label="kernel vs its weights: worst error", **_KERNEL_ERR),
            Column("tolerance", label="tolerance"),
            Column("status", label="status", **_KERNEL),
            Column("step_ms", "ms", "step", **_TIMING),
            Column("spread_ms", "ms", "spread (IQR)", **_TIMING),
            Column("speedup_vs_fp32", "x", "speed vs fp32", **_TIMING),
            Column("floor_ms", "ms", "floor: bytes / bandwidth", **_TIMING),
            Column("step_over_floor", "x", "step / floor", **_TIMING),
        ),
    ),
)
VALUES = (
    Value("parameters", "parameters", description="tied embeddings counted once"),
    Value("projection_parameters", "parameters"),
    Value("projection_matrices", "matrices"),
    Value("projection_share", "fraction", **_FORMULA),
    *(Value(f"{stat}_{s}", **_ERR) for s in q.SCHEMES for stat in ("mean", "worst")),
    *(
        Value(f"ratio_{a}_over_{b}", "x", description=f"mean error of {a} divided by that of {b}", **_ERR)
        for a, b in RATIO_PAIRS
    ),
    Value("outlier_matrix", **_FROM_WEIGHTS),
    Value("outlier_tensor_scale", **_ERR),
    Value("ordinary_sigmas"),
    Value("ordinary_share", "fraction", **_ERR),
    Value(
        "already_on_q4_1_grid",
        description="every block of 32 projection weights holds at most 16 distinct values",
        **_FROM_WEIGHTS,
    ),
    Value("q4_1_requantize_error_max", **_ERR),
    Value("kernel_cache_tokens", "tokens"),
    Value("kernel_bandwidth_gb_s", "GB/s", **_TIMING),
    Value("kernel_fp32_step_ms", "ms", **_TIMING),
    Value("kernel_fastest", description="the variant with the shortest step", **_TIMING),
    Value("kernel_fastest_speedup", "x", description="its speed against fp32", **_TIMING),
    Value("kernel_timed", "variants", description="variants built, checked and timed", **_KERNEL),
    Value("kernel_not_run", "variants", description="variants not timed: not built, wrong or failed", **_KERNEL),
    Value("kernel_wrong", "variants", description="variants built whose output missed the tolerance", **_KERNEL),
    Value("kernel_fp32_over_floor", "x", description="the fp32 step over its floor", **_TIMING),
    Value("kernel_lowbit_fastest", description="the low-bit variant with the shortest step", **_TIMING),
    Value("kernel_lowbit_fastest_speedup", "x", description="its speed against fp32", **_TIMING),
    Value(
        "kernel_lowbit_fastest_bytes_saving",
        "x",
        description="fp32's weight bytes over that variant's (which variant is chosen by a timing)",
        **_TIMING,
    ),
    Value(
        "kernel_lowbit_min_over_floor",
        "x",
        description="the smallest step / floor among the low-bit variants",
        **_TIMING,
    ),
    Value("kernel_samples_ms", "ms", description="every timed step, per variant", **_TIMING),
)
