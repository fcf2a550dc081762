"""What §6 writes (``site_data/activation_outliers/``): its tables, declared once (its
values in ``values.py``)."""

from sitedata.policies import EXACT_ON_DEVICE, NUMERIC
from sitedata.schema import Column, Table

TOP_PER_LAYER = 3  # the layers table has a column pair per rank

# Everything here is read from the model's hidden states, so it reproduces on the same
# device type and dtype only; that includes which dimensions, tokens and layers come out
# on top and the counts of levels and dimensions (INT8 is rounded here in float32, not by
# an integer kernel): NUMERIC for values, EXACT_ON_DEVICE for what is picked or counted.
# The prompt, the model's shape and the configuration hold anywhere (EXACT).

TABLES = (
    Table(
        "layers",
        "Per layer: the largest hidden dimensions (max |h| over tokens)",
        (
            Column("layer"),
            Column("median_dim_max", label="median dimension's max |h|", policy=NUMERIC),
            *(
                c
                for r in range(1, TOP_PER_LAYER + 1)
                for c in (
                    Column(f"top{r}_dim", label=f"#{r} dim", policy=EXACT_ON_DEVICE),
                    Column(f"top{r}_max", label=f"#{r} max |h|", policy=NUMERIC),
                )
            ),
            Column("top1_token", label="token of #1", policy=EXACT_ON_DEVICE),
            Column("top1_over_median", "x", "#1 / median", policy=NUMERIC),
            Column("rest_median_dim_max", label="without the first token: median", policy=NUMERIC),
            Column("rest_top1_dim", label="without the first token: #1 dim", policy=EXACT_ON_DEVICE),
            Column("rest_top1_max", label="#1 max |h|", policy=NUMERIC),
        ),
        description=(
            "The residual stream after every decoder layer: per layer the max |h| of the median hidden "
            "dimension and of the largest three, and the token where the largest sits; with and without the "
            "first token."
        ),
    ),
    Table(
        "tracked",
        "Max |h| of every dimension that is ever among a layer's largest, at every layer",
        (
            Column("dim", label="dimension", policy=EXACT_ON_DEVICE),
            Column("layer"),
            Column("max_abs", label="max |h|", policy=NUMERIC),
            Column("rank", label="rank in its layer", policy=EXACT_ON_DEVICE),
            Column("rest_max_abs", label="max |h| without the first token", policy=NUMERIC),
        ),
        description=(
            "Those maxima, layer by layer, for every dimension that is ever among a layer's largest: whether "
            "the same ones persist."
        ),
    ),
    Table(
        "histogram",
        "Layer {mid_layer}: hidden dimensions by their max |h|, in power-of-two bins",
        (
            Column("bin_low", label="from"),
            Column("bin_high", label="below"),
            Column("dims", "dimensions", "dimensions", policy=EXACT_ON_DEVICE),
            Column("dims_rest", "dimensions", "without the first token", policy=EXACT_ON_DEVICE),
        ),
        description="The hidden dimensions' maxima at the middle layer, in power-of-two bins.",
    ),
    Table(
        "tensors",
        "Every tensor a projection multiplies, and the residual stream, at every layer",
        (
            Column("tensor", policy=EXACT_ON_DEVICE, words=True),
            Column("layer"),
            Column("width", "dimensions"),
            Column("max_abs", label="max |x|", policy=NUMERIC),
            Column("top_dim", label="its dim", policy=EXACT_ON_DEVICE),
            Column("top_token", label="its token", policy=EXACT_ON_DEVICE),
            Column("median_dim_max", label="median dim's max |x|", policy=NUMERIC),
            Column("top_over_median", "x", "max / median dim", policy=NUMERIC),
            Column("levels", "levels", "INT8 levels, one scale", policy=EXACT_ON_DEVICE),
            Column("rest_levels", "levels", "without the first token", policy=EXACT_ON_DEVICE),
            Column("error_tensor", "fraction", "token error, one scale", policy=NUMERIC),
            Column("error_dimension", "fraction", "scale per dimension", policy=NUMERIC),
            Column("error_token", "fraction", "scale per token", policy=NUMERIC),
        ),
        description=(
            "The input of every linear projection (captured by forward pre-hooks: what an 8-bit activation "
            "scheme quantizes) and the residual stream after every decoder layer: per tensor and layer its "
            "largest magnitude, the dimension and token it sits on, the median dimension's max, the distinct "
            "INT8 codes one tensor-wide absmax scale leaves it (with and without the first token), and the "
            "median over tokens of the round trip's relative error ||x_t - x̂_t|| / ||x_t|| with one scale, "
            "one per dimension and one per token."
        ),
    ),
    Table(
        "tensors_summary",
        "Each tensor over its layers: its largest value, and what INT8 with one scale leaves it",
        (
            Column("tensor", policy=EXACT_ON_DEVICE, words=True),
            Column("layers", "layers"),
            Column("max_abs", label="largest |x|", policy=NUMERIC),
            Column("max_layer", label="at layer", policy=EXACT_ON_DEVICE),
            Column("max_token", label="on token", policy=EXACT_ON_DEVICE),
            Column("top_over_median", "x", "max / median dim (median layer)", policy=NUMERIC),
            Column("fewest_levels", "levels", "fewest INT8 levels", policy=EXACT_ON_DEVICE),
            Column("fewest_layer", label="at layer", policy=EXACT_ON_DEVICE),
            Column("median_levels", "levels", "median layer's levels", policy=EXACT_ON_DEVICE),
            Column("under_quarter", "layers", "layers under 64 levels", policy=EXACT_ON_DEVICE),
            Column("error_tensor", "fraction", "token error, one scale (median layer)", policy=NUMERIC),
            Column("worst_error_tensor", "fraction", "worst layer", policy=NUMERIC),
            Column("error_dimension", "fraction", "scale per dimension", policy=NUMERIC),
            Column("error_token", "fraction", "scale per token", policy=NUMERIC),
        ),
        description=(
            "The tensors table summed up per tensor over its layers: the largest magnitude and where, the "
            "median layer's ratio of largest to median dimension, the fewest INT8 codes one scale leaves and "
            "where, the median layer's codes, the layers under a quarter of the 256 codes, and the median "
            "layer's token error with each kind of scale (the worst layer's with one scale)."
        ),
    ),
    Table(
        "int8",
        "Three tensors as INT8 with one absmax scale: distinct levels used (of 256)",
        (
            Column("tensor", policy=EXACT_ON_DEVICE, words=True),
            Column("setting", label="scale computed over", words=True),
            Column("scale", label="step", policy=NUMERIC),
            Column("levels_used", "levels", "levels used", policy=EXACT_ON_DEVICE),
            Column("ordinary_levels_min", "levels", "ordinary dims: fewest", policy=EXACT_ON_DEVICE),
            Column("ordinary_levels_max", "levels", "most", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "The residual stream at the middle layer (the chapter's tensor), the attention's normalised input "
            "at that layer, and the projection input that one scale serves worst, each quantized to INT8 with "
            "one tensor-wide absmax scale: the step, the levels the tensor uses out of 256 and the fewest and "
            "most that three ordinary dimensions (at the quartiles of the per-dimension maxima) get; over all "
            "of it, with the top dimensions left out of the scale, and with the first token left out."
        ),
    ),
    Table(
        "int8_scales",
        "The same three tensors as INT8, by where each absmax scale is computed",
        (
            Column("tensor", policy=EXACT_ON_DEVICE, words=True),
            Column("granularity", label="scales", words=True),
            Column("scales", "scales", "scales in all", policy=EXACT_ON_DEVICE),
            Column("token_error", "fraction", "token error (median)", policy=NUMERIC),
            Column("median_levels", "levels", "levels a dimension uses (median)", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "The same tensors as INT8 with one absmax scale for the tensor, one per hidden dimension and one "
            "per token: the median over tokens of the round trip's relative error ||x_t - x̂_t|| / ||x_t|| and "
            "the median, over dimensions, of the distinct codes a dimension's values use."
        ),
    ),
    Table(
        "prompts",
        "Every prompt: the leading dimension (largest max |h| at any layer) and the bulk of |h|",
        (
            Column("prompt", words=True),
            Column("tokens", "tokens"),
            Column("lead_dim", label="leading dim", policy=EXACT_ON_DEVICE),
            Column("lead_max", label="its max |h|", policy=NUMERIC),
            Column("lead_layer", label="at layer", policy=EXACT_ON_DEVICE),
            Column("lead_layers", "layers", "layers it leads", policy=EXACT_ON_DEVICE),
            Column("lead_token", label="on token", policy=EXACT_ON_DEVICE),
            Column("most_dim", label="dim largest in most layers", policy=EXACT_ON_DEVICE),
            Column("most_layers", "layers", "in layers", policy=EXACT_ON_DEVICE),
            Column("median_dim_max", label="median dim's max |h| (highest layer)", policy=NUMERIC),
            Column("mid_abs_median", label="median |h|, middle layer", policy=NUMERIC),
            Column("mid_abs_p99", label="99th pct |h|, middle layer", policy=NUMERIC),
            Column("rest_lead_dim", label="without the first token: leading dim", policy=EXACT_ON_DEVICE),
            Column("rest_lead_max", label="its max |h|", policy=NUMERIC),
            Column("rest_lead_layer", label="at layer", policy=EXACT_ON_DEVICE),
            Column("rest_lead_layers", "layers", "layers it leads", policy=EXACT_ON_DEVICE),
            Column("rest_most_dim", label="dim largest in most layers", policy=EXACT_ON_DEVICE),
            Column("rest_most_layers", "layers", "in layers", policy=EXACT_ON_DEVICE),
            Column("rest_median_dim_max", label="median dim's max |h|", policy=NUMERIC),
            Column("rest_mid_abs_median", label="median |h|", policy=NUMERIC),
            Column("rest_mid_abs_p99", label="99th pct |h|", policy=NUMERIC),
            Column(
                "fewest_tensor",
                label="projection input with the fewest INT8 levels",
                policy=EXACT_ON_DEVICE,
                words=True,
            ),
            Column("fewest_layer", label="at layer", policy=EXACT_ON_DEVICE),
            Column("fewest_levels", "levels", "levels", policy=EXACT_ON_DEVICE),
            Column("fewest_token", label="its largest value on token", policy=EXACT_ON_DEVICE),
            Column("text_start", label="starts with"),
        ),
        description=(
            "The same capture for several prompts: per prompt the leading dimension, its value, its layer and"
            " how many layers it leads, the median dimension, and the median and 99th percentile of |h| at "
            "the middle layer, all with and without the first token; and the projection input that one INT8 "
            "scale leaves the fewest codes, with the token its largest value sits on."
        ),
    ),
    Table(
        "prompt_layers",
        "Every prompt, every layer: max |h| of dimension {biggest_dim} and of the median dimension",
        (
            Column("prompt", words=True),
            Column("layer"),
            Column("dim_max", label="max |h|", policy=NUMERIC),
            Column("rest_dim_max", label="without the first token", policy=NUMERIC),
            Column("median_dim_max", label="median dimension", policy=NUMERIC),
            Column("rest_median_dim_max", label="median, without the first token", policy=NUMERIC),
        ),
        description=(
            "Per prompt and layer, the max |h| of the main prompt's biggest dimension and of the median "
            "dimension, with and without the first token."
        ),
    ),
)
