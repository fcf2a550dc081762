"""The calculator, driven in a real headless browser against the built site.

Debian's chromium (``apt-get install chromium``; .ci/run installs it) is driven by
Playwright with ``executable_path``, so nothing is downloaded. The site is served on
127.0.0.1 from a thread; every request elsewhere (web fonts) is refused. One browser;
each edition's page (/calculator/, /gl/calculator/...) is opened once and reused.

Checked: for every combination of presets, the calculator's numbers equal the budget
table the site was built from, to the byte and the token, in every edition; for a grid
of typed inputs they equal measure/lab/budget.py; every pasted public config gives its
published parameter count and the shape Python derives, messages included; a sliding
window gives the hand-worked budget; the decode floor equals Python's to the last digit;
the URL reproduces the state; each kind of bad input shows its own message next to its
field and no NaN or Infinity ever appears. Each edition writes and reads numbers with
its page's separators (the build's locale element): a decimal comma is a decimal comma,
a group is accepted only where it groups in threes, and a separator that could mean two
numbers is refused with a message saying how to write each; the messages are the
element's translations.
"""

from __future__ import annotations

import csv
import functools
import http.server
import json
import random
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from measure.lab.budget import (
    budget_kv_bytes_per_token,
    cache_bytes_per_user,
    decode_floor,
    gib_to_bytes,
    kv_bytes_per_layer_token,
    longest_context,
    users_at_context,
    weight_bytes,
)
from measure.lab.model_config import shape_from_config
from measure.reference.public_configs import PUBLIC_CONFIGS
from tests.conftest import LANGUAGES, REPO

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: `apt-get install chromium` (.ci/run does it)"
    ),
    pytest.mark.browser,
    pytest.mark.build,  # the calculator of the built site
]
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-ipc-flooding-protection",  # every input rewrites the address: no throttling of history.replaceState
]
EDITIONS = ("en", *LANGUAGES)
NBSP = "\u00a0"
READY = "form[data-calculator][data-ready='1']"
OUTPUTS = "els => Object.fromEntries(els.map(e => [e.dataset.out, [e.dataset.value, e.textContent]]))"
# Sets fields as typing does: each field's value, then its input (a select's change) event.
FILL = """(form, values) => {
  for (const [name, text] of Object.entries(values)) {
    const el = form.querySelector(`[name="${name}"]`);
    el.value = text;
    el.dispatchEvent(new Event(el.tagName === "SELECT" ? "change" : "input", { bubbles: true }));
  }
}"""
FIELDS = (
    "params",
    "active_params",
    "experts",
    "experts_per_token",
    "layers",
    "heads",
    "kv_heads",
    "head_dim",
    "window",
    "windowed_layers",
    "max_context",
    "weight_bits",
    "vram_gib",
    "bandwidth_gb_s",
    "peak_tflops",
    "cards",
    "reserve_gib",
    "context",
    "prompt",
    "users",
)
# The calculator's messages that tests look for, by their English text
OK = "Users that fit at {context} each: {fit}. Users served: {users}; a decode step can take no less than {step}."
NOFIT = "Does not fit: the weights ({weights}) and the reserve ({reserve}) need more than the card's {card}."
AMBIGUOUS = "{text} is ambiguous here: write {decimal} for a decimal number, or {whole} for a whole number."
WRITE_IT = "{text} is not written this way here: write {number}."
BITS_RANGE = "Bits per weight must be between 1 (a binary weight) and 32 bits (fp32)."


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        pass  # a page closed while a file was on its way


@dataclass
class Locale:
    """An edition's number format and messages, as its page's locale element gives them."""

    lang: str
    decimal: str
    group: str
    messages: dict[str, str] = field(default_factory=dict)
    min_grouping: int = 1  # CLDR: Spanish groups only from five digits on

    @classmethod
    def of(cls, page, lang: str) -> Locale:
        data = json.loads(page.text_content("script[data-calculator-locale]"))
        assert data["locale"] == lang, data["locale"]
        return cls(lang, data["decimal"], data["group"], data["messages"], data.get("min_grouping", 1))

    def _short(self, english: str) -> str:
        """An English-grouped number without its groups where this locale writes it whole."""
        whole = english.split(".")[0].lstrip("-").replace(",", "")
        return english.replace(",", "") if len(whole) < 3 + self.min_grouping else english

    @property
    def space(self) -> str:
        """Between a number and its unit."""
        return " " if self.lang == "en" else NBSP

    def t(self, message: str, **values) -> str:
        assert message in self.messages, f"{message!r} is not among the page's messages"
        text = self.messages[message] or message
        for name, value in values.items():
            text = text.replace("{" + name + "}", str(value))
        return text

    def typed(self, english: str) -> str:
        """A number typed in English ("8,192.5") as this page's reader types it."""
        return english.translate({ord(","): self.group, ord("."): self.decimal})

    def integer(self, n) -> str:
        return self.typed(self._short(f"{int(n):,}"))

    def fixed(self, x: float, digits: int) -> str:
        return self.typed(self._short(f"{x:,.{digits}f}"))

    def valid(self) -> dict[str, str]:
        """VALID as this page's reader types it."""
        return {k: v if k == "cache" else self.typed(v) for k, v in VALID.items()}

    def unit(self, number: str, unit: str) -> str:
        return number + self.space + unit

    def number(self, text: str) -> float:
        for g in {self.group, " ", NBSP, "\u202f"} if self.group.isspace() else {self.group}:
            text = text.replace(g, "")
        return float(text.replace(self.decimal, "."))


EN = Locale("en", ".", ",")  # the English page's format, for expected texts


class Site:
    """The built site served on 127.0.0.1 and one browser: a page per edition, opened once."""

    def __init__(self, origin: str, browser, root: Path) -> None:
        self.origin, self.browser, self.root = origin, browser, root
        self.errors: list[str] = []
        self.pages: dict[str, object] = {}

    def url(self, lang: str) -> str:
        return f"{self.origin}/calculator/" if lang == "en" else f"{self.origin}/{lang}/calculator/"

    def open(self, url: str, rewrite=None):
        """A new page at ``url``; ``rewrite(html)`` changes the page's HTML as it arrives."""
        page = self.browser.new_page()
        origin = self.origin
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(origin) else route.abort())
        page.route("**/search/search_index.json", self._no_documents)
        if rewrite:

            def fulfil(route):
                response = route.fetch()
                route.fulfill(response=response, body=rewrite(response.text()))

            page.route(url, fulfil)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.goto(url)
        page.wait_for_selector(READY, timeout=10_000)
        return page

    def _no_documents(self, route) -> None:
        """An edition's search index with its settings and no documents: the theme's
        search worker starts as it would, without indexing every page of the edition on
        every page opened (a tenth of the browser's work in these tests, and none of theirs)."""
        path = self.root / route.request.url.removeprefix(self.origin + "/")
        index = json.loads(path.read_text(encoding="utf-8"))
        route.fulfill(json={"config": index["config"], "docs": []})

    def page(self, lang: str):
        if lang not in self.pages:
            self.pages[lang] = self.open(self.url(lang))
        return self.pages[lang]


@contextmanager
def served(built_site: Path) -> Iterator[Site]:
    """The built site on 127.0.0.1 and one headless chromium (another test module's too)."""
    from playwright.sync_api import sync_playwright

    server = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(built_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield Site(f"http://127.0.0.1:{server.server_port}", browser, built_site)
        browser.close()
    server.shutdown()
    thread.join(5)


@pytest.fixture(scope="module")
def site(built_site):
    with served(built_site) as s:
        yield s


@pytest.fixture
def calculator(site):
    """The English page and the pages' errors."""
    return site.page("en"), site.errors


@pytest.fixture(params=EDITIONS)
def edition(site, request):
    """An edition's page, its locale and the pages' errors."""
    page = site.page(request.param)
    return page, Locale.of(page, request.param), site.errors


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


# A number written as no result can be: a zero with a minus sign, or more digits and
# separators in a row than 2^53 bytes with its groups and two decimals.
MINUS_ZERO = re.compile(r"(?<![\w.,])-0(?:[.,]0+)?(?![\d.,])")
TOO_LONG = re.compile(r"\d[\d.,\u00a0\u202f]{24,}")


def _no_noise(page) -> None:
    _no_nan(page)
    text = _form_text(page)
    assert not MINUS_ZERO.search(text) and not TOO_LONG.search(text), text


def _label(page, name: str) -> str:
    """A field's name as its page writes it: the label's text, less its symbol in <i>."""
    return page.eval_on_selector(
        f"label[for=calc-{name}]",
        "l => { const c = l.cloneNode(true); c.querySelectorAll('i').forEach(i => i.remove());"
        " return c.textContent.replace(/\\s+/g, ' ').trim(); }",
    )


def _state(page) -> str:
    return page.get_attribute("[data-status]", "data-state")


def _fill(page, case: dict[str, str]) -> None:
    page.eval_on_selector("form[data-calculator]", FILL, case)


def _paste(page, config) -> dict:
    page.fill("[name=config]", config if isinstance(config, str) else json.dumps(config))
    return {
        "state": page.get_attribute("[data-config-status]", "data-state"),
        "text": page.inner_text("[data-config-status]"),
        "shape": json.loads(page.get_attribute("[data-config-status]", "data-shape") or "null"),
    }


def _python(lang: str, kind: str, x: float) -> str:
    """x as the site's tables write it in ``lang`` (sitekit/language/formatting.py): kind
    "num", a measurement; "iec", bytes with their IEC unit."""
    from sitekit.language import formatting

    formatting.set_locale(lang)
    try:
        return formatting.iec(x) if kind == "iec" else formatting.format_value(x, style="num")
    finally:
        formatting.set_locale("en")


def _iec(loc: Locale, nbytes: int) -> str:
    """Bytes as the calculator writes them: the tables' number and unit, the page's space."""
    number, unit = _python(loc.lang, "iec", nbytes).rsplit(NBSP, 1)
    return loc.unit(number, unit)


def _num(loc: Locale, x: float) -> str:
    return _python(loc.lang, "num", x)


CACHE_BYTES = {r["precision"]: float(r["kv_bytes_per_element"]) for r in _csv("cache_precisions")}
FP16_CACHE = "fp16 / bf16"


def test_initialises_on_load_with_the_defaults(edition):
    page, loc, errors = edition
    assert not errors, errors
    assert page.get_attribute("form[data-calculator]", "data-ready") == "1"
    assumptions, defaults = _csv("assumptions")[0], _csv("calculator_defaults")[0]
    # the fields hold the defaults as the page writes numbers: 1.5 is "1,5" on a decimal-comma page
    assert page.input_value("[name=context]") == assumptions["context_per_user"]
    assert page.input_value("[name=reserve_gib]") == loc.typed(str(float(assumptions["reserve_gib"])))
    assert loc.number(page.input_value("[name=reserve_gib]")) == float(assumptions["reserve_gib"])
    assert page.input_value("[name=users]") == defaults["users_served"]
    assert page.input_value("[name=preset_card]") == defaults["card"]
    assert CACHE_BYTES[page.input_value("[name=cache]")] == float(assumptions["kv_bytes_per_element"])
    out = _outputs(page)
    assert out["max_tokens"][0].isdigit() and out["users_fit"][0].isdigit(), out
    assert all(text.strip() and text != "—" for _, text in out.values()), out
    _no_nan(page)
    # every number in the page's format: 14e9 bytes of weights, 13.04 GiB
    weights = int(out["weights"][0])
    bytes_word = loc.t("bytes")
    size, exact = _iec(loc, weights), loc.unit(loc.integer(weights), bytes_word)
    assert out["weights"][1] == f"{size} ({exact})"
    assert loc.group in out["weights"][1]
    context = loc.unit(loc.integer(assumptions["context_per_user"]), loc.t("tokens"))
    assert out["max_tokens"][1] == loc.unit(loc.integer(out["max_tokens"][0]), loc.t("tokens"))
    assert out["step_ms"][1] == loc.unit(_num(loc, float(out["step_ms"][0])), "ms")
    # the status is the element's translation of its message
    assert page.get_attribute("[data-status]", "data-state") == "ok"
    fit, users = loc.integer(out["users_fit"][0]), defaults["users_served"]
    want = loc.t(OK, context=context, fit=fit, users=users, step=out["step_ms"][1])
    assert page.inner_text("[data-status]") == want


def test_presets_are_the_site_data_tables(calculator):
    page, _ = calculator

    def options(name):
        return page.eval_on_selector_all(f"[name={name}] option", "o => o.map(x => x.value)")

    published = [r["model"] for r in _csv("configs") if r["reference"] == "published"]
    assert options("preset_model") == [r["model"] for r in _csv("models")] + published + ["custom"]
    assert options("preset_precision") == [r["precision"] for r in _csv("precisions")] + ["custom"]
    assert options("cache") == [r["precision"] for r in _csv("cache_precisions")]
    assert options("preset_card") == [r["card"] for r in _csv("card_presets")] + ["custom"]


def test_every_preset_equals_the_budget_table(edition):
    page, loc, errors = edition
    models, precisions, cards = _csv("models"), _csv("precisions"), _csv("cards")
    budget = {(r["card_gib"], r["model"], r["precision"]): r for r in _csv("budget")}
    assumptions = _csv("assumptions")[0]
    _fill(page, {"reserve_gib": loc.typed(assumptions["reserve_gib"]), "context": assumptions["context_per_user"]})
    page.select_option("[name=cache]", FP16_CACHE)
    does_not_fit = loc.t("does not fit")
    nofit_status = loc.t(NOFIT).split("{")[0]
    checked = 0
    for m in models:
        page.select_option("[name=preset_model]", m["model"])
        for p in precisions:
            page.select_option("[name=preset_precision]", p["precision"])
            assert loc.number(page.input_value("[name=weight_bits]")) == float(p["weight_bits"])
            for c in cards:
                page.fill("[name=vram_gib]", loc.typed(c["card_gib"]))
                row = budget[(c["card_gib"], m["model"], p["precision"])]
                out = _outputs(page)
                where = (c["card_gib"], m["model"], p["precision"])
                assert out["weights"][0] == row["weights_bytes"], where
                assert out["kv_per_token"][0] == row["kv_bytes_per_token"], where
                assert out["free"][0] == row["free_bytes"], where
                status = page.inner_text("[data-status]")
                if row["verdict"] == "does not fit":
                    assert out["max_tokens"] == ["", does_not_fit], where
                    assert out["users_fit"] == ["", does_not_fit], where
                    assert status.startswith(nofit_status), (where, status)
                else:
                    assert out["max_tokens"][0] == row["max_tokens"], where
                    assert out["users_fit"][0] == row["users"], where
                    assert loc.integer(row["max_tokens"]) in out["max_tokens"][1], where
                    assert out["free"][1] == _iec(loc, int(row["free_bytes"])), where
                _no_nan(page)
                checked += 1
    assert checked == len(budget) and not errors, errors


def _expected(v: dict[str, str]) -> dict[str, int | None]:
    num = {k: float(s.replace(",", "")) if s.strip() else 0.0 for k, s in v.items() if k != "cache"}
    kv_bytes = CACHE_BYTES[v["cache"]]
    layers, kv_heads, head_dim = int(num["layers"]), int(num["kv_heads"]), int(num["head_dim"])
    window, windowed = int(num["window"]), int(num["windowed_layers"])
    w = weight_bytes(params=num["params"], bits_per_weight=num["weight_bits"])
    kv = budget_kv_bytes_per_token(layers=layers, kv_heads=kv_heads, head_dim=head_dim, bytes_per_element=kv_bytes)
    layer_token = kv_bytes_per_layer_token(kv_heads=kv_heads, head_dim=head_dim, bytes_per_element=kv_bytes)
    shape = dict(layer_token_bytes=layer_token, layers=layers, windowed_layers=windowed, window=window)
    per_user = cache_bytes_per_user(**shape, context=int(num["context"]))
    free = gib_to_bytes(num["vram_gib"]) - gib_to_bytes(num["reserve_gib"]) - w
    users = int(num["users"])
    floor = decode_floor(
        weight_bytes=w, cache_bytes_per_user=per_user, users=users, bandwidth_gb_s=num["bandwidth_gb_s"]
    )
    return {
        "weights": w,
        "kv_per_token": kv,
        "cache_per_user": per_user,
        "free": free,
        "max_tokens": longest_context(free_bytes=free, **shape) if free >= 0 else "nofit",
        "users_fit": users_at_context(free_bytes=free, cache_bytes=per_user),
        "step_ms": floor["step_s"] * 1e3,
        "tokens_per_s_per_user": floor["tokens_per_s_per_user"],
        "tokens_per_s": floor["tokens_per_s"],
        "short": _short(free, per_user, users),
    }


def _short(free: int, per_user: int, users: int) -> int | None:
    """By how much a setup does not fit: the weights and the reserve, one user's cache, or
    the cache of all the users served; None when it fits."""
    if free < 0:
        return -free
    if per_user > free:
        return per_user - free
    return users * per_user - free if users * per_user > free else None


def _grid(n: int = 40) -> list[dict[str, str]]:
    rng = random.Random(0)
    choices = {
        "params": ["7e9", "7000000000", "1234567891", "70,000,000,000", "500000", "134515008", "4.05e11"],
        "weight_bits": ["16", "8", "4.125", "4.5", "3.3", "1.58", "32"],
        "cache": list(CACHE_BYTES),
        "vram_gib": ["24", "7.5", "141", "0.25", "80", "1024", "12.3"],
        "bandwidth_gb_s": ["1008", "272", "3350", "0.5", "4,800", "1e3"],
        "reserve_gib": ["1.5", "0", "2.25", "0.7"],
        "context": ["4096", "1000", "131072", "1", "4,096", "32768"],
        "users": ["1", "8", "33", "1,000"],
    }
    # layers, KV heads, head dim, window, layers with the window
    shapes = [
        ("32", "8", "128", "", ""),
        ("40", "40", "128", "", ""),
        ("80", "8", "128", "0", "0"),
        ("1", "1", "1", "", ""),
        ("30", "3", "64", "", ""),
        ("18", "1", "256", "512", "15"),
        ("32", "8", "128", "4096", "32"),
        ("26", "4", "256", "4,096", "13"),
    ]
    cases = []
    for _ in range(n):
        case = {k: rng.choice(v) for k, v in choices.items()}
        case["max_context"] = ""  # no model's maximum: a preset chosen before may have left one
        # no peak: the step is the reading floor alone; one card; no mixture; the prompt's default
        case.update(peak_tflops="", cards="1", active_params="", experts="", experts_per_token="", prompt="")
        for k, x in zip(
            ("layers", "kv_heads", "head_dim", "window", "windowed_layers"), rng.choice(shapes), strict=True
        ):
            case[k] = x
        cases.append(case)
    return cases


def test_a_grid_of_typed_inputs_equals_the_python_formula(calculator):
    page, errors = calculator
    seen = set()
    for case in _grid():
        _fill(page, case)
        want = _expected(case)
        out = _outputs(page)
        for key in ("weights", "kv_per_token", "cache_per_user", "free"):
            assert out[key][0] == str(want[key]), (case, key, out[key], want[key])
        if want["short"] is None:
            for key in ("step_ms", "tokens_per_s_per_user", "tokens_per_s"):  # the same double, every digit
                assert out[key][0] == repr(want[key]), (case, key, out[key], want[key])
            assert out["step_read_ms"][0] == out["step_ms"][0] and out["step_compute_ms"] == ["", "no peak given"]
        else:  # no speed for a setup that does not fit: by how much it does not
            short = f"does not fit: short by {_iec(EN, want['short'])}"
            assert out["step_ms"] == ["", short], (case, out)
            assert out["tokens_per_s"] == out["tokens_per_s_per_user"] == ["", "—"], (case, out)
        if want["max_tokens"] == "nofit":
            seen.add("nofit")
            assert out["max_tokens"] == ["", "does not fit"], case
            assert page.inner_text("[data-status]").startswith("Does not fit"), case
        else:
            seen.add("unbounded" if want["max_tokens"] is None else "fits")
            assert out["max_tokens"][0] == ("" if want["max_tokens"] is None else str(want["max_tokens"])), case
            assert out["users_fit"][0] == str(want["users_fit"]), (case, out, want)
        _no_nan(page)
    assert seen == {"nofit", "fits", "unbounded"} and not errors  # the grid covers every outcome


VALID = {
    "params": "7e9",
    "active_params": "",
    "experts": "",
    "experts_per_token": "",
    "layers": "32",
    "heads": "32",
    "kv_heads": "8",
    "head_dim": "128",
    "window": "",
    "windowed_layers": "",
    "max_context": "",
    "weight_bits": "16",
    "cache": FP16_CACHE,
    "vram_gib": "24",
    "bandwidth_gb_s": "1008",
    "peak_tflops": "165.2",
    "cards": "1",
    "reserve_gib": "1.5",
    "context": "4096",
    "prompt": "",
    "users": "8",
}
FITS_18 = "Users that fit at 4,096 tokens each: 18."  # VALID on the English page
BAD = [
    ("params", "", "Parameters: enter a value."),
    ("vram_gib", "   ", "Card memory: enter a value."),
    ("layers", "abc", "Layers must be a number"),
    ("weight_bits", "16bits", "Bits per weight must be a number"),
    ("bandwidth_gb_s", "NaN", "Memory bandwidth must be a number"),
    ("reserve_gib", "Infinity", "Runtime reserve must be a number"),
    ("params", "1e400", "Parameters is too large to be a number."),
    ("kv_heads", "-8", "Key-value heads cannot be negative."),
    ("reserve_gib", "-1.5", "Runtime reserve cannot be negative."),
    ("head_dim", "0", "Head dimension must be at least 1."),
    ("weight_bits", "0", BITS_RANGE),
    ("weight_bits", "0.99", BITS_RANGE),
    ("weight_bits", "32.5", BITS_RANGE),
    ("weight_bits", "33", BITS_RANGE),
    ("weight_bits", "-1", "Bits per weight cannot be negative."),
    ("vram_gib", "0", "Card memory must be greater than 0."),
    ("bandwidth_gb_s", "0", "Memory bandwidth must be greater than 0."),
    ("users", "0", "Users served must be at least 1."),
    ("layers", "32.5", "Layers must be a whole number."),
    ("context", "2.5", "Context per user must be a whole number."),
    ("window", "100.5", "Sliding window must be a whole number."),
    ("windowed_layers", "33", "Layers with the window cannot be more than the number of layers (32)."),
    ("windowed_layers", "4", "Layers with the window needs a sliding window"),
    ("params", "1e15", "Parameters above 10,000,000,000,000 parameters is not a realistic value."),
    ("vram_gib", "1e9", "Card memory above 65,536 GiB is not a realistic value."),
    ("context", "1e12", "Context per user above 100,000,000 tokens is not a realistic value."),
    ("weight_bits", "128", BITS_RANGE),
    ("max_context", "2.5", "Maximum context must be a whole number."),
    ("max_context", "0", "Maximum context must be at least 1."),
    ("context", "4097", "Context per user is longer than the model's maximum context, 4,096 tokens."),
    # magnitudes no card or model has: refused, never computed into Infinity or 300 digits
    ("bandwidth_gb_s", "1e-320", "Memory bandwidth below 0.001 GB/s is not a realistic value."),
    ("bandwidth_gb_s", "1e-300", "Memory bandwidth below 0.001 GB/s is not a realistic value."),
    ("bandwidth_gb_s", "1e308", "Memory bandwidth above 100,000 GB/s is not a realistic value."),
    ("weight_bits", "1e-300", BITS_RANGE),
    ("vram_gib", "1e-320", "Card memory below 0.001 GiB is not a realistic value."),
    ("reserve_gib", "1e-300", "Runtime reserve must be 0, or at least 0.001 GiB."),
    ("reserve_gib", "1e308", "Runtime reserve above 65,536 GiB is not a realistic value."),
    ("params", "1e-300", "Parameters must be at least 1."),
]


# The fields each of the memory's results needs (docs/javascripts/calculator/compute.js)
NEEDS = {
    "weights": {"params", "weight_bits"},  # each card's share needs the cards too
    "kv_per_token": {"layers", "kv_heads", "head_dim"},
    "cache_per_user": {"layers", "kv_heads", "head_dim", "window", "windowed_layers", "context"},
    "free": {"params", "weight_bits", "cards", "vram_gib", "reserve_gib"},
}


@pytest.mark.parametrize(("field", "text", "message"), BAD, ids=[f"{f}={t!r}" for f, t, _ in BAD])
def test_bad_input_shows_its_message(calculator, field, text, message):
    page, errors = calculator
    _fill(page, {**VALID, "max_context": "4096"} if field == "context" else VALID)
    assert page.inner_text("[data-status]").startswith(FITS_18), page.inner_text("[data-status]")
    page.fill(f"[name={field}]", text)
    shown = page.inner_text(f"[data-error-for={field}]")
    assert shown.startswith(message), shown
    assert page.get_attribute(f"[name={field}]", "aria-invalid") == "true"
    assert _state(page) == "error"
    # what needs the field is blank; what does not is shown (the cache per token needs
    # no parameter count), and no speed without every field the step reads
    out = _outputs(page)
    for name, needs in NEEDS.items():
        assert (out[name] == ["", "—"]) == (field in needs), (name, out[name])
    assert (out["step_ms"] == ["", "—"]) == (field not in ("max_context", "prompt")), out["step_ms"]
    _no_noise(page)
    page.fill(f"[name={field}]", VALID[field])  # corrected: the message goes, the result returns
    assert page.inner_text(f"[data-error-for={field}]") == ""
    assert _outputs(page)["users_fit"][0] == "18" and not errors


def test_a_preset_that_does_not_fit_says_so(calculator):
    page, _ = calculator
    _fill(page, VALID)
    page.select_option("[name=preset_model]", "70B")
    page.select_option("[name=preset_precision]", "fp16")
    page.fill("[name=vram_gib]", "80")
    status = page.inner_text("[data-status]")
    assert status.startswith("Does not fit: the weights (130 GiB)"), status
    assert _state(page) == "nofit"
    _no_nan(page)
    page.fill("[name=reserve_gib]", "50")  # int4 weights (33.6 GiB) fit; with this reserve they do not
    page.fill("[name=weight_bits]", "4.125")
    assert _state(page) == "nofit"


def test_no_cache_room_no_full_user_and_too_many_users_are_explained(calculator):
    page, _ = calculator
    # 1 GiB card, no reserve, weights 100 bytes short of it: fits, with no room for a token
    _fill(page, {**VALID, "params": str(2**30 - 100), "weight_bits": "8", "vram_gib": "1", "reserve_gib": "0"})
    assert _state(page) == "nocache"
    assert _outputs(page)["max_tokens"][0] == "0"
    _fill(page, {**VALID, "context": "131072"})
    assert _state(page) == "nouser"
    assert "Not one full context fits" in page.inner_text("[data-status]")
    _fill(page, {**VALID, "users": "19"})  # 18 fit
    assert _state(page) == "overserved"
    assert page.inner_text("[data-status]").startswith(f"{FITS_18[:-1]}, fewer than the users served (19)")
    _no_nan(page)


def test_typing_over_a_preset_marks_it_as_your_own(calculator):
    page, _ = calculator
    page.select_option("[name=preset_model]", "7B")
    page.select_option("[name=preset_card]", _csv("card_presets")[0]["card"])
    page.fill("[name=layers]", "31")
    page.fill("[name=bandwidth_gb_s]", "500")
    assert page.input_value("[name=preset_model]") == "custom"
    # a bandwidth of one's own departs from the card's rating, not from the card
    assert page.input_value("[name=bandwidth_from]") == "custom"
    assert page.input_value("[name=preset_card]") == _csv("card_presets")[0]["card"]
    page.fill("[name=vram_gib]", "12")
    assert page.input_value("[name=preset_card]") == "custom"


@pytest.mark.parametrize("public", PUBLIC_CONFIGS, ids=lambda p: p.model)
def test_a_pasted_public_config_gives_its_published_count(calculator, public):
    page, errors = calculator
    got = _paste(page, public.config)
    assert got["state"] == "ok", got["text"]
    assert got["shape"]["params"] == public.published_params
    py = shape_from_config(public.config)
    assert page.input_value("[name=params]") == str(public.published_params)
    assert page.input_value("[name=layers]") == str(py.layers)
    assert page.input_value("[name=kv_heads]") == str(py.kv_heads)
    assert page.input_value("[name=head_dim]") == str(py.head_dim)
    assert page.input_value("[name=window]") == (str(py.window) if py.window else "")
    assert page.input_value("[name=windowed_layers]") == (str(py.windowed_layers) if py.window else "")
    assert page.input_value("[name=preset_model]") == "custom"
    assert f"{public.published_params:,} parameters" in got["text"]
    assert not errors


def test_the_run_models_config_gives_the_count_of_its_weights(calculator):
    page, _ = calculator
    row = _csv("configs")[-1]
    assert row["reference"] == "its weights counted" and row["params_agree"] == "true"
    # the run's model's shape as a config.json of its architecture (SmolLM2: llama, tied)
    from measure.lab.architectures import ARCHITECTURES

    got = _paste(page, ARCHITECTURES["smollm2-135m"])
    assert got["shape"]["params"] == int(row["reference_params"]) == 134_515_008


def _broken_configs() -> list:
    tiny = PUBLIC_CONFIGS[1].config  # TinyLlama
    mistral, mixtral = PUBLIC_CONFIGS[4].config, PUBLIC_CONFIGS[5].config
    return [
        {k: v for k, v in tiny.items() if k not in ("vocab_size", "intermediate_size")},
        {**tiny, "model_type": "falcon"},
        {**tiny, "model_type": "falcon", "sliding_window": 64},
        {**tiny, "hidden_size": 2047, "head_dim": None},
        {**tiny, "num_key_value_heads": 5},
        {**tiny, "num_attention_heads": 0},
        {**tiny, "num_attention_heads": 32.0, "vocab_size": "32000"},
        {**mistral, "layer_types": ["full_attention"] * 3},
        {**mistral, "sliding_window": -1},
        {**mistral, "sliding_window": 1.5},
        {**PUBLIC_CONFIGS[7].config, "sliding_window_pattern": 0, "model_type": "gemma3_text"},
        {**PUBLIC_CONFIGS[0].config, "use_sliding_window": True, "max_window_layers": "x"},
        {**PUBLIC_CONFIGS[0].config, "use_sliding_window": True},
        {k: v for k, v in mixtral.items() if k != "num_local_experts"},
        {"model_type": "llava", "text_config": PUBLIC_CONFIGS[0].config},
        {"model_type": None, **{k: v for k, v in tiny.items() if k != "model_type"}},
        {**tiny, "tie_word_embeddings": None},
    ]


@pytest.mark.parametrize("config", _broken_configs(), ids=lambda c: json.dumps(c)[:60])
def test_partial_configs_are_read_as_python_reads_them(calculator, config):
    page, errors = calculator
    got = _paste(page, config)
    py = shape_from_config(config)
    js = got["shape"]
    assert js["problems"] == list(py.problems)
    assert got["state"] == ("partial" if py.problems else "ok")
    for key in ("layers", "kv_heads", "head_dim", "window", "windowed_layers", "params", "tied", "model_type"):
        assert js[key] == getattr(py, key), key
    for problem in py.problems:
        assert problem in got["text"]
    if py.params is None:  # nothing guessed: the field is empty and says so
        assert page.input_value("[name=params]") == ""
        assert page.inner_text("[data-error-for=params]") == "Parameters: enter a value."
    _no_nan(page)
    assert not errors


@pytest.mark.parametrize(
    "text,message",
    [
        ("{not json", "This is not valid JSON: unexpected “n” at line 1, column 2."),
        ("[1, 2]", "No model shape in this config: a config.json is a JSON object"),
        ('{"model_type": "llama"}', "No model shape in this config: num_hidden_layers is missing"),
        (
            '{"num_hidden_layers": 0}',
            "No model shape in this config: num_hidden_layers must be a positive whole number",
        ),
    ],
)
def test_a_config_with_no_shape_says_why(calculator, text, message):
    page, errors = calculator
    _fill(page, VALID)
    got = _paste(page, text)
    assert got["state"] == "error" and got["text"].startswith(message), got["text"]
    assert page.input_value("[name=layers]") == "32"  # the fields are left as they were
    page.fill("[name=config]", "")
    assert page.inner_text("[data-config-status]") == "" and not errors


def test_a_sliding_window_gives_the_hand_worked_budget(calculator):
    page, _ = calculator
    # Gemma-3-270m: 18 layers, 15 of them with a 512-token window, 1 KV head of 256.
    # fp16 cache: 1,024 bytes per layer-token; at 4,096 tokens 3 x 4,096 + 15 x 512 =
    # 19,968 layer-tokens, 20,447,232 bytes. bf16 weights: 268,098,176 x 2 = 536,196,352.
    # On 24 GiB less 1.5 GiB: 25,769,803,776 - 1,610,612,736 - 536,196,352 = 23,622,994,688
    # free, 1,155 users (1,155 x 20,447,232 = 23,616,552,960). Longest context: past the
    # window, (free - 1,024 x 15 x 512) / (1,024 x 3) = 7,687,216 tokens.
    _paste(page, PUBLIC_CONFIGS[8].config)
    _fill(page, {"weight_bits": "16", "cache": FP16_CACHE, "vram_gib": "24", "reserve_gib": "1.5", "context": "4096"})
    out = _outputs(page)
    assert out["cache_per_user"][0] == "20447232"
    assert out["free"][0] == "23622994688"
    assert out["users_fit"][0] == "1155"
    assert out["max_tokens"][0] == "7687216"
    windowed = {(r["model"], r["context"]): r for r in _csv("windowed")}
    assert out["users_fit"][0] == windowed[("google/gemma-3-270m", "4096")]["users_windowed"]
    # every layer windowed (Mistral): the context has no limit
    _paste(page, PUBLIC_CONFIGS[4].config)
    out = _outputs(page)
    assert out["max_tokens"][0] == "" and out["max_tokens"][1].startswith("no limit"), out
    assert out["cache_per_user"][0] == str(2 * 8 * 128 * 2 * 32 * 4096)


def test_the_speed_floor_equals_the_python_table(calculator):
    page, errors = calculator
    speed = _csv("speed_floor")
    page.select_option("[name=preset_model]", "7B")
    page.select_option("[name=preset_precision]", "fp16")
    _fill(page, {"cache": FP16_CACHE, "reserve_gib": "1.5", "context": _csv("assumptions")[0]["context_per_user"]})
    cards = {r["card"]: r for r in _csv("card_presets")}
    for row in speed:
        page.select_option("[name=preset_card]", row["card"])
        page.fill("[name=users]", row["users"])
        out = _outputs(page)
        card = cards[row["card"]]
        w, per_user = 14_000_000_000, 131_072 * 4096
        want = decode_floor(
            weight_bytes=w,
            cache_bytes_per_user=per_user,
            users=int(row["users"]),
            bandwidth_gb_s=float(card["bandwidth_gb_s"]),
        )
        if row["fits"] == "true":
            shown = {k: out[k][0] for k in ("tokens_per_s", "tokens_per_s_per_user", "step_ms")}
        else:  # not shown: the page's arithmetic, as the page calls it
            shown = page.evaluate(
                """a => { const f = LLMCalculator.budget.decodeFloor(...a);
                  return {tokens_per_s: String(f.tokens_per_s), tokens_per_s_per_user: String(f.tokens_per_s_per_user),
                          step_ms: String(f.step_s * 1e3)}; }""",
                [w, per_user, int(row["users"]), float(card["bandwidth_gb_s"])],
            )
        assert shown["tokens_per_s"] == repr(want["tokens_per_s"]) == repr(float(row["tokens_per_s"])), row
        assert shown["tokens_per_s_per_user"] == repr(want["tokens_per_s_per_user"]), row
        assert shown["step_ms"] == repr(want["step_s"] * 1e3) == repr(float(row["step_ms"])), row
        if row["fits"] == "true":
            assert out["tokens_per_s"][1] == f"{_num(EN, want['tokens_per_s'])} tokens/s"
        else:  # the table's speed is the arithmetic's; the calculator says by how much it does not fit
            assert out["tokens_per_s"][1] == "—" and out["step_ms"][1].startswith("does not fit: short by "), row
        assert (_state(page) == "ok") == (row["fits"] == "true"), row
    assert not errors


def test_the_bar_adds_up_to_the_card_or_marks_the_excess(calculator):
    page, _ = calculator
    _fill(page, VALID)

    def bar():
        parts = page.eval_on_selector_all(
            "[data-bar] [data-part]",
            "els => Object.fromEntries(els.map(e => [e.dataset.part, [e.dataset.bytes, e.style.width]]))",
        )
        return {k: int(v[0]) for k, v in parts.items()}, {k: float(v[1].rstrip("%")) for k, v in parts.items()}

    bytes_, widths = bar()
    vram = gib_to_bytes(24)
    assert bytes_["weights"] == 14_000_000_000 and bytes_["reserve"] == gib_to_bytes(1.5)
    assert bytes_["cache"] == 8 * 131_072 * 4096
    assert sum(bytes_.values()) == vram
    assert sum(widths.values()) == pytest.approx(100, abs=0.01)
    assert page.get_attribute("[data-bar]", "data-over") == "0"
    _fill(page, {"users": "40"})  # 40 x 512 MiB of cache: 11.5 GiB more than the card holds
    bytes_, widths = bar()
    need = 14_000_000_000 + gib_to_bytes(1.5) + 40 * 131_072 * 4096
    assert bytes_["free"] == 0 and int(page.get_attribute("[data-bar]", "data-over")) == need - vram
    assert widths["weights"] == pytest.approx(100 * 14_000_000_000 / need, abs=0.001)
    note = page.inner_text("[data-bar-note]")
    over = _iec(EN, need - vram)
    served = "The weights, the reserve and the cache of the users served (40)"
    assert note == f"{served} need {over} more than the card's 24 GiB."


def test_the_url_reproduces_the_state(edition, site):
    page, loc, errors = edition
    _paste(page, PUBLIC_CONFIGS[7].config)  # gemma-2-2b: a window on 13 of 26 layers
    page.select_option("[name=preset_precision]", "int8")
    page.select_option("[name=cache]", "fp8")
    page.select_option("[name=preset_card]", _csv("card_presets")[2]["card"])
    _fill(page, {"reserve_gib": loc.typed("2.25"), "context": loc.typed("8,192"), "users": "3"})
    page.fill("[name=bandwidth_gb_s]", loc.typed("512.5"))  # a bandwidth of one's own
    before_inputs = {n: page.input_value(f"[name={n}]") for n in FIELDS}
    selects = ("preset_model", "preset_precision", "cache", "preset_card", "bandwidth_from")
    before_selects = {n: page.input_value(f"[name={n}]") for n in selects}
    before_out = _outputs(page)
    assert before_out["cache_per_user"][0] == str(2 * 4 * 256 * 1 * (13 * 8192 + 13 * 4096))  # fp8, window 4,096
    url = page.url
    assert page.get_attribute("[data-share]", "href") in url
    # the link writes numbers as every edition reads them: no groups, "." for decimals
    assert all(
        f"{k}={v}" in url for k, v in {"bandwidth_gb_s": "512.5", "context": "8192", "reserve_gib": "2.25"}.items()
    )
    other = site.open(url)

    def numbers(inputs: dict[str, str]) -> dict[str, float | str]:
        return {n: loc.number(text) if text else "" for n, text in inputs.items()}

    after_inputs = {n: other.input_value(f"[name={n}]") for n in FIELDS}
    assert numbers(after_inputs) == numbers(before_inputs)  # the same numbers, in the page's format
    assert after_inputs["bandwidth_gb_s"] == before_inputs["bandwidth_gb_s"] == loc.typed("512.5")
    assert {n: other.input_value(f"[name={n}]") for n in before_selects} == before_selects
    assert before_selects["preset_model"] == before_selects["bandwidth_from"] == "custom"
    assert before_selects["preset_card"] == _csv("card_presets")[2]["card"]  # its memory is still the card's
    assert _outputs(other) == before_out
    # a hand-edited link: an unknown preset is ignored, a bad value shows its message
    other.goto(url.replace("users=3", "users=-2").replace("cache=fp8", "cache=fp3"))
    other.wait_for_selector(READY, timeout=10_000)
    want = loc.t("{field} cannot be negative.", field=_label(other, "users"))
    assert other.inner_text("[data-error-for=users]") == want
    assert other.input_value("[name=cache]") == FP16_CACHE
    other.close()
    assert not errors


# ---- numbers in the page's language ----

MIXED = {"weight_bits": "4.125", "vram_gib": "24.5", "reserve_gib": "1.5", "bandwidth_gb_s": "1008.5"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_decimal_comma_is_a_decimal_separator(site, lang):
    """1,5 on a decimal-comma page is what 1.5 is on the English page."""
    english, page = site.page("en"), site.page(lang)
    loc = Locale.of(page, lang)
    assert loc.decimal == ","
    _fill(english, {**VALID, **MIXED})
    _fill(page, {**loc.valid(), **{k: v.replace(".", ",") for k, v in MIXED.items()}})
    want, got = _outputs(english), _outputs(page)
    assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in want.items()}
    assert got["weights"][0] == str(weight_bytes(params=7e9, bits_per_weight=4.125)) and want["free"][0]
    assert _state(page) == _state(english) == "ok"
    assert page.input_value("[name=reserve_gib]") == "1,5"
    _no_nan(page)


# (edition, field, typed, message, its values): a separator that could mean two numbers,
# or one the page does not write numbers with, is refused with how to write it instead
SEPARATORS = [
    ("en", "reserve_gib", "1,5", AMBIGUOUS, {"decimal": "1.5", "whole": "15"}),
    ("en", "vram_gib", "0,5", WRITE_IT, {"number": "0.5"}),
    ("en", "bandwidth_gb_s", "1,2345", AMBIGUOUS, {"decimal": "1.2345", "whole": "12,345"}),
    ("en", "params", "7.000.000.000", WRITE_IT, {"number": "7,000,000,000"}),
    ("en", "params", "7 000 000 000", WRITE_IT, {"number": "7,000,000,000"}),
    ("en", "bandwidth_gb_s", "1.008,5", WRITE_IT, {"number": "1,008.5"}),
    ("en", "params", "7,5e9", AMBIGUOUS, {"decimal": "7.5e9", "whole": "75e9"}),
    ("es", "reserve_gib", "1.5", AMBIGUOUS, {"decimal": "1,5", "whole": "15"}),
    ("es", "bandwidth_gb_s", "1,008.5", WRITE_IT, {"number": "1008,5"}),  # four digits stay whole in Spanish
    ("it", "vram_gib", "24.5", AMBIGUOUS, {"decimal": "24,5", "whole": "245"}),
    ("it", "params", "70.00.000", WRITE_IT, {"number": "7.000.000"}),
    ("gl", "reserve_gib", "1.5", AMBIGUOUS, {"decimal": "1,5", "whole": "15"}),
    ("gl", "bandwidth_gb_s", "1.008", AMBIGUOUS, {"decimal": "1,008", "whole": f"1{NBSP}008"}),
    ("gl", "params", "7.000.000.000", WRITE_IT, {"number": f"7{NBSP}000{NBSP}000{NBSP}000"}),
    ("cs", "vram_gib", "0.5", WRITE_IT, {"number": "0,5"}),
    ("cs", "params", "7,000,000,000", WRITE_IT, {"number": f"7{NBSP}000{NBSP}000{NBSP}000"}),
    ("cs", "params", "7 00 000", WRITE_IT, {"number": f"700{NBSP}000"}),
]


@pytest.mark.parametrize(
    ("lang", "name", "text", "message", "values"), SEPARATORS, ids=[f"{s[0]}-{s[1]}={s[2]!r}" for s in SEPARATORS]
)
def test_a_separator_that_is_not_the_pages_says_how_to_write_the_number(site, lang, name, text, message, values):
    page = site.page(lang)
    loc = Locale.of(page, lang)
    _fill(page, loc.valid())
    assert _state(page) == "ok"
    page.fill(f"[name={name}]", text)
    assert page.inner_text(f"[data-error-for={name}]") == loc.t(message, text=text, **values)
    assert page.get_attribute(f"[name={name}]", "aria-invalid") == "true"
    assert _state(page) == "error"  # never a number it may not be
    out = _outputs(page)
    assert all(out[k] == ["", "—"] for k, needs in NEEDS.items() if name in needs) and out["step_ms"] == ["", "—"]
    _no_nan(page)
    # what the message says to write is read, each as the number it names
    for key, written in values.items():
        page.fill(f"[name={name}]", written)
        not_whole = loc.t("{field} must be a whole number.", field=_label(page, name))
        assert page.inner_text(f"[data-error-for={name}]") in ("", not_whole), written
        english = written.replace(NBSP, "").translate({ord(loc.group): None, ord(loc.decimal): "."})
        fmt = {"locale": lang, "decimal": loc.decimal, "group": loc.group, "min_grouping": loc.min_grouping}
        value = page.evaluate("([loc, t]) => LLMCalculator.numbers(loc).read(t).value", [fmt, written])
        assert value == float(english), (key, written, value)
    page.fill(f"[name={name}]", loc.valid()[name])
    assert page.inner_text(f"[data-error-for={name}]") == "" and _state(page) == "ok"


def test_a_number_that_is_not_one_in_any_locale_still_says_so(calculator):
    page, _ = calculator
    _fill(page, VALID)
    for text in ("1,,5", "1.5.", ",", "1 ,5", "12abc", "0x10"):
        page.fill("[name=vram_gib]", text)
        assert page.inner_text("[data-error-for=vram_gib]").startswith("Card memory must be a number"), text
    page.fill("[name=vram_gib]", VALID["vram_gib"])


@pytest.mark.parametrize("lang", EDITIONS)
def test_well_grouped_input_is_read_in_every_edition(site, lang):
    page = site.page(lang)
    loc = Locale.of(page, lang)
    groups = [loc.group] + ([" ", "\u202f"] if loc.group.isspace() else [])
    _fill(page, loc.valid())
    for g in groups:
        _fill(page, {"params": g.join(["7", "000", "000", "000"]), "bandwidth_gb_s": f"1{g}008{loc.decimal}5"})
        _fill(page, {"context": f"4{g}096", "users": "8"})
        out = _outputs(page)
        assert _state(page) == "ok", (g, page.inner_text("[data-status]"))
        assert out["weights"][0] == "14000000000" and out["users_fit"][0] == "18", (g, out)
        assert float(out["tokens_per_s"][0]) == pytest.approx(8 * 1008.5e9 / (14e9 + 8 * 131072 * 4096), rel=1e-12)
    # a group that does not group in threes is never read as one
    for text in (f"70{loc.group}00{loc.group}000{loc.group}000", f"7{loc.group}0000", f"0{loc.group}700"):
        page.fill("[name=params]", text)
        assert _state(page) == "error" and page.inner_text("[data-error-for=params]"), text
    page.fill("[name=params]", VALID["params"])


@pytest.mark.parametrize("lang", EDITIONS)
def test_what_the_calculator_writes_into_a_field_reads_back_as_the_same_number(site, lang):
    page = site.page(lang)
    loc = Locale.of(page, lang)
    got = page.evaluate(
        """loc => {
          const n = LLMCalculator.numbers(loc), bad = [];
          const xs = [0, 1, 1.5, 4.125, 0.25, 12.3, 1008, 141, 1e-7, 2.5e-12, 7e9, 134515008, 4.05e11, 1e13, 0.1 + 0.2];
          for (let i = 0; i < 300; i++) xs.push(Math.random() * 10 ** (Math.floor(Math.random() * 16) - 4));
          for (const x of xs) {
            for (const text of [n.input(x), n.integer(Math.round(x)), n.plain(x)]) {
              const plain = Number(text.split(loc.group).join("").replace(loc.decimal, "."));
              const r = n.read(text), want = text === n.input(x) ? x : plain;
              if (r.value !== want) bad.push([x, text, r]);
            }
          }
          return bad;
        }""",
        {"locale": lang, "decimal": loc.decimal, "group": loc.group, "min_grouping": loc.min_grouping},
    )
    assert not got, got[:5]
    # a preset writes its value in the page's format: int4 g128's 4.125 bits
    page.select_option("[name=preset_precision]", "int4 g128")
    assert page.input_value("[name=weight_bits]") == loc.typed("4.125")
    assert page.inner_text("[data-error-for=weight_bits]") == ""


def test_the_english_format_is_the_browsers_en_us_format(calculator):
    page, _ = calculator
    bad = page.evaluate(
        """() => {
          const n = LLMCalculator.numbers({locale: "en", decimal: ".", group: ","}), bad = [];
          const xs = [0, -0, 1.005, 2.675, 1.45, 0.5, 1.5, 2.5, -2.5, 999.995, 9.995, 99999.95, 5e-7, 123456789.125];
          for (let i = 0; i < 2000; i++) xs.push((Math.random() - 0.1) * 10 ** (Math.floor(Math.random() * 20) - 6));
          for (const x of xs) {
            for (const d of [0, 1, 2]) {
              const want = x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
              if (n.fixed(x, d) !== want) bad.push(["fixed", d, x, n.fixed(x, d), want]);
            }
            const plain = x.toLocaleString("en-US", { maximumFractionDigits: 6 });
            if (n.plain(x) !== plain) bad.push(["plain", x, n.plain(x), plain]);
            const int = x.toLocaleString("en-US", { maximumFractionDigits: 0 });
            if (n.integer(x) !== int) bad.push(["integer", x, n.integer(x), int]);
          }
          return bad;
        }"""
    )
    assert not bad, bad[:10]


TAG = "\u27e6{}\u27e7"  # ⟦text⟧: a translation that cannot be mistaken for the English text


def _tagged(html: str) -> str:
    """The page with every message of its locale element marked as a translation."""
    head, rest = html.split("data-calculator-locale", 1)
    start, end = rest.index(">") + 1, rest.index("</script>")
    data = json.loads(rest[start:end].replace("<\\/", "</"))
    data["messages"] = {m: TAG.format(t or m) for m, t in data["messages"].items()}
    body = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return head + "data-calculator-locale" + rest[:start] + body + rest[end:]


@pytest.mark.parametrize("lang", EDITIONS)
def test_every_message_comes_from_the_pages_locale_element(site, lang):
    page = site.open(site.url(lang), rewrite=_tagged)
    try:
        loc = Locale.of(page, lang)
        assert all(t.startswith("\u27e6") for t in loc.messages.values())
        status = page.inner_text("[data-status]")
        assert status.startswith("\u27e6") and status.endswith("\u27e7"), status
        out = _outputs(page)
        assert out["max_tokens"][1] == loc.unit(loc.integer(out["max_tokens"][0]), loc.t("tokens"))
        assert loc.t("tokens").startswith("\u27e6")
        # every preset's text but a public config's bare name
        options = page.eval_on_selector_all(
            "select option",
            "o => o.filter(x => x.parentNode.name !== 'preset_model' || !x.value.includes('/'))"
            ".map(x => x.textContent)",
        )
        assert len(options) > 20 and all(o.startswith("\u27e6") for o in options), options
        # an error names its field as the page's label does
        page.fill("[name=params]", "")
        want = loc.t("{field}: enter a value.", field=_label(page, "params"))
        assert _label(page, "params") in want
        assert page.inner_text("[data-error-for=params]") == want
        page.fill("[name=params]", f"1{'.' if loc.decimal == ',' else ','}5")
        assert page.inner_text("[data-error-for=params]").startswith("\u27e6")
        # a config's problems, in the page's language too
        got = _paste(page, {**PUBLIC_CONFIGS[1].config, "model_type": "falcon"})
        assert got["state"] == "partial" and got["shape"]["problems"], got
        unknown = loc.messages[
            "parameters: model_type '{model_type}' is not one whose layer layout is known here ({known}); "
            "type the count from the model card"
        ]
        assert unknown.split("{model_type}")[0] + "falcon" in got["text"], got
        got = _paste(page, "[1, 2]")
        reason = loc.t("a config.json is a JSON object ({...})")
        assert got["text"] == loc.t("No model shape in this config: {reason}.", reason=reason)
        assert got["text"].count("\u27e6") == 2
        assert not site.errors
    finally:
        page.close()


EXTREMES = ("1e-320", "1e-300", "1e308", "-1e-320")
NUMBER_FIELDS = [f for f in FIELDS if f not in ("window", "windowed_layers")]


def test_every_field_refuses_an_extreme_magnitude_with_one_line_beside_it(calculator):
    page, errors = calculator
    for name in NUMBER_FIELDS:
        for text in EXTREMES:
            _fill(page, VALID)
            page.fill(f"[name={name}]", text)
            shown = page.inner_text(f"[data-error-for={name}]")
            assert shown and "\n" not in shown and len(shown) < 120, (name, text, shown)
            assert _state(page) == "error", (name, text)
            _no_noise(page)
    _fill(page, VALID)
    assert not errors


def test_a_reserve_of_minus_zero_is_a_reserve_of_zero(calculator):
    page, errors = calculator
    _fill(page, {**VALID, "reserve_gib": "0"})
    zero = _outputs(page)
    legend = page.inner_text("[data-legend=reserve]")
    _fill(page, {"reserve_gib": "-0"})
    assert _outputs(page) == zero and _state(page) == "ok"
    assert page.inner_text("[data-legend=reserve]") == legend == "0 B"
    _no_noise(page)
    _fill(page, VALID)
    assert not errors


def test_what_was_typed_is_repeated_at_most_forty_characters_and_once(calculator):
    page, errors = calculator
    _fill(page, VALID)
    text = "1,5" + "5" * 99_997  # a decimal 1.5555... or a whole 155,555...: ambiguous on the English page
    page.fill("[name=reserve_gib]", text)
    shown = page.inner_text("[data-error-for=reserve_gib]")
    assert shown.startswith(text[:39] + "\u2026 is ambiguous here: write 1.5555"), shown[:100]
    assert len(shown) < 250 and "\u2026 for a decimal number" in shown
    form = _form_text(page)
    assert form.count(text[:39]) == 1 and len(form) < 5000
    assert page.inner_text("[data-status]") == "Fix the highlighted field: Runtime reserve."
    page.fill("[name=reserve_gib]", VALID["reserve_gib"])
    assert _state(page) == "ok"
    # a pasted config's model_type, and a JSON error quoting what was pasted
    got = _paste(page, {**PUBLIC_CONFIGS[1].config, "model_type": "m" * 100_000})
    assert got["state"] == "partial" and "m" * 39 + "\u2026" in got["text"], got["text"][:200]
    assert "m" * 40 not in got["text"] and len(got["text"]) < 1000
    got = _paste(page, '{"model_type": "' + "q" * 100_000)
    assert got["state"] == "error" and len(got["text"]) < 200, got["text"][:300]
    _paste(page, "")
    assert not errors


# ---- fit first: no speed for a setup that does not fit, the model's maximum context,
# bits per weight in range, the tables' precision, links across editions ----


def test_a_setup_that_does_not_fit_gets_no_speed_but_how_much_it_lacks(calculator):
    page, errors = calculator
    _fill(page, VALID)
    # 7B in fp16 on an 8 GiB card: the weights alone do not fit
    page.select_option("[name=preset_model]", "7B")
    page.select_option("[name=preset_precision]", "fp16")
    card = next(c for c in _csv("card_presets") if float(c["memory_gib"]) == 8)
    page.select_option("[name=preset_card]", card["card"])
    out = _outputs(page)
    short = 14_000_000_000 + gib_to_bytes(1.5) - gib_to_bytes(8)
    assert out["step_ms"] == ["", f"does not fit: short by {_iec(EN, short)}"], out
    assert out["tokens_per_s"] == out["tokens_per_s_per_user"] == ["", "—"], out
    assert _state(page) == "nofit"
    # the verdict reads first: bold, the figures beside it plain
    weight = "s => getComputedStyle(document.querySelector(s)).fontWeight"
    assert int(page.evaluate(weight, "[data-status]")) >= 700
    assert int(page.evaluate(weight, "[data-out=weights]")) < 600
    # the weights fit, one user's cache at the context does not
    _fill(page, {**VALID, "context": "131072"})
    per_user, free = 131_072 * 131_072, gib_to_bytes(22.5) - 14_000_000_000
    assert _state(page) == "nouser"
    assert _outputs(page)["step_ms"] == ["", f"does not fit: short by {_iec(EN, per_user - free)}"]
    # 18 users fit, 19 are served: the 19 users' cache does not
    _fill(page, {**VALID, "users": "19"})
    per_user = 131_072 * 4096
    over = _iec(EN, 19 * per_user - free)
    assert _state(page) == "overserved"
    assert _outputs(page)["step_ms"] == ["", f"does not fit: short by {over}"]
    assert page.inner_text("[data-status]") == (
        f"{FITS_18[:-1]}, fewer than the users served (19): serving them all needs {over} more than the card's 24 GiB."
    )
    _fill(page, VALID)
    assert _outputs(page)["step_ms"][0] and _state(page) == "ok" and not errors


def test_the_context_is_checked_against_the_models_maximum(calculator):
    page, errors = calculator
    _fill(page, VALID)
    configs = {r["model"]: r for r in _csv("configs")}
    qwen = PUBLIC_CONFIGS[0]
    assert qwen.config["max_position_embeddings"] == int(configs[qwen.model]["max_position"]) == 32_768
    # a public config's preset brings its maximum; a longer context is refused beside its field
    page.select_option("[name=preset_model]", qwen.model)
    assert page.input_value("[name=max_context]") == "32768"
    assert page.inner_text("[data-note-for=max_context]") == ""
    page.fill("[name=context]", "1000000")
    assert page.inner_text("[data-error-for=context]") == (
        "Context per user is longer than the model's maximum context, 32,768 tokens."
    )
    out = _outputs(page)
    assert _state(page) == "error" and out["cache_per_user"] == out["step_ms"] == ["", "—"], out
    assert out["weights"][0] and out["kv_per_token"][0], out  # they need no context
    page.fill("[name=context]", "32768")
    assert page.inner_text("[data-error-for=context]") == "" and _state(page) == "ok"
    # an assumed shape has no config, so no maximum: the field is empty and says what that means
    page.select_option("[name=preset_model]", "7B")
    assert page.input_value("[name=max_context]") == ""
    note = "No maximum given: the context is not checked against the model's own."
    assert page.inner_text("[data-note-for=max_context]") == note
    # typed where there is no config: checked as well, and the preset is then one's own
    page.fill("[name=max_context]", "16384")
    assert page.input_value("[name=preset_model]") == "custom"
    assert page.inner_text("[data-error-for=context]").endswith("maximum context, 16,384 tokens.")
    assert page.inner_text("[data-note-for=max_context]") == ""
    # a pasted config brings its max_position_embeddings, a nested text model's included
    got = _paste(page, qwen.config)
    assert page.input_value("[name=max_context]") == "32768"
    assert got["state"] == "ok" and "a context of at most 32,768 tokens" in got["text"], got["text"]
    _paste(page, {"model_type": "llava", "text_config": PUBLIC_CONFIGS[1].config})
    assert page.input_value("[name=max_context]") == "2048"
    got = _paste(page, {k: v for k, v in qwen.config.items() if k != "max_position_embeddings"})
    assert page.input_value("[name=max_context]") == "" and got["state"] == "ok"
    assert page.inner_text("[data-note-for=max_context]") == note
    got = _paste(page, {**qwen.config, "max_position_embeddings": -1})
    assert got["state"] == "partial" and page.input_value("[name=max_context]") == ""
    assert "Not derived: max_position_embeddings must be a positive whole number." in got["text"], got["text"]
    _paste(page, "")
    _fill(page, VALID)
    assert _state(page) == "ok" and not errors


def test_no_limit_from_memory_still_names_the_models_maximum(calculator):
    page, errors = calculator
    _fill(page, VALID)
    page.select_option("[name=preset_model]", "mistralai/Mistral-7B-v0.1")  # every layer windowed
    window = "the cache stops growing at the window (4,096 tokens)"
    assert _outputs(page)["max_tokens"] == [
        "",
        f"no limit from memory: {window}; the model's own maximum context, 32,768 tokens, still applies",
    ]
    page.fill("[name=max_context]", "")
    assert _outputs(page)["max_tokens"] == [
        "",
        f"no limit from memory: {window}; the model's own maximum context still applies",
    ]
    # memory allows more than the model takes: both said
    models = {r["model"]: r for r in _csv("models")}
    smol = next(m for m in models if m.startswith("SmolLM2"))
    page.select_option("[name=preset_model]", smol)
    assert page.input_value("[name=max_context]") == "8192"
    out = _outputs(page)
    assert int(out["max_tokens"][0]) > 8192
    assert (
        out["max_tokens"][1] == f"{int(out['max_tokens'][0]):,} tokens, past the model's maximum context, 8,192 tokens"
    )
    _fill(page, VALID)
    assert not errors


@pytest.mark.parametrize("bits", ["1", "1.58", "4.125", "32"])
def test_bits_per_weight_from_one_to_thirty_two_are_computed(calculator, bits):
    page, errors = calculator
    _fill(page, {**VALID, "weight_bits": bits})
    assert page.inner_text("[data-error-for=weight_bits]") == ""
    assert _outputs(page)["weights"][0] == str(weight_bytes(params=7e9, bits_per_weight=float(bits)))
    assert not errors


@pytest.mark.parametrize("lang", EDITIONS)
def test_fit_the_models_maximum_and_the_bits_range_are_said_in_every_edition(site, lang):
    """Points the English tests above check, in each edition's words and numbers: how much
    a setup lacks instead of its speed, a context past the model's maximum, the window's
    "no limit" with the model's own maximum, bits per weight outside 1 to 32."""
    page = site.page(lang)
    loc = Locale.of(page, lang)

    def tokens(n: int) -> str:
        return loc.unit(loc.integer(n), loc.t("tokens"))

    _fill(page, loc.valid())
    page.select_option("[name=preset_model]", "7B")
    page.select_option("[name=preset_precision]", "fp16")
    card = next(c for c in _csv("card_presets") if float(c["memory_gib"]) == 8)
    page.select_option("[name=preset_card]", card["card"])
    short = 14_000_000_000 + gib_to_bytes(1.5) - gib_to_bytes(8)
    out = _outputs(page)
    assert out["step_ms"] == ["", loc.t("does not fit: short by {size}", size=_iec(loc, short))], out
    assert out["tokens_per_s"] == out["tokens_per_s_per_user"] == ["", "—"] and _state(page) == "nofit"
    # Qwen2.5-0.5B takes at most 32,768 tokens: a million is refused, naming the maximum
    _fill(page, loc.valid())
    page.select_option("[name=preset_model]", PUBLIC_CONFIGS[0].model)
    page.fill("[name=context]", loc.integer(1_000_000))
    field = _label(page, "context")
    want = loc.t("{field} is longer than the model's maximum context, {max}.", field=field, max=tokens(32_768))
    assert page.inner_text("[data-error-for=context]") == want and _state(page) == "error"
    # every layer of Mistral-7B keeps a window: no limit from memory, the model's still applies
    page.fill("[name=context]", loc.valid()["context"])
    page.select_option("[name=preset_model]", "mistralai/Mistral-7B-v0.1")
    no_limit = (
        "no limit from memory: the cache stops growing at the window ({window}); "
        "the model's own maximum context, {max}, still applies"
    )
    assert _outputs(page)["max_tokens"] == ["", loc.t(no_limit, window=tokens(4096), max=tokens(32_768))]
    # bits per weight from 1 to 32, the range named
    for bits in ("33", loc.typed("0.5")):
        page.fill("[name=weight_bits]", bits)
        range_ = "{field} must be between {min} (a binary weight) and {max} bits (fp32)."
        want = loc.t(range_, field=_label(page, "weight_bits"), min="1", max="32")
        assert page.inner_text("[data-error-for=weight_bits]") == want, bits
    _fill(page, loc.valid())
    assert _state(page) == "ok" and not site.errors


@pytest.mark.parametrize("lang", EDITIONS)
def test_numbers_are_written_to_the_tables_precision(site, lang):
    """A measurement to 3 significant digits, bytes in one IEC unit, as the site's tables
    write them (sitekit/language/formatting.py), in each edition's format."""
    page = site.page(lang)
    loc = Locale.of(page, lang)
    rng = random.Random(1)
    xs = [0.0, 1.0, 67.26090917647058, 14.867476699970375, 118.939813599763, 1034.5136411461347, 0.0004567]
    xs += [0.5, 2.5, 0.125, 1.005, 99.95, 999.5, 9.995, 123456.5, 1e-7, 6.61e-4]
    xs += [rng.uniform(0, 1) * 10 ** rng.randint(-5, 8) for _ in range(300)]
    sizes = [0, 1, 1023, 1024, 536_870_912, 14_000_000_000, 2**40, 3 * 2**40 + 1, 1_610_612_736]
    sizes += [rng.randint(1, 2**50) for _ in range(300)]
    fmt = {"locale": lang, "decimal": loc.decimal, "group": loc.group, "min_grouping": loc.min_grouping}
    got = page.evaluate(
        "([loc, xs, sizes]) => { const n = LLMCalculator.numbers(loc);"
        " return [xs.map(x => n.num(x)), sizes.map(b => n.iec(b).join('\u00a0'))]; }",
        [fmt, xs, sizes],
    )
    assert [(x, t) for x, t in zip(xs, got[0], strict=True) if t != _num(loc, x)] == []
    assert [(b, t) for b, t in zip(sizes, got[1], strict=True) if t != _python(lang, "iec", b)] == []
    # on the page: 512 MiB of cache, not 512.00 MiB
    _fill(page, loc.valid())
    assert _outputs(page)["cache_per_user"][1].startswith(loc.unit("512", "MiB"))


JSON_ERRORS = [
    ("{not json", "unexpected “n” at line 1, column 2."),
    ('{"a": 1,\n  "b": }', "unexpected “}” at line 2, column 8."),
    ('{"a": tru}', "unexpected “}” at line 1, column 10."),
    ('{"a": 1} x', "unexpected “x” at line 1, column 10."),
    ('{"a": "\t"}', "unexpected “U+0009” at line 1, column 8."),
    ('{"a": [1, 2', "it ends at line 1, column 12 before it is complete."),
]


@pytest.mark.parametrize(("text", "where"), JSON_ERRORS, ids=[t[:20] for t, _ in JSON_ERRORS])
def test_text_that_is_not_json_says_where_in_the_pages_words(calculator, text, where):
    page, errors = calculator
    got = _paste(page, text)
    assert got["state"] == "error" and got["text"] == f"This is not valid JSON: {where}", got
    _paste(page, "")
    assert not errors


def test_where_json_stops_is_where_the_browser_stops_reading_it(calculator):
    """form.jsonError finds no error in text JSON.parse reads, and one in every text it refuses."""
    page, _ = calculator
    bad = page.evaluate(
        r"""() => {
          const seeds = ['{"a": [1, -2.5e3, true, null, {"b": "c\\u00e9\\n"}], "d": {}}', '[]', '"x"', '0',
                         '{"model_type": "llama", "num_hidden_layers": 32}', ' [ 1 , 2 ] '];
          const bits = ['{', '}', '[', ']', ',', ':', '"', '\\', '-', '0', '1', 'e', '.', ' ', '\n',
                        't', 'n', 'u', 'x'];
          let state = 7; const rnd = k => (state = (state * 1103515245 + 12345) % 2147483648) % k;
          const bad = [];
          for (let i = 0; i < 3000; i++) {
            let s = seeds[rnd(seeds.length)];
            for (let m = rnd(3) + 1; m > 0; m--) {
              const at = rnd(s.length + 1), op = rnd(3);
              const put = bits[rnd(bits.length)];  // op 0 deletes, 1 inserts, 2 replaces a character
              s = op === 0 ? s.slice(0, at) + s.slice(at + 1) : s.slice(0, at) + put + s.slice(op === 1 ? at : at + 1);
            }
            let ok = true;
            try { JSON.parse(s); } catch (e) { ok = false; }
            const found = LLMCalculator.form.jsonError(s);
            if (ok !== (found === null)) bad.push([s, ok, found]);
          }
          return bad;
        }"""
    )
    assert not bad, bad[:5]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_link_and_the_language_selector_carry_the_calculator_to_another_edition(site, lang):
    english = site.page("en")
    _fill(english, {**VALID, "bandwidth_gb_s": "1,008.5", "reserve_gib": "2.25", "users": "3"})
    want = _outputs(english)
    query = english.url.split("?", 1)[1]
    # the language selector's link to this edition carries the same inputs
    links = english.eval_on_selector_all("a[hreflang]", "a => Object.fromEntries(a.map(x => [x.hreflang, x.href]))")
    assert links[lang].endswith(f"/{lang}/calculator/?{query}"), links[lang]
    other = site.open(links[lang])
    try:
        loc = Locale.of(other, lang)
        assert {k: v[0] for k, v in _outputs(other).items()} == {k: v[0] for k, v in want.items()}
        assert other.input_value("[name=bandwidth_gb_s]") == loc.typed("1008.5")
        assert other.input_value("[name=reserve_gib]") == loc.typed("2.25")
        assert _state(other) == "ok"
        # and back: this edition's link opens the English page as it was
        back = other.eval_on_selector("a[hreflang=en]", "a => a.href")
        assert back.split("?", 1)[1] == query
        # a link written in this page's own format (an earlier version's) is read as typed here
        other.goto(f"{site.url(lang)}?reserve_gib={loc.typed('2.25')}")
        other.wait_for_selector(READY, timeout=10_000)
        assert loc.number(other.input_value("[name=reserve_gib]")) == 2.25
        assert other.inner_text("[data-error-for=reserve_gib]") == ""
    finally:
        other.close()
    _fill(english, VALID)
    assert not site.errors


def _old_link(page, selects: dict[str, str]) -> str:
    """The query an earlier version's link held: every field as its page wrote it."""
    from urllib.parse import urlencode

    fields = {n: page.input_value(f"[name={n}]") for n in FIELDS}
    return urlencode({**{k: page.input_value(f"[name={s}]") for k, s in selects.items()}, **fields})


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_earlier_link_in_another_editions_format_is_read_where_the_editions_agree(site, lang):
    """A link of an earlier version wrote each number as its page did ("4,5" on the
    Galician page): another edition reads it where the site's formats agree on one
    number the field takes, and otherwise leaves it, with the field's message."""
    selects = {"model": "preset_model", "precision": "preset_precision", "cache": "cache", "card": "preset_card"}
    page = site.page(lang)
    loc = Locale.of(page, lang)
    _fill(page, {**loc.valid(), "weight_bits": loc.typed("4.5"), "bandwidth_gb_s": loc.typed("1008.5")})
    assert page.input_value("[name=weight_bits]") == "4,5" and _state(page) == "ok"
    want = {k: v[0] for k, v in _outputs(page).items()}
    # "4,5", "1,5" and "1008,5" on the English page, where "4,5" alone could be 4.5 or 45
    english = site.open(f"{site.url('en')}?{_old_link(page, selects)}")
    try:
        assert english.input_value("[name=weight_bits]") == "4.5"
        assert english.input_value("[name=reserve_gib]") == "1.5"
        assert _state(english) == "ok", english.inner_text("[data-status]")
        assert {k: v[0] for k, v in _outputs(english).items()} == want
        # an English link of the same kind ("8,192" tokens, "1,008.5" GB/s) on this page
        _fill(english, {"context": "8,192", "bandwidth_gb_s": "1,008.5", "max_context": ""})
        want = {k: v[0] for k, v in _outputs(english).items()}
        old = _old_link(english, selects)
        assert "context=8%2C192" in old and "bandwidth_gb_s=1%2C008.5" in old
        other = site.open(f"{site.url(lang)}?{old}")
        try:
            assert other.input_value("[name=context]") == "8192"
            assert other.input_value("[name=bandwidth_gb_s]") == loc.typed("1008.5")
            assert _state(other) == "ok" and {k: v[0] for k, v in _outputs(other).items()} == want
            # a count no edition reads as a whole number stays as it came, with its message
            other.goto(f"{site.url(lang)}?users=1.5")
            other.wait_for_selector(READY, timeout=10_000)
            assert other.input_value("[name=users]") == "1.5" and _state(other) == "error"
            assert other.get_attribute("[name=users]", "aria-invalid") == "true"
            assert other.inner_text("[data-error-for=users]")
        finally:
            other.close()
    finally:
        english.close()
    assert not site.errors
