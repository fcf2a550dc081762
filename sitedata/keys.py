"""A run's key: what its numbers depend on (the machine, the model, the dtype, the
profile), as one name that can be a folder's (``site_data/runs/<key>/``, sitedata.runs).
Written in every meta.json since format version 5, worked out from the same fields for
data written before (sitedata.migrate.update_to_5)."""

from __future__ import annotations

import re
from typing import Any

_PART = r"[a-z0-9]+(?:-[a-z0-9]+)*"
KEY = re.compile(rf"{_PART}(?:__{_PART}){{3}}")  # machine__model__dtype__profile
PART_LENGTH = 48  # a key stays a folder's name, however long the names it is made of
_TRADEMARKS = re.compile(r"\((?:r|tm|c)\)", re.IGNORECASE)  # "Intel(R) Xeon(R)": the marks say nothing of the machine


def slug(text: str) -> str:
    """``text`` as a part of a key: lower case, every run of other characters one hyphen,
    at most PART_LENGTH characters."""
    part = re.sub(r"[^a-z0-9]+", "-", _TRADEMARKS.sub("", text).lower()).strip("-")[:PART_LENGTH]
    return part.strip("-") or "unknown"


def run_key(meta: dict[str, Any]) -> str:
    """The key of the run a meta.json comes from: its machine (the device's id, which
    names the CPU or the card and the threads), its model (a hub id without its owner),
    its dtype and its profile."""
    model = str(meta["model"]["name"]).rstrip("/").rsplit("/", 1)[-1]
    return "__".join(slug(str(part)) for part in (meta["device"]["id"], model, meta["dtype"], meta["profile"]))
