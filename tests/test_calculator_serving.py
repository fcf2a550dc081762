"""The calculator's serving questions, in a real browser against the built site (the
harness of tests/test_calculator_browser.py): a shared link restores what it names or
says what it could not; a mixture of experts reads its active parameters, more of its
experts with more users; a missing field blanks only what needs it; several cards split
the weights and the cache; the arithmetic's floor and the time to the first token; a
paste capped before any work; the rules' table in each edition's words without the
script; and the site's measured bandwidths beside the cards' rated ones.

Every expected number is measure/lab/budget.py's, to the last digit of the double."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from measure.lab.budget import (
    cache_bytes_per_user,
    card_share,
    compute_floor_s,
    decode_floor,
    decode_flops,
    expected_distinct_experts,
    gib_to_bytes,
    kv_bytes_per_layer_token,
    params_read_per_step,
    prefill_flops,
    split_free_bytes,
    weight_bytes,
)
from measure.reference.public_configs import PUBLIC_CONFIGS
from tests.conftest import LANGUAGES
from tests.test_calculator_browser import (
    CHROMIUM,
    EDITIONS,
    EN,
    READY,
    VALID,
    Locale,
    _csv,
    _fill,
    _num,
    _outputs,
    _paste,
    _state,
    served,
)

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium`"),
    pytest.mark.browser,
    pytest.mark.build,
]
MIXTRAL = PUBLIC_CONFIGS[5]
CARDS = {r["card"]: r for r in _csv("card_presets")}
H100 = "NVIDIA H100 SXM"


@pytest.fixture(scope="module")
def site(built_site):
    with served(built_site) as s:
        yield s


@pytest.fixture
def page(site):
    """The English page, at its defaults (VALID: those of its fields the page has), and no
    page error after the test."""
    page = site.page("en")
    valid = {k: v for k, v in VALID.items() if page.locator(f"[name={k}]").count()}
    _fill(page, valid)
    yield page
    _fill(page, valid)
    assert not site.errors, site.errors


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def _ms(seconds: float) -> str:
    """A time as an output's data-value holds it: the double, every digit."""
    return repr(seconds * 1e3)


# ---- 1. a shared link ----


def test_a_link_naming_presets_chooses_them_and_sets_their_fields(site):
    query = "?model=mistralai/Mixtral-8x7B-v0.1&precision=int4+g128&card=NVIDIA+H100+SXM"
    page = site.open(site.url("en") + query)
    try:
        want = {"preset_model": MIXTRAL.model, "preset_precision": "int4 g128", "preset_card": H100}
        assert {n: page.input_value(f"[name={n}]") for n in want} == want
        fields = {n: page.input_value(f"[name={n}]") for n in ("params", "weight_bits", "vram_gib", "bandwidth_gb_s")}
        assert fields == {"params": "46702792704", "weight_bits": "4.125", "vram_gib": "80", "bandwidth_gb_s": "3350"}
        assert _outputs(page)["weights"][0] == str(weight_bytes(params=MIXTRAL.published_params, bits_per_weight=4.125))
        assert page.inner_text("[data-link-status]") == "" and _state(page) == "ok"
        # the address still asks the link's question: the same presets, now with their fields
        q = _query(page.url)
        assert (q["model"], q["precision"], q["card"], q["params"]) == (MIXTRAL.model, "int4 g128", H100, "46702792704")
        # a field the link gives otherwise makes its preset one's own, the rest kept
        page.goto(site.url("en") + "?model=7B&params=8000000000")
        page.wait_for_selector(READY)
        assert page.input_value("[name=preset_model]") == "custom"
        assert (page.input_value("[name=params]"), page.input_value("[name=layers]")) == ("8000000000", "32")
    finally:
        page.close()
    assert not site.errors


@pytest.mark.parametrize("lang", ["en", "gl"])
def test_what_a_link_cannot_restore_is_said_and_the_address_kept(site, lang):
    loc_page = site.page(lang)
    loc = Locale.of(loc_page, lang)
    url = site.url(lang) + "?model=7B&card=NVIDIA+H100+PCIe&users=-2"
    page = site.open(url)
    try:
        assert page.locator("[data-link-status]").count() == 1
        line = page.inner_text("[data-link-status]")
        card = page.eval_on_selector("label[for=calc-preset-card]", "l => l.textContent.trim()")
        users = page.eval_on_selector("label[for=calc-users]", "l => l.textContent.trim()")
        items = "; ".join(
            [
                loc.t("{what} “{value}” is no choice of this page", what=card, value="NVIDIA H100 PCIe"),
                loc.t("{what} “{value}”: see the message beside it", what=users, value="-2"),
            ]
        )
        assert line == loc.t(
            "Not restored from this link: {items}. The address keeps the link as it came until you change a value.",
            items=items,
        )
        assert page.url == url  # never rewritten to other values
        assert page.input_value("[name=preset_model]") == "7B" and page.input_value("[name=users]") == "-2"
        # a change is the reader's own: the line goes and the address follows the page again
        page.fill("[name=users]", "3")
        assert page.inner_text("[data-link-status]") == ""
        assert _query(page.url)["users"] == "3" and _query(page.url)["card"] == page.input_value("[name=preset_card]")
    finally:
        page.close()
    assert not site.errors


# ---- 2. a mixture of experts ----


def test_a_mixture_reads_its_active_parameters_and_more_experts_with_more_users(page):
    assert page.locator("[name=experts]").count() == page.locator("[data-out=params_read]").count() == 1
    page.select_option("[name=preset_model]", MIXTRAL.model)
    page.select_option("[name=preset_precision]", "int4 g128")
    page.select_option("[name=preset_card]", H100)
    assert (page.input_value("[name=experts]"), page.input_value("[name=experts_per_token]")) == ("8", "2")
    assert page.input_value("[name=active_params]") == "12879925248"
    per_user = cache_bytes_per_user(
        layer_token_bytes=kv_bytes_per_layer_token(kv_heads=8, head_dim=128, bytes_per_element=2),
        layers=32,
        windowed_layers=0,
        window=0,
        context=4096,
    )
    mixture = dict(params=46_702_792_704, active_params=12_879_925_248, experts=8, experts_per_token=2)
    for users in (1, 8):
        _fill(page, {"users": str(users)})
        out = _outputs(page)
        # the memory holds every parameter
        assert out["weights"][0] == str(weight_bytes(params=46_702_792_704, bits_per_weight=4.125))
        read = params_read_per_step(**mixture, tokens=users)
        assert float(out["params_read"][0]) == read
        floor = decode_floor(
            weight_bytes=weight_bytes(params=read, bits_per_weight=4.125),
            cache_bytes_per_user=per_user,
            users=users,
            bandwidth_gb_s=3350,
        )
        assert out["step_read_ms"][0] == _ms(floor["step_s"]), (users, out["step_read_ms"])
    # 8 users' tokens pick 8 x (1 - 0.75^8) = 7.199 distinct experts a layer, under uniform routing
    assert expected_distinct_experts(experts=8, experts_per_token=2, tokens=8) == 7.1990966796875
    assert out["params_read"][1].endswith("the shared ones, and 7.20 of the 8 experts of each layer on average")
    # one user reads the 12.9 B a token reads, not the 46.7 B the card holds
    _fill(page, {"users": "1"})
    assert _outputs(page)["params_read"][0] == "12879925248"
    every = (weight_bytes(params=46_702_792_704, bits_per_weight=4.125) + per_user) / 3350e9 * 1e3
    assert float(_outputs(page)["step_read_ms"][0]) < every / 3


def test_a_mixtures_counts_must_agree(page):
    _fill(page, {"active_params": "3e9"})  # fewer read than held, and no experts
    assert page.inner_text("[data-error-for=experts]").startswith("Experts per layer: a model that reads fewer")
    _fill(page, {"experts": "8", "experts_per_token": "9"})
    assert page.inner_text("[data-error-for=experts_per_token]") == (
        "Experts per token cannot be more than the experts per layer (8)."
    )
    _fill(page, {"active_params": "8e9", "experts_per_token": "2"})
    assert page.inner_text("[data-error-for=active_params]") == (
        "Parameters read per token cannot be more than the parameters (7,000,000,000)."
    )


# ---- 3. a missing field blanks only what needs it ----


def test_a_config_without_intermediate_size_still_gives_the_cache(page):
    config = {k: v for k, v in MIXTRAL.config.items() if k != "intermediate_size"}
    got = _paste(page, config)
    assert got["state"] == "partial" and "intermediate_size is missing" in got["text"]
    out = _outputs(page)
    assert out["kv_per_token"][0] == str(2 * 32 * 8 * 128 * 2)  # needs no parameter count
    assert out["cache_per_user"][0] == str(2 * 32 * 8 * 128 * 2 * 4096)
    assert out["weights"] == out["free"] == out["step_ms"] == ["", "—"]
    assert page.inner_text("[data-status]") == "Fix the highlighted field: Parameters."
    # a mixture whose picked count is missing keeps its size; only the speed waits for it
    _paste(page, {k: v for k, v in MIXTRAL.config.items() if k != "num_experts_per_tok"})
    out = _outputs(page)
    assert page.input_value("[name=experts]") == "8" and page.input_value("[name=experts_per_token]") == ""
    assert out["weights"][0] and out["free"][0] and out["step_read_ms"] == ["", "—"], out
    _paste(page, "")


# ---- 4. several cards ----


def test_several_cards_split_the_weights_and_the_cache(page):
    page.select_option("[name=preset_model]", "70B")
    page.select_option("[name=preset_precision]", "fp16")
    page.select_option("[name=preset_card]", H100)
    assert _state(page) == "nofit"  # 140 GB of weights on one 80 GiB card
    _fill(page, {"cards": "2"})
    per_user = 2 * 80 * 8 * 128 * 2 * 4096
    free = split_free_bytes(
        card_bytes=gib_to_bytes(80), reserve_bytes=gib_to_bytes(1.5), weight_bytes=140_000_000_000, cards=2
    )
    out = _outputs(page)
    assert out["weights"][0] == "140000000000" and out["weights"][1].endswith("; 65.2 GiB on each card")
    assert out["free"][0] == str(free) and out["users_fit"][0] == str(free // per_user)
    floor = decode_floor(weight_bytes=140_000_000_000, cache_bytes_per_user=per_user, users=8, bandwidth_gb_s=3350 * 2)
    assert out["step_read_ms"][0] == _ms(floor["step_s"])
    compute = compute_floor_s(
        flops=decode_flops(
            active_params=70e9, heads=64, head_dim=128, layers=80, windowed_layers=0, window=0, context=4096, users=8
        ),
        peak_tflops=989.5,
        cards=2,
    )
    assert out["step_compute_ms"][0] == _ms(compute)
    # the bar is one card: its share of the weights and of the served users' cache
    parts = page.eval_on_selector_all(
        "[data-bar] [data-part]", "els => els.map(e => [e.dataset.part, e.dataset.bytes])"
    )
    parts = {k: int(v) for k, v in parts}
    assert parts["weights"] == card_share(total_bytes=140_000_000_000, cards=2) == 70_000_000_000
    assert parts["cache"] == card_share(total_bytes=8 * per_user, cards=2)
    assert sum(parts.values()) == gib_to_bytes(80) and _state(page) == "ok"


# ---- 5. the arithmetic's floor and the first token ----


def test_the_arithmetic_and_the_first_token_equal_python(page):
    out = _outputs(page)  # VALID: the 7B in fp16, 8 users at 4,096, 1,008 GB/s, 165.2 TFLOP/s
    seven = dict(heads=32, head_dim=128, layers=32, windowed_layers=0, window=0)
    compute = compute_floor_s(
        flops=decode_flops(active_params=7e9, **seven, context=4096, users=8), peak_tflops=165.2, cards=1
    )
    read = decode_floor(weight_bytes=14_000_000_000, cache_bytes_per_user=131_072 * 4096, users=8, bandwidth_gb_s=1008)
    assert out["step_compute_ms"][0] == _ms(compute) and out["step_read_ms"][0] == _ms(read["step_s"])
    assert out["step_ms"][0] == _ms(max(compute, read["step_s"])) == out["step_read_ms"][0]
    # the prompt: the whole context when left empty, or as typed
    for prompt, tokens in (("", 4096), ("1000", 1000)):
        _fill(page, {"prompt": prompt})
        prefill = compute_floor_s(
            flops=prefill_flops(active_params=7e9, **seven, tokens=tokens), peak_tflops=165.2, cards=1
        )
        written = decode_floor(
            weight_bytes=weight_bytes(params=7e9, bits_per_weight=16),
            cache_bytes_per_user=131_072 * tokens,
            users=1,
            bandwidth_gb_s=1008,
        )
        assert _outputs(page)["first_token_ms"][0] == _ms(max(prefill, written["step_s"])), prompt
    _fill(page, {"prompt": "5000"})
    assert page.inner_text("[data-error-for=prompt]") == (
        "Prompt cannot be longer than the context per user (4,096 tokens)."
    )
    # many users of short contexts: the arithmetic sets the step
    _fill(page, {"prompt": "", "weight_bits": "4.125", "vram_gib": "80", "bandwidth_gb_s": "3350"})
    _fill(page, {"peak_tflops": "989.5", "context": "128", "users": "512"})
    out = _outputs(page)
    assert float(out["step_compute_ms"][0]) > float(out["step_read_ms"][0])
    assert out["step_ms"][0] == out["step_compute_ms"][0] and _state(page) == "ok"
    assert out["tokens_per_s"][1] == f"{_num(EN, float(out['tokens_per_s'][0]))} tokens/s"
    # no peak: no arithmetic's floor, the step is the reading one, and the first token says so
    page.select_option("[name=preset_card]", "NVIDIA GeForce RTX 4060")
    assert page.input_value("[name=peak_tflops]") == "" and CARDS["NVIDIA GeForce RTX 4060"]["peak_tflops"] == ""
    _fill(page, {"vram_gib": "80"})
    out = _outputs(page)
    assert out["step_compute_ms"] == ["", "no peak given"] and out["step_ms"][0] == out["step_read_ms"][0]
    assert out["first_token_ms"][1].endswith(", reading only: no peak given")


# ---- 6. a paste is capped before any work ----

WATCH = """() => {
  window.__longest = 0;
  const from = Array.from;
  Array.from = function (x, ...rest) {
    if (x && x.length > window.__longest) window.__longest = x.length;
    return from.call(this, x, ...rest);
  };
}"""
PASTE = """([make, n]) => {
  const box = document.querySelector("[name=config]");
  box.value = make === "a" ? "a".repeat(n) : make.replace("@", "\\u{1F600}".repeat(n));
  const t0 = performance.now();
  box.dispatchEvent(new Event("input", { bubbles: true }));
  return performance.now() - t0;
}"""


def test_a_paste_over_one_megabyte_is_refused_before_any_work(page):
    page.evaluate(WATCH)
    status = "[data-config-status]"
    for n in (1_000_001, 10_000_000):
        page.evaluate(PASTE, ["a", n])
        assert page.get_attribute(status, "data-state") == "error"
        want = "This text is longer than 1 MB, and a config.json is a few kilobytes: nothing of it was read."
        assert page.inner_text(status) == want
    # 999,000 bytes of emoji in model_type: read, and nothing splits the whole name
    config = json.dumps({**PUBLIC_CONFIGS[1].config, "model_type": "@"})
    page.evaluate(PASTE, [config, 249_750 - len(config) // 4])
    assert page.get_attribute(status, "data-state") == "partial"
    assert len(page.inner_text(status)) < 1000
    # a text that stops being JSON after a long line: where, found in one pass
    page.evaluate(PASTE, ['{"model_type": "@', 200_000])
    assert page.inner_text(status) == "This is not valid JSON: it ends at line 1, column 200,017 before it is complete."
    assert page.evaluate("() => window.__longest") < 1000
    _paste(page, "")


# ---- 7. the rules' table in each edition's words, without the script ----


def _rule_rows(page) -> dict[str, list[str]]:
    """The rules' table, its two halves joined on the model_type that starts each row."""
    halves = page.eval_on_selector_all(
        '[data-table="memory_budget.architectures"] table:not([class]) > tbody',
        "ts => ts.map(t => Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.textContent)))",
    )
    rows = {row[0]: row[1:] for row in halves[0]}
    for half in halves[1:]:
        for row in half:
            rows[row[0]] += row[1:]
    return rows


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_rules_table_is_in_the_editions_words_as_built(site, lang):
    from sitekit.language import i18n

    def words(message: str, **fields) -> str:
        found = message if lang == "en" else i18n.translations(lang)[(None, message)]
        return found.format(**fields)

    context = site.browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(site.origin) else r.abort())
        page.goto(site.url(lang))
        assert page.get_attribute("form[data-calculator]", "data-ready") is None  # no script ran
        rows = _rule_rows(page)
    finally:
        context.close()
    # model_type, norms, q/k norm, q k v bias, output bias | tied by default, layers with the window
    assert rows["mistral"][5] == words("every layer") and rows["llama"][5] == words("no layer")
    assert rows["gemma2"][5] == words("every other layer")
    assert rows["gemma3_text"][5] == words("all but one in every {field}", field="sliding_window_pattern")
    assert rows["qwen2"][5] == words(
        "from layer {field} on, if {flag}", field="max_window_layers", flag="use_sliding_window"
    )
    assert rows["llama"][2] == words("as {field} says", field="attention_bias")
    assert rows["qwen2"][2] == words("yes")
    # one word for no, whether the data holds a code or a boolean (cs: "ne", never "no" beside it)
    assert rows["mistral"][2] == rows["mistral"][1] == rows["mistral"][4] == words("no")
    if lang != "en":
        # no code of the data is left as it is ("no" is Spanish and Italian for no)
        codes = {"yes", "no", "all", "none", "alternate", "pattern", "qwen2"} - {words("yes"), words("no")}
        assert not [c for r in rows.values() for c in r if c in codes or c.endswith(" says")]


# ---- 8. measured bandwidths beside the rated ----


@pytest.mark.parametrize("lang", ["en", *LANGUAGES[:1]])
def test_the_sites_measured_bandwidths_are_offered_beside_the_rated(site, lang):
    page = site.page(lang)
    loc = Locale.of(page, lang)
    runs = _csv_runs()
    options = page.eval_on_selector_all("[name=bandwidth_from] option", "o => o.map(x => [x.value, x.textContent])")
    assert [v for v, _ in options] == ["rated", *(f"run:{r['run']}" for r in runs), "custom"]
    assert options[0][1] == loc.t("rated: the card's datasheet figure")
    for (_, label), run in zip(options[1:], runs, strict=False):
        shown = loc.unit(_num(loc, float(run["start_bandwidth_gb_s"])), "GB/s")
        assert label.startswith(loc.t("measured: {machine}, run of {date} ({bandwidth})").split("{")[0]), label
        assert label.endswith(f"({shown})") and run["run"][:4] in label, label
    card = page.eval_on_selector("[name=preset_card] option", "o => o.textContent")
    assert card.endswith(loc.t("{card} ({memory}, {bandwidth} rated)").split("{bandwidth}")[1]), card
    # a measured bandwidth sets the field, and the floor divides by it
    _fill(page, loc.valid())
    page.select_option("[name=preset_card]", H100)
    page.select_option("[name=bandwidth_from]", f"run:{runs[0]['run']}")
    measured = loc.number(page.input_value("[name=bandwidth_gb_s]"))  # the page's data, to ten decimals
    assert measured == pytest.approx(float(runs[0]["start_bandwidth_gb_s"]), rel=1e-9)
    floor = decode_floor(
        weight_bytes=14_000_000_000, cache_bytes_per_user=131_072 * 4096, users=8, bandwidth_gb_s=measured
    )
    assert _outputs(page)["step_read_ms"][0] == _ms(floor["step_s"])
    assert page.input_value("[name=preset_card]") == H100  # the card's memory is still the card's
    # another card brings its rated bandwidth back
    page.select_option("[name=preset_card]", "NVIDIA L40S")
    assert page.input_value("[name=bandwidth_from]") == "rated"
    assert loc.number(page.input_value("[name=bandwidth_gb_s]")) == float(CARDS["NVIDIA L40S"]["bandwidth_gb_s"])
    _fill(page, loc.valid())
    assert not site.errors


def _csv_runs() -> list[dict[str, str]]:
    import csv

    from sitedata.runs import runs
    from tests.conftest import REPO

    found = []
    for folder in dict.fromkeys(run.root for run in runs(REPO / "site_data")):  # every run's calibration, primary first
        with open(folder / "calibration" / "runs.csv", newline="") as f:
            found += [r for r in csv.DictReader(f) if r["start_bandwidth_gb_s"]]
    return found
