"""What ``--model`` may name, checked before anything is imported, loaded or written.

Torch-free, so that the command line can check a request (and print its help) without
importing PyTorch. ``measure.lab.models.preflight`` adds what needs a look at the
installed packages, the Hugging Face cache or the network.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from measure.errors import UserError
from measure.lab.architectures import ARCHITECTURES

DEFAULT_MODEL = "default"
MAX_SPEC = 1024  # characters: a folder's path or an id, never a document
# A Hugging Face id: owner/name, each a word of letters, digits, '-', '_' and '.', no '..'
# or '--', at most 96 characters (huggingface_hub's own rule).
_HUB_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


HUB_HOST = ("huggingface.co", 443)


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """One TCP connection to the hub, so that an offline machine learns it in seconds,
    not after the hub client's retries (about half a minute)."""
    if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
        return False
    try:
        socket.create_connection(HUB_HOST, timeout=timeout_s).close()
        return True
    except OSError:
        return False


def alternatives() -> str:
    return (
        "use `default` (embedded SmolLM2-135M-Instruct), a local folder, or a random-weights "
        f"architecture: {', '.join('arch:' + a for a in ARCHITECTURES)}"
    )


def _shown(name: str) -> str:
    text = repr(name)
    return text if len(text) <= 80 else text[:76] + "...'"


def local_folder(name: str) -> Path | None:
    """The local folder ``name`` names, if it names an existing path."""
    try:
        path = Path(name).expanduser()
        return path if path.exists() else None
    except (OSError, RuntimeError, ValueError):  # too long, an unknown ~user, a NUL
        return None


def check_spec(name: str) -> str:
    """The kind of model ``name`` names ("default", "arch", "local" or "hub"), or one
    UserError line: nothing is loaded, downloaded or written."""
    if len(name) > MAX_SPEC:
        raise UserError(f"model name of {len(name)} characters, more than {MAX_SPEC}; {alternatives()}")
    if name == DEFAULT_MODEL:
        return "default"
    if name.startswith("arch:"):
        if name.removeprefix("arch:") not in ARCHITECTURES:
            raise UserError(f"unknown architecture {_shown(name)}; known: {', '.join(sorted(ARCHITECTURES))}")
        return "arch"
    local = local_folder(name)
    if local is not None:
        if not local.is_dir() or not (local / "config.json").is_file():
            raise UserError(f"model folder {_shown(str(local))} has no config.json")
        return "local"
    if len(name) > 96 or not _HUB_ID.fullmatch(name) or ".." in name or "--" in name:
        raise UserError(
            f"model {_shown(name)} is neither a local folder nor a Hugging Face id (owner/name); {alternatives()}"
        )
    return "hub"
