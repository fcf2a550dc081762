"""Fingerprints that tie a notebook's outputs to the data and code that produced them.

A notebook page is executed against site_data/ and records both fingerprints in its
metadata; the build compares them with the current ones, so a notebook can never show
older numbers than the pages beside it (measure/notebooks.py, hooks/render.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitedata.read import experiment_names
from sitedata.store import META

METADATA_KEY = "site"  # notebook.metadata["site"] = {"data": ..., "code": ...}


def data_fingerprint(root: Path) -> str:
    """sha256 over every experiment's meta.json: each records its tables' checksums, so a
    change to any published number changes this."""
    h = hashlib.sha256()
    for name in experiment_names(root):
        h.update(name.encode())
        h.update((Path(root) / name / META).read_bytes())
    return h.hexdigest()[:16]


def code_cells(notebook: dict) -> list[str]:
    """The code cells' sources; a raw .ipynb may hold a source as a list of lines."""
    sources = [cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return ["".join(s) if isinstance(s, list) else s for s in sources]


def staleness(notebook: dict, data: str, english: dict | None = None) -> str | None:
    """Why a notebook's outputs cannot stand beside ``data`` (the current data
    fingerprint), or None: executed against other data, its code changed since, or, for
    an edition, code cells other than its ``english`` notebook's."""
    stamp = notebook.get("metadata", {}).get(METADATA_KEY, {})
    if stamp.get("data") != data:
        return " was executed against other data than site_data/ holds now"
    if stamp.get("code") != code_fingerprint(notebook):
        return ": its code changed since it was executed"
    if english is not None and stamp.get("code") != code_fingerprint(english):
        return ": its code cells differ from its English notebook's"
    return None


def code_fingerprint(notebook: dict) -> str:
    """sha256 over the notebook's code cells, in order: what ran, not the words around it."""
    h = hashlib.sha256()
    for source in code_cells(notebook):
        h.update(source.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]
