"""§3 How big the cache is.

Measures, for the run's model and for the Qwen2.5-0.5B architecture (the chapter's
model, instantiated from its config with random weights; the cache's size does not
depend on weight values):

* ``bytes_per_token``: the formula 2 x L x H_kv x d x bytes per element, per model.
* ``measured``: the bytes the model's real cache occupies, for several batch x tokens
  shapes: small ones filled by a real prefill (DynamicCache), the three 65,536-token
  shapes by allocating the model's own preallocated cache (StaticCache) at that shape.
  Each row reads the bytes of the cache's storages and the growth reported by the
  allocator (CUDA) or the resident set (CPU), next to the formula.
* ``attention_variants``: MHA / GQA / MQA: the same architecture with H_kv = H, the
  actual H_kv, and 1, each cache allocated and measured.
* ``context_7b``: a 7B-class shape (32 layers, 8 KV heads of dim 128, fp16): its
  measured bytes per token, then the cache at 4k-128k tokens against fp16 weights.

Its tables are declared in ``tables``. Writes ``site_data/cache_size/``.
Alone: ``python -m measure run --only cache_size``.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

import torch

from measure.experiments.cache_size.tables import TABLES, VALUES
from measure.lab import memory
from measure.lab.context import Context
from measure.lab.estimate import ForwardPasses
from measure.lab.formulas import kv_bytes_per_token
from measure.lab.generation import cache_storage_bytes, prefill
from measure.lab.models import architecture_config, architecture_shape
from sitedata.schema import Result

__all__ = ["TABLES", "TITLE", "VALUES", "Config", "run", "work"]

TITLE = "How big the cache is"
SEVEN_B = {  # spec §3.4: a 7B-class Llama shape
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 11008,
    "vocab_size": 32000,
}
SEVEN_B_PARAMS = 7.0e9  # spec §3.4 / §10: the stated parameter count of the class


@dataclass(frozen=True, kw_only=True)
class Config:
    prefill_shapes: tuple[tuple[int, int], ...] = ((1, 295), (4, 128))
    static_shapes: tuple[tuple[int, int], ...] = ((1, 4096), (32, 2048), (64, 1024), (128, 512))
    static_dtype: str = "float16"  # the chapter's cache dtype
    variant_tokens: int = 1024
    contexts_7b: tuple[int, ...] = (4096, 8192, 32768, 128000)
    reference_arch: str = "qwen2.5-0.5b"

    @classmethod
    def for_profile(cls, profile: str) -> Config:
        if profile in ("full", "cpu"):
            return cls()  # allocation, not arithmetic: cheap enough on a CPU
        return cls(
            prefill_shapes=((1, 7),),
            static_shapes=((2, 8), (4, 4)),
            variant_tokens=8,
            contexts_7b=(16,),
            reference_arch="tiny",
        )


def _shape_of(config) -> dict:
    return architecture_shape(config)


def allocate_static(config, *, batch: int, tokens: int, dtype: torch.dtype, device: torch.device):
    """The model's own preallocated cache at (batch, tokens), every layer initialised."""
    from transformers import StaticCache

    shape = _shape_of(config)
    cache = StaticCache(config=config, max_cache_len=tokens)
    cache.early_initialization(
        batch_size=batch, num_heads=shape["kv_heads"], head_dim=shape["head_dim"], dtype=dtype, device=device
    )
    return cache


def random_model(config, dtype: torch.dtype, device: torch.device):
    """The architecture with every parameter drawn from N(0, 0.02), seed 0. Its cache's
    bytes depend on the shape alone; transformers' own initialisation, module by module,
    took 9 s for Qwen2.5-0.5B on two cores, one draw per parameter under 3 s."""
    from transformers import AutoModelForCausalLM
    from transformers.initialization import no_init_weights

    with no_init_weights():
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.02, generator=generator)
    return model.to(device).eval()


def _grown_by(fn, device: torch.device):
    """Run ``fn`` and return (its result, how much the allocator / resident set grew)."""
    before = memory.settled_bytes(device)
    out = fn()
    return out, memory.settled_bytes(device) - before


def _random_ids(vocab: int, batch: int, tokens: int, device: torch.device) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, vocab, (batch, tokens), generator=g).to(device)


def _measured_rows(ctx: Context, cfg: Config, name: str, config, model, *, own: bool) -> list[dict]:
    """``own``: the run's model, prompted with book text; another model (random weights,
    no tokenizer) gets random ids from its own vocabulary."""
    shape = _shape_of(config)
    rows = []
    static_dtype = getattr(torch, cfg.static_dtype)
    plan = [("prefill", b, t, ctx.dtype) for b, t in cfg.prefill_shapes if model is not None]
    plan += [("static allocation", b, t, static_dtype) for b, t in cfg.static_shapes]
    if model is not None:  # the first forward pass allocates one-time state (thread pools, kernels)
        prefill(model, ctx.prompt_ids(4) if own else _random_ids(config.vocab_size, 1, 4, ctx.device))
    for method, batch, tokens, dtype in ctx.progress(plan, f"cache bytes, {name}"):
        if method == "prefill":
            ids = ctx.prompt_ids(tokens, batch) if own else _random_ids(config.vocab_size, batch, tokens, ctx.device)
            (_, cache), grew = _grown_by(lambda: prefill(model, ids), ctx.device)
        else:
            cache, grew = _grown_by(
                lambda: allocate_static(config, batch=batch, tokens=tokens, dtype=dtype, device=ctx.device), ctx.device
            )
        measured = cache_storage_bytes(cache)
        elem = torch.empty((), dtype=dtype).element_size()
        per_token = kv_bytes_per_token(
            layers=shape["layers"], kv_heads=shape["kv_heads"], head_dim=shape["head_dim"], bytes_per_element=elem
        )
        resident = batch * tokens
        rows.append(
            {
                "model": name,
                "method": method,
                "batch": batch,
                "tokens": tokens,
                "resident_tokens": resident,
                "dtype": str(dtype).removeprefix("torch."),
                "measured_bytes": measured,
                "formula_bytes": per_token * resident,
                "measured_bytes_per_token": measured // resident,
                "matches_formula": measured == per_token * resident,
                # A prefill's few MB of cache drown in heap noise of the resident set; only the
                # CUDA allocator's live bytes resolve them. Large allocations are clear on both.
                "allocator_growth_bytes": grew if method != "prefill" or ctx.device.type == "cuda" else None,
            }
        )
        del cache
        gc.collect()
    return rows


def _variants(ctx: Context, cfg: Config, name: str, config) -> list[dict]:
    shape = _shape_of(config)
    rows = []
    heads = shape["heads"]
    for label, kv in (("MHA", heads), ("GQA (actual)", shape["kv_heads"]), ("MQA", 1)):
        if label == "GQA (actual)" and kv in (heads, 1):
            continue  # the model itself is MHA or MQA: that row is already there
        variant = config.__class__.from_dict({**config.to_dict(), "num_key_value_heads": kv})
        cache = allocate_static(
            variant, batch=1, tokens=cfg.variant_tokens, dtype=getattr(torch, cfg.static_dtype), device=ctx.device
        )
        per_token = cache_storage_bytes(cache) // cfg.variant_tokens
        rows.append(
            {"model": name, "variant": label, "heads": heads, "kv_heads": kv, "measured_bytes_per_token": per_token}
        )
        del cache
    mha = rows[0]["measured_bytes_per_token"]
    for r in rows:
        r["fraction_of_mha"] = r["measured_bytes_per_token"] / mha
    return rows


def work(cfg: Config) -> ForwardPasses:
    """The forward passes of a run, for the estimate printed before it starts: the
    prefills whose caches are measured (the rest is allocation)."""
    return ForwardPasses(prefill_tokens=sum(b * t for b, t in cfg.prefill_shapes))


def run(cfg: Config, ctx: Context) -> Result:
    from transformers import AutoConfig

    models = [(ctx.model.name, ctx.model.config, ctx.model.model)]
    ref_name = f"arch:{cfg.reference_arch}"
    if ctx.model.name != ref_name:
        models.append((ref_name, architecture_config(cfg.reference_arch), None))
    formula_rows, measured, variants = [], [], []
    for name, config, model in models:
        s = _shape_of(config)
        for dtype in sorted({ctx.dtype, getattr(torch, cfg.static_dtype)}, key=str):
            elem = torch.empty((), dtype=dtype).element_size()
            formula_rows.append(
                {
                    "model": name,
                    "layers": s["layers"],
                    "kv_heads": s["kv_heads"],
                    "head_dim": s["head_dim"],
                    "dtype": str(dtype).removeprefix("torch."),
                    "bytes_per_element": elem,
                    "formula_bytes_per_token": kv_bytes_per_token(
                        layers=s["layers"], kv_heads=s["kv_heads"], head_dim=s["head_dim"], bytes_per_element=elem
                    ),
                }
            )
        if model is None and name == ref_name and cfg.prefill_shapes:
            ctx.log(f"  building {ref_name} with random weights for a real prefill")
            model = random_model(config, ctx.dtype, ctx.device)
        measured += _measured_rows(ctx, cfg, name, config, model, own=model is ctx.model.model)
        variants += _variants(ctx, cfg, name, config)
        del model
        gc.collect()

    seven = AutoConfig.for_model(SEVEN_B["model_type"], **{k: v for k, v in SEVEN_B.items() if k != "model_type"})
    cache = allocate_static(seven, batch=1, tokens=cfg.variant_tokens, dtype=torch.float16, device=ctx.device)
    seven_per_token = cache_storage_bytes(cache) // cfg.variant_tokens
    del cache
    weights_bytes = int(SEVEN_B_PARAMS * 2)
    context_rows = [
        {
            "context_tokens": t,
            "cache_bytes": seven_per_token * t,
            "weights_bytes": weights_bytes,
            "cache_to_weights": seven_per_token * t / weights_bytes,
        }
        for t in cfg.contexts_7b
    ]

    big = [r for r in measured if r["method"] == "static allocation" and r["batch"] > 1]
    tables = {
        "bytes_per_token": formula_rows,
        "measured": measured,
        "attention_variants": variants,
        "context_7b": context_rows,
    }
    values = {
        "seven_b_bytes_per_token": seven_per_token,
        "seven_b_params": SEVEN_B_PARAMS,
        "all_match": all(r["matches_formula"] for r in measured),
        "big_shapes_equal": len({r["measured_bytes"] for r in big if r["model"] == ref_name}) == 1,
        "reference_model": ref_name,
    }
    return Result(tables=tables, values=values)
