"""§10: the budget tables recomputed from their own inputs, and the measured check."""

import json

import pytest

from measure.lab.budget import (
    budget_kv_bytes_per_token,
    concurrent_users,
    gib_to_bytes,
    max_resident_tokens,
    weight_bytes,
)
from tests.helpers import table_rows

pytestmark = pytest.mark.smoke  # every test reads the smoke run


def test_budget_rows_follow_from_the_stated_inputs(smoke_data):
    d = smoke_data / "memory_budget"
    models = {r["model"]: r for r in table_rows(d, "models")}
    assumptions = table_rows(d, "assumptions")[0]
    reserve = gib_to_bytes(float(assumptions["reserve_gib"]))
    assert reserve == int(assumptions["reserve_bytes"]) == 3 * 2**29
    context = int(assumptions["context_per_user"])
    budget = table_rows(d, "budget")
    assert len(budget) == len(models) * len(table_rows(d, "precisions")) * len(table_rows(d, "cards"))
    for r in budget:
        m = models[r["model"]]
        kv = budget_kv_bytes_per_token(
            layers=int(m["layers"]),
            kv_heads=int(m["kv_heads"]),
            head_dim=int(m["head_dim"]),
            bytes_per_element=float(m["kv_bytes_per_element"]),
        )
        w = weight_bytes(params=int(m["params"]), bits_per_weight=float(r["weight_bits"]))
        tokens = max_resident_tokens(
            vram_bytes=gib_to_bytes(float(r["card_gib"])), reserve_bytes=reserve, weight_bytes=w, kv_bytes_per_token=kv
        )
        assert int(r["kv_bytes_per_token"]) == kv and int(r["weights_bytes"]) == w
        if tokens is None:
            assert (r["max_tokens"], r["users"], r["verdict"]) == ("", "", "does not fit"), r
            assert int(r["free_bytes"]) < 0
        else:
            assert int(r["max_tokens"]) == tokens and r["verdict"] in ("fits", "no room for the cache")
            assert int(r["users"]) == concurrent_users(max_tokens=tokens, context_per_user=context)


def test_spec_cases_in_the_table(smoke_data):
    d = smoke_data / "memory_budget"
    budget = {(r["card_gib"], r["model"], r["precision"]): r for r in table_rows(d, "budget")}
    assert budget[("24", "7B", "fp16")]["max_tokens"] == "77508"  # worked by hand in test_formulas
    assert budget[("80", "70B", "fp16")]["verdict"] == "does not fit"
    assert budget[("141", "70B", "fp16")]["verdict"] == "fits"
    users = {(r["card_gib"], r["model"], r["precision"]): r for r in table_rows(d, "users_by_context")}
    assert users[("24", "7B", "fp16")]["users_at_131072"] == "0"


def test_measured_model_row_and_formula_check(smoke_data):
    d = smoke_data / "memory_budget"
    tiny = table_rows(d, "models")[-1]
    assert tiny["source"] == "measured model's shape"
    assert int(tiny["kv_bytes_per_token"]) == 2 * 2 * 2 * 16 * 2  # arch:tiny, fp16 cache
    check = table_rows(d, "formula_check")
    assert check and all(r["cache_measured_bytes"] == r["cache_formula_bytes"] for r in check)
    assert {r["logits_kept"] for r in check} == {"last position", "every position"}
    values = json.loads((d / "meta.json").read_text())["values"]
    assert values["check_weights_storage_bytes"]["value"] == values["check_weights_bytes"]["value"]
    assert values["cache_matches_formula"]["value"] is True


def test_configs_windows_and_speed_tables(smoke_data):
    d = smoke_data / "memory_budget"
    configs = table_rows(d, "configs")
    assert all(r["params_agree"] == "true" for r in configs), [
        r["model"] for r in configs if r["params_agree"] != "true"
    ]
    own = configs[-1]  # the run's model: its config against its counted weights
    assert own["reference"] == "its weights counted" and own["params"] == table_rows(d, "models")[-1]["params"]
    windowed = {(r["model"], int(r["context"])): r for r in table_rows(d, "windowed")}
    longest = {r["model"]: int(r["max_position"]) for r in configs if r["max_position"]}
    assert all(context <= longest[model] for model, context in windowed)
    # Mistral-7B at 32,768 tokens, worked by hand: 2 x 8 heads x 128 x 2 bytes x 32 layers
    # x 32,768 = 4 GiB without the window, x 4,096 = 512 MiB with it; 24 GiB - 1.5 GiB -
    # 7,241,732,096 x 2 bytes = 9,674,014,720 bytes free: 2 users, or 18.
    m = windowed[("mistralai/Mistral-7B-v0.1", 32768)]
    assert (int(m["cache_full_bytes"]), int(m["cache_windowed_bytes"])) == (4 * 2**30, 512 * 2**20)
    assert (int(m["users_full"]), int(m["users_windowed"]), float(m["cache_fraction"])) == (2, 18, 0.125)
    for r in windowed.values():
        assert int(r["cache_windowed_bytes"]) <= int(r["cache_full_bytes"])
        assert int(r["users_windowed"]) >= int(r["users_full"])
        assert (int(r["context"]) <= int(r["window"])) == (r["cache_windowed_bytes"] == r["cache_full_bytes"])
    # the floor, by hand: the RTX 4090 (1,008 GB/s), the 7B in fp16 and 8 users at 4,096
    # tokens read 14e9 + 8 x 536,870,912 bytes a step: 18.1497691 ms, 440.776956 tokens/s
    speed = {(r["card"], int(r["users"])): r for r in table_rows(d, "speed_floor")}
    r = speed[("NVIDIA GeForce RTX 4090", 8)]
    assert int(r["bytes_per_step"]) == 18_294_967_296 and r["fits"] == "true"
    assert float(r["step_ms"]) == pytest.approx(18.1497691, rel=1e-8)
    assert float(r["tokens_per_s"]) == pytest.approx(440.776956, rel=1e-8)
    assert speed[("NVIDIA GeForce RTX 4090", 32)]["fits"] == "false"  # 18 fit
    cards = table_rows(d, "card_presets")
    assert len(speed) == 3 * len(cards) and all(c["source"].startswith("https://") for c in cards)
    assert table_rows(d, "calculator_defaults")[0]["card"] in {c["card"] for c in cards}
