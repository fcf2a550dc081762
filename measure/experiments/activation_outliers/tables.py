"""What §6 writes (``site_data/activation_outliers/``): its tables and values, declared once."""

from sitedata.policies import EXACT_ON_DEVICE, NUMERIC
from sitedata.schema import Column, Table, Value

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
            Column("rest_top1_dim", label="#1 dim", policy=EXACT_ON_DEVICE),
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
        "int8",
        "Layer {mid_layer} hidden states as INT8 with one absmax scale: distinct levels used (of 256)",
        (
            Column("setting", label="scale computed over", words=True),
            Column("scope", label="levels counted in", policy=EXACT_ON_DEVICE, words=True),
            Column("scale", policy=NUMERIC),
            Column("levels_used", "levels", "levels used", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "That layer's hidden states quantized to INT8 with one tensor-wide absmax scale: the levels used "
            "out of 256 and the scale, with the top dimensions in the scale and left out of it."
        ),
    ),
    Table(
        "int8_scales",
        "Layer {mid_layer} hidden states as INT8, by where each absmax scale is computed",
        (
            Column("granularity", label="scales", words=True),
            Column("scales", "scales", "scales in all", policy=EXACT_ON_DEVICE),
            Column("relative_error", "fraction", "relative error", policy=NUMERIC),
            Column("median_levels", "levels", "levels a dimension uses (median)", policy=EXACT_ON_DEVICE),
        ),
        description=(
            "The same hidden states as INT8 with one absmax scale for the tensor, one per hidden dimension and "
            "one per token: the relative error ||h - h_hat|| / ||h|| of the round trip and the median, over "
            "dimensions, of the distinct codes a dimension's values use."
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
            Column("text_start", label="starts with"),
        ),
        description=(
            "The same capture for several prompts: per prompt the leading dimension, its value, its layer and"
            " how many layers it leads, the median dimension, and the median and 99th percentile of |h| at "
            "the middle layer; all with and without the first token."
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
VALUES = (
    Value("prompt_tokens", "tokens"),
    Value("prompt_text"),
    Value("hidden", "dimensions"),
    Value("layers", "layers"),
    Value("biggest_dim", policy=EXACT_ON_DEVICE),
    Value("biggest_value", policy=NUMERIC),
    Value("biggest_layer", policy=EXACT_ON_DEVICE),
    Value("biggest_token", policy=EXACT_ON_DEVICE),
    Value("biggest_layer_median", policy=NUMERIC),
    Value("biggest_at_mid", policy=NUMERIC),
    Value("biggest_leads_layers", "layers", policy=EXACT_ON_DEVICE),
    Value("biggest_first_lead", policy=EXACT_ON_DEVICE),
    Value("biggest_in_top_layers", "layers", policy=EXACT_ON_DEVICE),
    Value("median_dim_max_overall", policy=NUMERIC),
    Value("mid_layer"),
    Value("mid_median_dim_max", policy=NUMERIC),
    Value("mid_top_dim", policy=EXACT_ON_DEVICE),
    Value("mid_top_value", policy=NUMERIC),
    Value("mid_below_8", "dimensions", policy=EXACT_ON_DEVICE),
    Value(
        "mid_gap_bins",
        "bins",
        description="empty bins between the largest dimension's bin and the next occupied bin below it",
        policy=EXACT_ON_DEVICE,
    ),
    Value("int8_levels_all", "levels", policy=EXACT_ON_DEVICE),
    Value("int8_levels_excluded", "levels", policy=EXACT_ON_DEVICE),
    Value("int8_scale_all", policy=NUMERIC),
    Value("int8_scale_excluded", policy=NUMERIC),
    Value("int8_scale_ratio", "x", policy=NUMERIC),
    *(
        Value(
            f"int8_error_{g}", "fraction", description=f"relative error of INT8 with one scale per {g}", policy=NUMERIC
        )
        for g in ("tensor", "dimension", "token")
    ),
    Value("int8_levels_rest", "levels", policy=EXACT_ON_DEVICE),
    Value("int8_ordinary_max_levels_all", "levels", policy=EXACT_ON_DEVICE),
    Value("int8_ordinary_min_levels_excluded", "levels", policy=EXACT_ON_DEVICE),
    Value("ordinary_dims", policy=EXACT_ON_DEVICE),
    Value("int8_scale_rest", policy=NUMERIC),
    Value("rest_mid_top_dim", policy=EXACT_ON_DEVICE),
    Value("rest_mid_top_value", policy=NUMERIC),
    Value("rest_mid_median", policy=NUMERIC),
    Value("rest_biggest_leads_layers", "layers", policy=EXACT_ON_DEVICE),
    Value("excluded_dims", policy=EXACT_ON_DEVICE),
    Value("excluded_count"),
    Value("octaves_spanned", policy=NUMERIC),
    Value("mid_abs_median", description="median |h| over every element of the middle layer", policy=NUMERIC),
    Value("mid_abs_p99", description="99th percentile of |h| over every element of the middle layer", policy=NUMERIC),
    Value("rest_mid_abs_median", description="the same without the first token", policy=NUMERIC),
    Value("rest_mid_abs_p99", description="the same without the first token", policy=NUMERIC),
    Value("prompts_count", "prompts"),
    Value("book_prompts", "prompts"),
    Value("prompts_lead_dim", description="the dimension that leads most often across prompts", policy=EXACT_ON_DEVICE),
    Value(
        "prompts_sharing_lead",
        "prompts",
        description="prompts whose leading dimension is that one",
        policy=EXACT_ON_DEVICE,
    ),
    Value("rest_prompts_lead_dim", description="the same without the first token", policy=EXACT_ON_DEVICE),
    Value("rest_prompts_sharing_lead", "prompts", policy=EXACT_ON_DEVICE),
    Value(
        "rest_prompts_most_dim",
        description="without the first token, the dimension most often largest in the most layers",
        policy=EXACT_ON_DEVICE,
    ),
    Value("rest_prompts_sharing_most", "prompts", policy=EXACT_ON_DEVICE),
    Value(
        "rest_prompts_most_layers_min",
        "layers",
        description="the fewest layers it leads in those prompts",
        policy=EXACT_ON_DEVICE,
    ),
    Value("prompts_lead_min", description="the smallest leading value over the prompts", policy=NUMERIC),
    Value("prompts_lead_max", description="the largest leading value over the prompts", policy=NUMERIC),
    Value(
        "prompts_lead_layers_min",
        "layers",
        description="the fewest layers a prompt's lead leads",
        policy=EXACT_ON_DEVICE,
    ),
    Value("prompts_median_dim_max", description="the highest median dimension's max over the prompts", policy=NUMERIC),
    Value(
        "prompts_lead_token0",
        "prompts",
        description="prompts whose biggest value is on the first token",
        policy=EXACT_ON_DEVICE,
    ),
)
