"""What the roofline predicts for the chapter's model on the chapter's laptop GPU and on two
data-centre GPUs: each card's roofline from its datasheet (``measure/reference/gpus.py``:
its bandwidth, and its dense fp16 peak at every row count), Qwen2.5-0.5B-Instruct in
fp16 counted from its published config (``measure/lab/step_work.py``), no fixed cost per
operator (a datasheet gives none): every figure here is a floor the card cannot beat,
predicted, never measured. A GPU run of the site (``gpu/run_systems.sh``) is what sets a
measurement beside them.

* ``gpu_predictions``: per card its balance point, the decode step's floor and the tokens
  per second it allows, the batch at which decode turns compute-bound (each request with
  the batching page's 64-token cache, and with 1,024), a generated token against a prompt
  token (the chapter's split: a 40-token prompt), the cache's speed-up over 48 new tokens
  as the chapter counted it (the prefill in the cached time), the decode step's rise from
  16 to 1,024 cached tokens, and what a draft of the same model costs with its weights in
  int8 or in int4 (group-128 with fp16 scales), as a fraction of a target step;
* ``gpu_speculation``: per card, draft length and acceptance rate, what verifying the draft
  costs against one target step and the draft cost at which speculative decoding breaks
  even (``formulas.expected_tokens_per_verification``).
"""

from __future__ import annotations

from dataclasses import replace

from measure.lab.formulas import expected_tokens_per_verification
from measure.lab.roofline import Rate, Roofline, summed
from measure.lab.step_work import (
    DYNAMIC_CACHE_PASSES,
    STATIC_CACHE_PASSES,
    ModelCounts,
    config_counts,
    decode_work,
    prefill_work,
)
from measure.reference.gpus import GPUS, Gpu
from measure.reference.public_configs import PUBLIC_CONFIGS

MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
DTYPE = "float16"
SPLIT_PROMPT = 40  # the chapter's split (§2.1): a 40-token prompt
NEW_TOKENS = 48  # §1.1
FLAT_FROM, FLAT_TO = 16, 1024  # §2.3: the chapter saw no change from 16 to 1,024
BATCH_CONTEXTS = (64, 1024)  # the batching page's cache per request, and a long one
GAMMAS = (2, 4, 8)
ALPHAS = (0.5, 0.7, 0.9)
# Bits per weight of the drafts priced: int8 per-row (its scales add under 0.1 %, left
# out), int4 group-128 with an fp16 scale per 128 weights (spec §5.3: 4.125).
DRAFT_BITS = {"int8": 8.0, "int4": 4.125}
MAX_BATCH = 1 << 20


def qwen() -> ModelCounts:
    config = next(c for c in PUBLIC_CONFIGS if c.model == MODEL).config
    return config_counts(config, bytes_per_element=2, dtype=DTYPE)


def roofline(gpu: Gpu) -> Roofline:
    """The card's datasheet as a roofline: no interval (a datasheet gives one number)."""
    bw = Rate(gpu.bandwidth_gb_s * 1e9, gpu.bandwidth_gb_s * 1e9, gpu.bandwidth_gb_s * 1e9)
    peak = Rate(gpu.fp16_tflops * 1e12, gpu.fp16_tflops * 1e12, gpu.fp16_tflops * 1e12)
    return Roofline(bandwidth=bw, read_bandwidth=bw, ceilings={DTYPE: ((1, peak),)}, dispatch=None)


def _ms(work, roof: Roofline) -> float:
    return work.predict(roof).total.value * 1e3


def compute_bound_batch(m: ModelCounts, roof: Roofline, context: int) -> int | None:
    """The least batch whose decode step (each request against ``context`` cached tokens,
    its cache read once, as a static cache or a serving kernel reads it) the model puts
    under the compute ceiling; None where the cache's bytes grow as fast as the
    arithmetic and no batch gets there."""

    def compute_bound(batch: int) -> bool:
        p = decode_work(m, context=context, batch=batch, cache_passes=STATIC_CACHE_PASSES).predict(roof)
        return p.bound == "compute"

    if not compute_bound(MAX_BATCH):
        return None
    low, high = 1, MAX_BATCH  # bisect: compute-bound from some batch on
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if compute_bound(mid) else (mid + 1, high)
    return low


def generation_ms(m: ModelCounts, roof: Roofline, *, prompt: int, new_tokens: int) -> tuple[float, float]:
    """(recomputing, with the cache) for ``new_tokens`` after ``prompt``, as the chapter
    counted them: every recompute pass over the whole sequence; the prefill and then one
    step per further token."""
    recompute = summed(
        prefill_work(m, prompt=n, writes_cache=False).predict(roof) for n in range(prompt, prompt + new_tokens)
    )
    steps = [decode_work(m, context=c).predict(roof) for c in range(prompt, prompt + new_tokens - 1)]
    cached = summed([prefill_work(m, prompt=prompt).predict(roof), *steps])
    return recompute.total.value * 1e3, cached.total.value * 1e3


def draft_cost(m: ModelCounts, roof: Roofline, bits: float) -> float:
    """A step of the same model with its weights at ``bits`` per weight (norms and
    embeddings too: the head is the embedding), over the fp16 step, at the smallest context."""
    light = replace(m, weight_bytes=round(m.weight_bytes * bits / 16))
    return _ms(decode_work(light, context=FLAT_FROM), roof) / _ms(decode_work(m, context=FLAT_FROM), roof)


def card_row(gpu: Gpu) -> dict:
    m, roof = qwen(), roofline(gpu)
    floor = m.weight_bytes / roof.bandwidth.value * 1e3
    step = _ms(decode_work(m, context=SPLIT_PROMPT), roof)
    prefill_per_token = _ms(prefill_work(m, prompt=SPLIT_PROMPT), roof) / SPLIT_PROMPT
    recompute, cached = generation_ms(m, roof, prompt=SPLIT_PROMPT, new_tokens=NEW_TOKENS)
    rise = _ms(decode_work(m, context=FLAT_TO), roof) / _ms(decode_work(m, context=FLAT_FROM), roof) - 1
    return {
        "card": gpu.key,
        "name": gpu.name,
        "memory_gib": gpu.memory_gib,
        "bandwidth_gb_s": gpu.bandwidth_gb_s,
        "fp16_tflops": gpu.fp16_tflops,
        "balance_flops_per_byte": roof.balance(DTYPE).value,
        "decode_floor_ms": floor,
        "tokens_per_s": 1e3 / floor,
        **{f"compute_bound_batch_{c}": compute_bound_batch(m, roof, c) for c in BATCH_CONTEXTS},
        "token_cost_ratio": step / prefill_per_token,
        "kv_speedup": recompute / cached,
        "decode_rise": rise,
        **{f"{name}_draft_cost": draft_cost(m, roof, bits) for name, bits in DRAFT_BITS.items()},
        "source": gpu.source,
    }


def speculation_rows(gpu: Gpu) -> list[dict]:
    m, roof = qwen(), roofline(gpu)
    one = _ms(decode_work(m, context=BATCH_CONTEXTS[0]), roof)
    rows = []
    for gamma in GAMMAS:
        # the target verifies gamma drafted tokens and adds its own in one pass of gamma + 1 rows
        verify = _ms(decode_work(m, context=BATCH_CONTEXTS[0], queries=gamma + 1), roof) / one
        for alpha in ALPHAS:
            tokens = expected_tokens_per_verification(alpha=alpha, gamma=gamma)
            rows.append(
                {
                    "card": gpu.key,
                    "name": gpu.name,
                    "gamma": gamma,
                    "alpha": alpha,
                    "verify_cost": verify,
                    "expected_tokens": tokens,
                    "break_even_draft_cost": max(0.0, (tokens - verify) / gamma),
                }
            )
    return rows


def tables() -> dict[str, list[dict]]:
    return {
        "gpu_predictions": [card_row(g) for g in GPUS],
        "gpu_speculation": [r for g in GPUS for r in speculation_rows(g)],
    }


def values() -> dict:
    """The chapter's own step and prefill against the floors its laptop GPU's range gives."""
    from measure.reference.chapter import FIGURES

    fig = {f.name: f.value for f in FIGURES}
    m = qwen()
    rows = {g.key: card_row(g) for g in GPUS}
    low, high = rows["laptop_low"], rows["laptop_high"]
    prefill_floor = {k: _ms(prefill_work(m, prompt=SPLIT_PROMPT), roofline(g)) for k, g in ((g.key, g) for g in GPUS)}
    return {
        "predicted_dtype": DTYPE,
        "kv_bytes_per_token_fp16": m.kv_bytes_per_token,
        "weight_bytes_fp16": m.weight_bytes,
        "kv_share_fp16": m.kv_bytes_per_token / m.weight_bytes,
        # its slowest laptop card gives the highest floor, so the least its step can be over it
        "step_over_floor_low": fig["decode_s_per_step"] * 1e3 / low["decode_floor_ms"],
        "step_over_floor_high": fig["decode_s_per_step"] * 1e3 / high["decode_floor_ms"],
        "prefill_over_floor_low": fig["prefill_s"] * 1e3 / prefill_floor["laptop_low"],
        "prefill_over_floor_high": fig["prefill_s"] * 1e3 / prefill_floor["laptop_high"],
        "laptop_floor_low_ms": high["decode_floor_ms"],
        "laptop_floor_high_ms": low["decode_floor_ms"],
        "laptop_token_cost_ratio_low": min(low["token_cost_ratio"], high["token_cost_ratio"]),
        "laptop_token_cost_ratio_high": max(low["token_cost_ratio"], high["token_cost_ratio"]),
        "laptop_kv_speedup_low": min(low["kv_speedup"], high["kv_speedup"]),
        "laptop_kv_speedup_high": max(low["kv_speedup"], high["kv_speedup"]),
        "laptop_decode_rise_low": min(low["decode_rise"], high["decode_rise"]),
        "laptop_decode_rise_high": max(low["decode_rise"], high["decode_rise"]),
        "cache_passes": DYNAMIC_CACHE_PASSES,
    }
