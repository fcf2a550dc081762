"""What §6 writes (``site_data/activation_outliers/``): its tables and values, declared once."""

from sitedata.schema import Column, Table, Value

TOP_PER_LAYER = 3  # the layers table has a column pair per rank

# Everything here is read from the model's hidden states, so it reproduces on the same
# device type and dtype only; that includes which dimensions, tokens and layers come out
# on top and the counts of levels and dimensions (INT8 is rounded here in float32, not by
# an integer kernel). The prompt, the model's shape and the configuration hold anywhere.
_ACT = dict(compare="numeric")
_PICKED = dict(compare="exact", scope="device")

TABLES = (
    Table(
        "layers",
        "Per layer: the largest hidden dimensions (max |h| over tokens)",
        (
            Column("layer", label="layer"),
            Column("median_dim_max", label="median dimension's max |h|", **_ACT),
            *(
                c
                for r in range(1, TOP_PER_LAYER + 1)
                for c in (
                    Column(f"top{r}_dim", label=f"#{r} dim", **_PICKED),
                    Column(f"top{r}_max", label=f"#{r} max |h|", **_ACT),
                )
            ),
            Column("top1_token", label="token of #1", **_PICKED),
            Column("top1_over_median", "x", "#1 / median", **_ACT),
            Column("rest_median_dim_max", label="without the first token: median", **_ACT),
            Column("rest_top1_dim", label="#1 dim", **_PICKED),
            Column("rest_top1_max", label="#1 max |h|", **_ACT),
        ),
    ),
    Table(
        "tracked",
        "Max |h| of every dimension that is ever among a layer's largest, at every layer",
        (
            Column("dim", label="dimension", **_PICKED),
            Column("layer", label="layer"),
            Column("max_abs", label="max |h|", **_ACT),
            Column("rank", label="rank in its layer", **_PICKED),
            Column("rest_max_abs", label="max |h| without the first token", **_ACT),
        ),
    ),
    Table(
        "histogram",
        "Layer {mid_layer}: hidden dimensions by their max |h|, in power-of-two bins",
        (
            Column("bin_low", label="from"),
            Column("bin_high", label="below"),
            Column("dims", "dimensions", "dimensions", **_PICKED),
            Column("dims_rest", "dimensions", "without the first token", **_PICKED),
        ),
    ),
    Table(
        "int8",
        "Layer {mid_layer} hidden states as INT8 with one absmax scale: distinct levels used (of 256)",
        (
            Column("setting", label="scale computed over"),
            Column("scope", label="levels counted in", **_PICKED),
            Column("scale", label="scale", **_ACT),
            Column("levels_used", "levels", "levels used", **_PICKED),
        ),
    ),
    Table(
        "prompts",
        "Every prompt: the leading dimension (largest max |h| at any layer) and the bulk of |h|",
        (
            Column("prompt", label="prompt"),
            Column("tokens", "tokens", "tokens"),
            Column("lead_dim", label="leading dim", **_PICKED),
            Column("lead_max", label="its max |h|", **_ACT),
            Column("lead_layer", label="at layer", **_PICKED),
            Column("lead_layers", "layers", "layers it leads", **_PICKED),
            Column("lead_token", label="on token", **_PICKED),
            Column("most_dim", label="dim largest in most layers", **_PICKED),
            Column("most_layers", "layers", "in layers", **_PICKED),
            Column("median_dim_max", label="median dim's max |h| (highest layer)", **_ACT),
            Column("mid_abs_median", label="median |h|, middle layer", **_ACT),
            Column("mid_abs_p99", label="99th pct |h|, middle layer", **_ACT),
            Column("rest_lead_dim", label="without the first token: leading dim", **_PICKED),
            Column("rest_lead_max", label="its max |h|", **_ACT),
            Column("rest_lead_layer", label="at layer", **_PICKED),
            Column("rest_lead_layers", "layers", "layers it leads", **_PICKED),
            Column("rest_most_dim", label="dim largest in most layers", **_PICKED),
            Column("rest_most_layers", "layers", "in layers", **_PICKED),
            Column("rest_median_dim_max", label="median dim's max |h|", **_ACT),
            Column("rest_mid_abs_median", label="median |h|", **_ACT),
            Column("rest_mid_abs_p99", label="99th pct |h|", **_ACT),
            Column("text_start", label="starts with"),
        ),
    ),
    Table(
        "prompt_layers",
        "Every prompt, every layer: max |h| of dimension {biggest_dim} and of the median dimension",
        (
            Column("prompt", label="prompt"),
            Column("layer", label="layer"),
            Column("dim_max", label="max |h|", **_ACT),
            Column("rest_dim_max", label="without the first token", **_ACT),
            Column("median_dim_max", label="median dimension", **_ACT),
            Column("rest_median_dim_max", label="median, without the first token", **_ACT),
        ),
    ),
)
VALUES = (
    Value("prompt_tokens", "tokens"),
    Value("prompt_text"),
    Value("hidden", "dimensions"),
    Value("layers", "layers"),
    Value("biggest_dim", **_PICKED),
    Value("biggest_value", **_ACT),
    Value("biggest_layer", **_PICKED),
    Value("biggest_token", **_PICKED),
    Value("biggest_layer_median", **_ACT),
    Value("biggest_at_mid", **_ACT),
    Value("biggest_leads_layers", "layers", **_PICKED),
    Value("biggest_first_lead", **_PICKED),
    Value("biggest_in_top_layers", "layers", **_PICKED),
    Value("median_dim_max_overall", **_ACT),
    Value("mid_layer"),
    Value("mid_median_dim_max", **_ACT),
    Value("mid_top_dim", **_PICKED),
    Value("mid_top_value", **_ACT),
    Value("mid_below_8", "dimensions", **_PICKED),
    Value(
        "mid_gap_bins",
        "bins",
        description="empty bins between the largest dimension's bin and the next occupied bin below it",
        **_PICKED,
    ),
    Value("int8_levels_all", "levels", **_PICKED),
    Value("int8_levels_excluded", "levels", **_PICKED),
    Value("int8_scale_all", **_ACT),
    Value("int8_scale_excluded", **_ACT),
    Value("int8_scale_ratio", "x", **_ACT),
    Value("int8_levels_rest", "levels", **_PICKED),
    Value("int8_ordinary_max_levels_all", "levels", **_PICKED),
    Value("int8_ordinary_min_levels_excluded", "levels", **_PICKED),
    Value("ordinary_dims", **_PICKED),
    Value("int8_scale_rest", **_ACT),
    Value("rest_mid_top_dim", **_PICKED),
    Value("rest_mid_top_value", **_ACT),
    Value("rest_mid_median", **_ACT),
    Value("rest_biggest_leads_layers", "layers", **_PICKED),
    Value("excluded_dims", **_PICKED),
    Value("excluded_count"),
    Value("octaves_spanned", **_ACT),
    Value("mid_abs_median", description="median |h| over every element of the middle layer", **_ACT),
    Value("mid_abs_p99", description="99th percentile of |h| over every element of the middle layer", **_ACT),
    Value("rest_mid_abs_median", description="the same without the first token", **_ACT),
    Value("rest_mid_abs_p99", description="the same without the first token", **_ACT),
    Value("prompts_count", "prompts"),
    Value("book_prompts", "prompts"),
    Value("prompts_lead_dim", description="the dimension that leads most often across prompts", **_PICKED),
    Value("prompts_sharing_lead", "prompts", description="prompts whose leading dimension is that one", **_PICKED),
    Value("rest_prompts_lead_dim", description="the same without the first token", **_PICKED),
    Value("rest_prompts_sharing_lead", "prompts", **_PICKED),
    Value(
        "rest_prompts_most_dim",
        description="without the first token, the dimension most often largest in the most layers",
        **_PICKED,
    ),
    Value("rest_prompts_sharing_most", "prompts", **_PICKED),
    Value(
        "rest_prompts_most_layers_min", "layers", description="the fewest layers it leads in those prompts", **_PICKED
    ),
    Value("prompts_lead_min", description="the smallest leading value over the prompts", **_ACT),
    Value("prompts_lead_max", description="the largest leading value over the prompts", **_ACT),
    Value("prompts_lead_layers_min", "layers", description="the fewest layers a prompt's lead leads", **_PICKED),
    Value("prompts_median_dim_max", description="the highest median dimension's max over the prompts", **_ACT),
    Value("prompts_lead_token0", "prompts", description="prompts whose biggest value is on the first token", **_PICKED),
)
