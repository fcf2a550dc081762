"""The calculator, driven in a real headless browser against the built site.

Debian's chromium (``apt-get install chromium``; .ci/run installs it) is driven by
Playwright with ``executable_path``, so nothing is downloaded. The site is served on
127.0.0.1 from a thread; every request elsewhere (web fonts) is refused.

Checked: for every combination of presets, the calculator's numbers equal the budget
table the site was built from, to the byte and the token; for a grid of typed inputs
they equal measure/lab/formulas.py; each kind of bad input shows its own message next to
its field and no NaN or Infinity ever appears.
"""

from __future__ import annotations

import csv
import functools
import http.server
import random
import threading
from pathlib import Path

import pytest

from measure.lab.budget import (
    budget_kv_bytes_per_token,
    concurrent_users,
    gib_to_bytes,
    max_resident_tokens,
    weight_bytes,
)
from tests.conftest import REPO

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium` (.ci/run does it)"
)
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
OUTPUTS = "els => Object.fromEntries(els.map(e => [e.dataset.out, [e.dataset.value, e.textContent]]))"
FIELDS = ("params", "layers", "kv_heads", "head_dim", "weight_bits", "kv_bytes", "vram_gib", "reserve_gib", "context")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def calculator(built_site):
    from playwright.sync_api import sync_playwright

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(built_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_port}"
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        page = browser.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(origin) else route.abort())
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{origin}/calculator/")
        page.wait_for_selector("form[data-calculator][data-ready='1']", timeout=10_000)
        yield page, errors
        browser.close()
    server.shutdown()
    thread.join(5)


def _csv(name: str) -> list[dict[str, str]]:
    with open(REPO / "site_data" / "memory_budget" / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def _outputs(page) -> dict[str, tuple[str, str]]:
    return page.eval_on_selector_all("form[data-calculator] [data-out]", OUTPUTS)


def _form_text(page) -> str:
    return page.inner_text("form[data-calculator]")


def _no_nan(page) -> None:
    text = _form_text(page)
    assert "NaN" not in text and "Infinity" not in text and "undefined" not in text, text


def test_initialises_on_load_with_the_default_presets(calculator):
    page, errors = calculator
    assert not errors, errors
    assert page.get_attribute("form[data-calculator]", "data-ready") == "1"
    assumptions = _csv("assumptions")[0]
    assert page.input_value("[name=context]") == assumptions["context_per_user"]
    assert float(page.input_value("[name=reserve_gib]")) == float(assumptions["reserve_gib"])
    out = _outputs(page)
    assert out["max_tokens"][0].isdigit() and out["users"][0].isdigit(), out


def test_presets_are_the_site_data_tables(calculator):
    page, _ = calculator
    models = [
        o.split(":")[0] for o in page.eval_on_selector_all("[name=preset_model] option", "o => o.map(x => x.text)")
    ]
    assert models == [r["model"] for r in _csv("models")]
    assert len(page.query_selector_all("[name=preset_precision] option")) == len(_csv("precisions"))
    assert len(page.query_selector_all("[name=preset_card] option")) == len(_csv("cards"))


def test_every_preset_equals_the_budget_table(calculator):
    page, errors = calculator
    models, precisions, cards = _csv("models"), _csv("precisions"), _csv("cards")
    budget = {(r["card_gib"], r["model"], r["precision"]): r for r in _csv("budget")}
    page.fill("[name=reserve_gib]", _csv("assumptions")[0]["reserve_gib"])
    page.fill("[name=context]", _csv("assumptions")[0]["context_per_user"])
    checked = 0
    for i, m in enumerate(models):
        page.select_option("[name=preset_model]", str(i))
        for j, p in enumerate(precisions):
            page.select_option("[name=preset_precision]", str(j))
            for k, c in enumerate(cards):
                page.select_option("[name=preset_card]", str(k))
                row = budget[(c["card_gib"], m["model"], p["precision"])]
                out = _outputs(page)
                where = (c["card_gib"], m["model"], p["precision"])
                assert out["weights"][0] == row["weights_bytes"], where
                assert out["kv_per_token"][0] == row["kv_bytes_per_token"], where
                assert out["free"][0] == row["free_bytes"], where
                status = page.inner_text("[data-status]")
                if row["verdict"] == "does not fit":
                    assert out["max_tokens"] == ["", "does not fit"], where
                    assert out["users"] == ["", "does not fit"], where
                    assert status.startswith("Does not fit"), (where, status)
                else:
                    assert out["max_tokens"][0] == row["max_tokens"], where
                    assert out["users"][0] == row["users"], where
                    assert f"{int(row['max_tokens']):,}" in out["max_tokens"][1], where
                _no_nan(page)
                checked += 1
    assert checked == len(budget) and not errors, errors


def _expected(v: dict[str, str]) -> dict[str, int | None]:
    num = {k: float(s.replace(",", "")) for k, s in v.items()}
    w = weight_bytes(params=num["params"], bits_per_weight=num["weight_bits"])
    kv = budget_kv_bytes_per_token(
        layers=int(num["layers"]),
        kv_heads=int(num["kv_heads"]),
        head_dim=int(num["head_dim"]),
        bytes_per_element=num["kv_bytes"],
    )
    vram, reserve = gib_to_bytes(num["vram_gib"]), gib_to_bytes(num["reserve_gib"])
    tokens = max_resident_tokens(vram_bytes=vram, reserve_bytes=reserve, weight_bytes=w, kv_bytes_per_token=kv)
    users = concurrent_users(max_tokens=tokens, context_per_user=int(num["context"]))
    return {"weights": w, "kv_per_token": kv, "free": vram - reserve - w, "max_tokens": tokens, "users": users}


def _grid(n: int = 40) -> list[dict[str, str]]:
    rng = random.Random(0)
    choices = {
        "params": ["7e9", "7000000000", "1234567891", "70,000,000,000", "500000", "134515008", "4.05e11"],
        "weight_bits": ["16", "8", "4.125", "4.5", "3.3", "1.58", "32"],
        "kv_bytes": ["2", "1", "0.5", "0.3", "4"],
        "vram_gib": ["24", "7.5", "141", "0.25", "80", "1024", "12.3"],
        "reserve_gib": ["1.5", "0", "2.25", "0.7"],
        "context": ["4096", "1000", "131072", "1", "4,096", "32768"],
    }
    shapes = [("32", "8", "128"), ("40", "40", "128"), ("80", "8", "128"), ("1", "1", "1"), ("30", "3", "64")]
    cases = []
    for _ in range(n):
        case = {k: rng.choice(v) for k, v in choices.items()}
        case["layers"], case["kv_heads"], case["head_dim"] = rng.choice(shapes)
        cases.append(case)
    return cases


def _fill(page, case: dict[str, str]) -> None:
    for name in FIELDS:
        page.fill(f"[name={name}]", case[name])


def test_a_grid_of_typed_inputs_equals_the_python_formula(calculator):
    page, errors = calculator
    fits = nofit = 0
    for case in _grid():
        _fill(page, case)
        want = _expected(case)
        out = _outputs(page)
        for key in ("weights", "kv_per_token", "free"):
            assert out[key][0] == str(want[key]), (case, key, out[key], want[key])
        if want["max_tokens"] is None:
            nofit += 1
            assert out["max_tokens"] == ["", "does not fit"], case
            assert page.inner_text("[data-status]").startswith("Does not fit"), case
        else:
            fits += 1
            assert out["max_tokens"][0] == str(want["max_tokens"]), (case, out, want)
            assert out["users"][0] == str(want["users"]), (case, out, want)
        _no_nan(page)
    assert fits and nofit and not errors  # the grid covers both outcomes


VALID = {
    "params": "7e9",
    "layers": "32",
    "kv_heads": "8",
    "head_dim": "128",
    "weight_bits": "16",
    "kv_bytes": "2",
    "vram_gib": "24",
    "reserve_gib": "1.5",
    "context": "4096",
}
BAD = [
    ("params", "", "Parameters: enter a value."),
    ("vram_gib", "   ", "Card memory: enter a value."),
    ("layers", "abc", "Layers must be a number"),
    ("weight_bits", "16bits", "Bits per weight must be a number"),
    ("kv_bytes", "NaN", "KV bytes per element must be a number"),
    ("reserve_gib", "Infinity", "Runtime reserve must be a number"),
    ("params", "1e400", "Parameters is too large to be a number."),
    ("kv_heads", "-8", "Key-value heads cannot be negative."),
    ("reserve_gib", "-1.5", "Runtime reserve cannot be negative."),
    ("head_dim", "0", "Head dimension must be at least 1."),
    ("weight_bits", "0", "Bits per weight must be greater than 0."),
    ("vram_gib", "0", "Card memory must be greater than 0."),
    ("layers", "32.5", "Layers must be a whole number."),
    ("context", "2.5", "Context per user must be a whole number."),
    ("params", "1e15", "Parameters above 10,000,000,000,000 parameters is not a realistic value."),
    ("vram_gib", "1e9", "Card memory above 65,536 GiB is not a realistic value."),
    ("context", "1e12", "Context per user above 100,000,000 tokens is not a realistic value."),
    ("weight_bits", "128", "Bits per weight above 64 bits is not a realistic value."),
]


@pytest.mark.parametrize(("field", "text", "message"), BAD, ids=[f"{f}={t!r}" for f, t, _ in BAD])
def test_bad_input_shows_its_message(calculator, field, text, message):
    page, errors = calculator
    _fill(page, VALID)
    assert page.inner_text("[data-status]").startswith("18 users"), page.inner_text("[data-status]")
    page.fill(f"[name={field}]", text)
    shown = page.inner_text(f"[data-error-for={field}]")
    assert shown.startswith(message), shown
    assert page.get_attribute(f"[name={field}]", "aria-invalid") == "true"
    assert page.get_attribute("[data-status]", "data-state") == "error"
    out = _outputs(page)
    assert all(v == ["", "—"] for v in out.values()), out
    _no_nan(page)
    page.fill(f"[name={field}]", VALID[field])  # corrected: the message goes, the result returns
    assert page.inner_text(f"[data-error-for={field}]") == ""
    assert _outputs(page)["users"][0] == "18" and not errors


def test_a_preset_that_does_not_fit_says_so(calculator):
    page, _ = calculator
    _fill(page, VALID)
    models = [r["model"] for r in _csv("models")]
    cards = [r["card_gib"] for r in _csv("cards")]
    page.select_option("[name=preset_model]", str(models.index("70B")))
    page.select_option("[name=preset_precision]", "0")  # fp16
    page.select_option("[name=preset_card]", str(cards.index("80")))
    status = page.inner_text("[data-status]")
    assert status.startswith("Does not fit: the weights (130.39 GiB)"), status
    assert page.get_attribute("[data-status]", "data-state") == "nofit"
    _no_nan(page)
    page.fill("[name=reserve_gib]", "50")  # int4 weights (33.6 GiB) fit; with this reserve they do not
    page.fill("[name=weight_bits]", "4.125")
    assert page.get_attribute("[data-status]", "data-state") == "nofit"


def test_no_cache_room_and_no_full_user_are_explained(calculator):
    page, _ = calculator
    # 1 GiB card, no reserve, weights 100 bytes short of it: fits, with no room for a token
    _fill(page, {**VALID, "params": str(2**30 - 100), "weight_bits": "8", "vram_gib": "1", "reserve_gib": "0"})
    assert page.get_attribute("[data-status]", "data-state") == "nocache"
    assert _outputs(page)["max_tokens"][0] == "0"
    _fill(page, {**VALID, "context": "131072"})
    assert page.get_attribute("[data-status]", "data-state") == "nouser"
    assert "Not one full context fits" in page.inner_text("[data-status]")
    _no_nan(page)
