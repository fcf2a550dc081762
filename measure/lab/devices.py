"""Device choice, and the description of the machine that says which hardware produced a
timing (meta.json's ``device``)."""

from __future__ import annotations

import os
import platform

import torch

from measure.errors import UserError


def choose_device(requested: str = "auto") -> torch.device:
    """``auto`` takes CUDA when present; an explicit ``cuda`` without a GPU is an error."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cpu":
        return torch.device("cpu")
    if requested.startswith("cuda"):
        if not torch.cuda.is_available():
            raise UserError(
                f"device {requested!r} was requested but this machine has no CUDA GPU "
                "(torch sees none); use --device cpu or auto"
            )
        return torch.device(requested)
    raise UserError(f"unknown device {requested!r}: use auto, cpu or cuda")


def default_dtype(device: torch.device) -> torch.dtype:
    """fp16 on a GPU, as the chapter measured; fp32 on a CPU, where fp16 matmuls are slow
    and partly emulated, which would time the emulation rather than the model."""
    return torch.float16 if device.type == "cuda" else torch.float32


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_machine(device: torch.device) -> dict:
    """What a timing depends on: the processor, and its ``id``. Two runs are comparable
    only if ``id`` matches."""
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        name = props.name
        detail = {
            "gpu": name,
            "gpu_memory_bytes": int(props.total_memory),
            "cuda": torch.version.cuda,
        }
        ident = f"cuda:{name}"
    else:
        name = _cpu_name()
        detail = {"cpu": name, "logical_cores": os.cpu_count(), "torch_threads": torch.get_num_threads()}
        ident = f"cpu:{name}:{torch.get_num_threads()}threads"
    return {"id": ident, "type": device.type, **detail}
