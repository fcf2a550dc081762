"""What §6 writes (``site_data/activation_outliers/``): its values, declared once (its
tables in ``tables.py``). The policies are the tables' (see there)."""

from sitedata.policies import EXACT_ON_DEVICE, NUMERIC
from sitedata.schema import Value

# the int8 table's settings, by the key of their values: all of the tensor, without the top
# dimensions, without the first token
SETTINGS = (("all", "one scale"), ("excluded", "top dimensions excluded"), ("rest", "first token excluded"))

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
    *(
        v
        for prefix, what in (
            ("int8_", "the residual stream at the middle layer"),
            ("attention_int8_", "the attention's normalised input at the middle layer"),
            ("inputs_int8_", "the projection input one scale serves worst"),
        )
        for v in (
            *(
                Value(
                    f"{prefix}levels_{k}",
                    "levels",
                    description=f"INT8 levels used, {what}, {s}",
                    policy=EXACT_ON_DEVICE,
                )
                for k, s in SETTINGS
            ),
            *(Value(f"{prefix}scale_{k}", description=f"INT8 step, {what}, {s}", policy=NUMERIC) for k, s in SETTINGS),
            *(
                Value(f"{prefix}ordinary_{m}_{k}", "levels", policy=EXACT_ON_DEVICE)
                for m in ("min", "max")
                for k, _ in SETTINGS
            ),
            Value(
                f"{prefix}scale_ratio", "x", description=f"the step without the top dimensions, {what}", policy=NUMERIC
            ),
            Value(f"{prefix}ordinary_dims", policy=EXACT_ON_DEVICE),
            Value(f"{prefix}excluded_dims", policy=EXACT_ON_DEVICE),
            *(
                Value(
                    f"{prefix}error_{g}",
                    "fraction",
                    description=f"median token's relative error of INT8 with one scale per {g}, {what}",
                    policy=NUMERIC,
                )
                for g in ("tensor", "dimension", "token")
            ),
        )
    ),
    Value("inputs_tensors", "tensors", description="projection inputs captured: distinct inputs x layers"),
    Value("inputs_fewest_tensor", policy=EXACT_ON_DEVICE, words=True),
    Value("inputs_fewest_layer", policy=EXACT_ON_DEVICE),
    Value("inputs_fewest_levels", "levels", policy=EXACT_ON_DEVICE),
    Value("inputs_fewest_dim", policy=EXACT_ON_DEVICE),
    Value("inputs_fewest_token", policy=EXACT_ON_DEVICE),
    Value("inputs_fewest_max", policy=NUMERIC),
    Value("inputs_fewest_median_dim_max", policy=NUMERIC),
    Value("inputs_fewest_ratio", "x", policy=NUMERIC),
    Value(
        "inputs_under_quarter",
        "tensors",
        description="projection inputs left under 64 of 256 levels",
        policy=EXACT_ON_DEVICE,
    ),
    Value(
        "inputs_under_quarter_token0",
        "tensors",
        description="of those, with their largest value on the first token",
        policy=EXACT_ON_DEVICE,
    ),
    Value("inputs_median_levels", "levels", policy=EXACT_ON_DEVICE),
    Value("normalised_fewest_levels", "levels", policy=EXACT_ON_DEVICE),
    Value("normalised_median_levels", "levels", policy=EXACT_ON_DEVICE),
    Value("normalised_max_abs", description="the largest |x| at any input of q/k/v or gate/up", policy=NUMERIC),
    Value("residual_over_normalised", "x", policy=NUMERIC),
    Value("residual_median_levels", "levels", policy=EXACT_ON_DEVICE),
    Value("quarter_levels", "levels"),
    Value("rest_mid_top_dim", policy=EXACT_ON_DEVICE),
    Value("rest_mid_top_value", policy=NUMERIC),
    Value("rest_mid_median", policy=NUMERIC),
    Value("rest_biggest_leads_layers", "layers", policy=EXACT_ON_DEVICE),
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
    Value(
        "prompts_fewest_levels_max",
        "levels",
        description="the most levels a prompt's worst projection input keeps",
        policy=EXACT_ON_DEVICE,
    ),
    Value(
        "prompts_fewest_token0",
        "prompts",
        description="prompts whose worst projection input peaks on the first token",
        policy=EXACT_ON_DEVICE,
    ),
    Value(
        "prompts_fewest_tensor",
        description="the projection input that is most often a prompt's worst",
        policy=EXACT_ON_DEVICE,
        words=True,
    ),
    Value("prompts_sharing_fewest_tensor", "prompts", policy=EXACT_ON_DEVICE),
)
