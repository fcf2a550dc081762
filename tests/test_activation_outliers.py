"""§6 smoke run (embedded trained model, a short prompt): the statistics agree with each other."""

import json

import pytest

from tests.helpers import table_rows


@pytest.mark.smoke
def test_histogram_counts_every_dimension(smoke_data):
    d = smoke_data / "activation_outliers"
    meta = json.loads((d / "meta.json").read_text())
    hidden = meta["values"]["hidden"]["value"]
    hist = table_rows(d, "histogram")
    assert sum(int(r["dims"]) for r in hist) == hidden
    assert sum(int(r["dims_rest"]) for r in hist) == hidden
    assert float(hist[-1]["bin_high"]) > meta["values"]["mid_top_value"]["value"]


@pytest.mark.smoke
def test_layers_and_int8_are_consistent(smoke_data):
    d = smoke_data / "activation_outliers"
    meta = json.loads((d / "meta.json").read_text())
    v = {k: x["value"] for k, x in meta["values"].items()}
    layers = table_rows(d, "layers")
    assert len(layers) == v["layers"]
    assert all(float(r["top1_max"]) >= float(r["top2_max"]) >= float(r["median_dim_max"]) for r in layers)
    assert v["biggest_value"] == max(float(r["top1_max"]) for r in layers)
    # leaving the largest dimensions out can only shrink the scale
    assert v["int8_scale_excluded"] <= v["int8_scale_all"]
    for r in table_rows(d, "int8"):
        assert 1 <= int(r["ordinary_levels_min"]) <= int(r["ordinary_levels_max"]) <= int(r["levels_used"]) <= 256


def test_the_gap_counts_only_the_octaves_between_the_outlier_and_the_rest():
    from measure.experiments.activation_outliers import _gap_below_top

    dims = [0, 0, 0, 30, 48, 1, 0, 0, 0, 1]  # three empty bins under the heap, three above it
    assert _gap_below_top([{"dims": d} for d in dims]) == 3
    assert _gap_below_top([{"dims": d} for d in [5, 1]]) == 0
    assert _gap_below_top([{"dims": d} for d in [0, 2, 0]]) == 1  # one occupied bin: all below it


def test_percentile_of_a_known_tensor_interpolates_between_order_statistics():
    import torch

    from measure.experiments.activation_outliers.prompts import abs_percentile

    h = torch.arange(1, 101, dtype=torch.float32).reshape(10, 10)
    h[::2] *= -1  # signs must not matter: the percentile is of |h|
    assert abs_percentile(h, 50) == 50.5  # halfway between the 50th and 51st of 100
    assert abs(abs_percentile(h, 99) - 99.01) < 1e-9  # 1 + 0.99 * 99 = 99.01, one hundredth past 99
    assert abs_percentile(h, 100) == 100


def _planted(spike_dim: int, *, layers: int = 4, tokens: int = 5, hidden: int = 8, channel: int | None = None):
    """A residual stream of ones with a spike of 1000 in ``spike_dim`` on the first token
    at every layer, and optionally a steady channel of 10 on every other token."""
    import torch

    hs = torch.ones(layers, tokens, hidden)
    hs[:, 0, spike_dim] = -1000.0
    hs[2, 0, spike_dim] = 2000.0  # the peak, at layer 2
    if channel is not None:
        hs[:, 1:, channel] = 10.0
    return hs


def test_prompt_stats_finds_the_planted_spike_and_the_channel_without_the_first_token():
    from measure.experiments.activation_outliers.prompts import prompt_stats

    s = prompt_stats(_planted(3, channel=5), mid=1)
    assert (s["lead_dim"], s["lead_max"], s["lead_layer"], s["lead_layers"]) == (3, 2000.0, 2, 4)
    assert (s["most_dim"], s["most_layers"]) == (3, 4)
    # without the first token the spike is gone and the steady channel leads every layer
    assert (s["rest_lead_dim"], s["rest_lead_max"], s["rest_lead_layers"]) == (5, 10.0, 4)
    assert (s["rest_most_dim"], s["rest_most_layers"]) == (5, 4)
    assert s["median_dim_max"] == 1.0  # per layer: one dim at 1000 or more, one at 10, six at 1
    assert s["rest_median_dim_max"] == 1.0
    # layer 1 over all tokens: 39 of 40 elements are 1 or 10, one is 1000
    assert s["mid_abs_median"] == 1.0
    assert s["rest_mid_abs_p99"] == 10.0  # a quarter of the 32 elements are 10


def test_agreement_counts_prompts_sharing_the_leading_dimension():
    from measure.experiments.activation_outliers.prompts import agreement, prompt_stats

    leads = [prompt_stats(_planted(d), mid=0)["lead_dim"] for d in (3, 3, 6, 3)]
    assert leads == [3, 3, 6, 3]
    assert agreement(leads) == (3, 3)
    assert agreement([6, 3]) == (6, 1)  # a tie goes to the first one seen


def test_book_passages_start_at_paragraphs_in_different_places():
    from measure.experiments.activation_outliers.prompts import book_passages

    text = "front matter\n\nAlice one.\n\nTwo here.\n\nThree here.\n\nFour here.\n"
    got = book_passages(text, first="Alice", count=3)
    assert [label for label, _ in got] == ["book 0%", "book 33%", "book 66%"]
    assert got[0][1].startswith("Alice one.")
    assert len({p for _, p in got}) == 3
    assert all(p[:1].isalpha() for _, p in got)  # each begins a paragraph, not mid-word


@pytest.mark.smoke
def test_smoke_run_writes_the_prompts_tables(smoke_data):
    d = smoke_data / "activation_outliers"
    meta = json.loads((d / "meta.json").read_text())
    v = {k: x["value"] for k, x in meta["values"].items()}
    prompts = table_rows(d, "prompts")
    assert len(prompts) == v["prompts_count"] == v["book_prompts"] + 2
    assert prompts[0]["prompt"] == "book 0%"
    # the main prompt is the first book passage: its row repeats the page's own numbers
    assert int(prompts[0]["lead_dim"]) == v["biggest_dim"]
    assert float(prompts[0]["lead_max"]) == v["biggest_value"]
    assert float(prompts[0]["mid_abs_p99"]) == v["mid_abs_p99"]
    for r in prompts:
        assert float(r["mid_abs_median"]) <= float(r["mid_abs_p99"]) <= float(r["lead_max"])
        assert 1 <= int(r["lead_layers"]) <= v["layers"]
    assert v["prompts_sharing_lead"] == sum(int(r["lead_dim"]) == v["prompts_lead_dim"] for r in prompts)
    layers = table_rows(d, "prompt_layers")
    assert len(layers) == v["prompts_count"] * v["layers"]


@pytest.mark.smoke
def test_smoke_run_captures_every_projection_input_beside_the_residual_stream(smoke_data):
    d = smoke_data / "activation_outliers"
    meta = json.loads((d / "meta.json").read_text())
    v = {k: x["value"] for k, x in meta["values"].items()}
    rows = table_rows(d, "tensors")
    tensors = list(dict.fromkeys(r["tensor"] for r in rows))
    assert tensors == [
        "residual stream",
        "input of q_proj, k_proj, v_proj",
        "input of o_proj",
        "input of gate_proj, up_proj",
        "input of down_proj",
    ]
    assert len(rows) == 5 * v["layers"] == 5 * v["inputs_tensors"] // 4
    # the residual stream's rows are the layers table's: one capture, two readings
    layers = table_rows(d, "layers")
    residual = [r for r in rows if r["tensor"] == "residual stream"]
    assert [float(r["max_abs"]) for r in residual] == [float(r["top1_max"]) for r in layers]
    # the worst input named by the values is the one with the fewest levels in the table
    inputs = [r for r in rows if r["tensor"] != "residual stream"]
    worst = min(int(r["levels"]) for r in inputs)
    assert v["inputs_fewest_levels"] == worst
    assert any(r["tensor"] == v["inputs_fewest_tensor"] and int(r["layer"]) == v["inputs_fewest_layer"] for r in inputs)
    # the summary sums up the same rows
    summary = {r["tensor"]: r for r in table_rows(d, "tensors_summary")}
    for name in tensors:
        mine = [r for r in rows if r["tensor"] == name]
        assert int(summary[name]["fewest_levels"]) == min(int(r["levels"]) for r in mine)
        assert float(summary[name]["max_abs"]) == max(float(r["max_abs"]) for r in mine)
    # the main prompt's row of the prompts table names the same worst input
    first = table_rows(d, "prompts")[0]
    assert (first["fewest_tensor"], int(first["fewest_levels"])) == (v["inputs_fewest_tensor"], worst)


def _tiny_llama():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=24,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    return LlamaForCausalLM(config).eval()


def test_capture_records_each_distinct_projection_input_once_and_the_shared_ones_are_equal():
    import torch

    from measure.experiments.activation_outliers.capture import INPUTS, capture

    model = _tiny_llama()
    ids = torch.tensor([[1, 5, 9, 2, 7]])
    seen: dict[str, list] = {}
    hooks = [
        module.register_forward_pre_hook(lambda m, a, name=name: seen.setdefault(name, []).append(a[0][0].clone()))
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and ".layers." in name
    ]
    cap = capture(model, ids)
    for h in hooks:
        h.remove()
    assert cap.residual.shape == (2, 5, 16)
    assert {k: tuple(v.shape) for k, v in cap.inputs.items()} == {
        "q_proj, k_proj, v_proj": (2, 5, 16),
        "o_proj": (2, 5, 16),
        "gate_proj, up_proj": (2, 5, 16),
        "down_proj": (2, 5, 24),
    }
    assert [label for label, _ in INPUTS] == list(cap.inputs)
    for layer in range(2):
        at = f"model.layers.{layer}."
        for label, path in INPUTS:
            readers = [f"{at}{path.rsplit('.', 1)[0]}.{p}" for p in label.split(", ")]
            for reader in readers:  # every projection that reads this tensor reads exactly it
                assert torch.equal(seen[reader][0], cap.inputs[label][layer]), reader
    # q/k/v read the residual stream after input_layernorm: RMSNorm of the layer's input
    norm = model.model.layers[1].input_layernorm
    assert torch.allclose(norm(cap.residual[0]), cap.inputs["q_proj, k_proj, v_proj"][1], atol=1e-6)


def test_int8_counts_levels_and_errors_on_a_planted_spike():
    import torch

    from measure.experiments.activation_outliers import int8

    x = torch.ones(4, 6)
    x[:, 1] = torch.tensor([0.5, -0.5, 0.25, 1.0])
    x[0, 3] = 254.0  # a spike on the first token: one tensor-wide step of 2
    step = int8.absmax_step(x, "one per tensor")
    assert float(step) == 2.0
    # codes: 254 / 2 = 127; 1 / 2 rounds to 0 (half to even); everything else to 0 too
    assert int8.levels_used(x, step) == 2
    assert int8.levels_per_layer(torch.stack([x, x * 0 + 1])).tolist() == [2, 1]
    assert int8.levels_per_dimension(int8.codes(x, step)).tolist() == [1, 1, 1, 2, 1, 1]
    # every token but the first loses everything with one scale: its error is 1; the
    # first keeps its spike exactly and loses its ones, sqrt(4 + 0.25) / sqrt(254^2 + 4.25)
    errors = torch.linalg.norm(x - int8.codes(x, step) * step, dim=1) / torch.linalg.norm(x, dim=1)
    assert errors[1:].tolist() == [1.0, 1.0, 1.0]
    assert int8.token_error(x, step) == 1.0  # the median token
    # a scale per token gives each row its own step, 1/127 for the rows of ones: a half or a
    # quarter comes back within half a step, and the median token's error is under 1 %
    assert int8.token_error(x, int8.absmax_step(x, "one per token")) < 0.01
    rows, values = int8.int8_table("t", x, ordinary=1, excluded=1)
    assert [r["levels_used"] for r in rows] == [2, values["levels_excluded"], values["levels_rest"]]
    assert values["excluded_dims"] == "3" and values["scale_all"] == 2.0
    assert values["scale_rest"] == 1.0 / 127  # the largest |x| left is 1
    assert values["scale_ratio"] == 2.0 / (1.0 / 127)


def test_the_worst_input_is_the_one_with_the_fewest_levels_ties_to_the_larger_outlier():
    from measure.experiments.activation_outliers.inputs import fewest

    rows = [
        {"tensor": "a", "layer": 0, "levels": 9, "top_over_median": 50.0},
        {"tensor": "b", "layer": 3, "levels": 3, "top_over_median": 10.0},
        {"tensor": "c", "layer": 1, "levels": 3, "top_over_median": 40.0},
    ]
    assert (fewest(rows)["tensor"], fewest(rows)["layer"]) == ("c", 1)
