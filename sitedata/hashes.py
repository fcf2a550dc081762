"""The two hashes that tie what a build shows to what produced it.

* The data's hash (``data_hash``): sha256 over every experiment's meta.json, each of
  which records its tables' checksums, so any change to a published number changes it.
* A notebook's code hash (``notebook_code_hash``): sha256 over its code cells.

A notebook page is executed against site_data/ and records both in its metadata, under
``NOTEBOOK_KEY``: ``{"data": <data hash>, "code": <code hash>}``. The build compares them
with the current ones, so a notebook can never show older numbers than the pages beside
it (measure/notebooks.py, hooks/render.py); the figures' cache is keyed by the data's
hash too (sitekit/figures)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitedata.read import experiment_names
from sitedata.store import META

NOTEBOOK_KEY = "site"  # notebook.metadata["site"] = {"data": <data hash>, "code": <code hash>}


def data_hash(root: Path) -> str:
    """sha256 over every experiment's meta.json, as written: each records its tables'
    checksums, so a change to any published number changes this."""
    h = hashlib.sha256()
    for name in experiment_names(root):
        h.update(name.encode())
        h.update((Path(root) / name / META).read_bytes())
    return h.hexdigest()[:16]


def code_cells(notebook: dict) -> list[str]:
    """The code cells' sources; a raw .ipynb may hold a source as a list of lines."""
    sources = [cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return ["".join(s) if isinstance(s, list) else s for s in sources]


def notebook_code_hash(notebook: dict) -> str:
    """sha256 over the notebook's code cells, in order: what ran, not the words around it."""
    h = hashlib.sha256()
    for source in code_cells(notebook):
        h.update(source.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def staleness(notebook: dict, data: str, english: dict | None = None) -> str | None:
    """Why a notebook's outputs cannot stand beside the data whose hash is ``data``, or
    None: executed against other data, its code changed since, or, for an edition, code
    cells other than its ``english`` notebook's."""
    stamp = notebook.get("metadata", {}).get(NOTEBOOK_KEY, {})
    if stamp.get("data") != data:
        return " was executed against other data than site_data/ holds now"
    if stamp.get("code") != notebook_code_hash(notebook):
        return ": its code changed since it was executed"
    if english is not None and stamp.get("code") != notebook_code_hash(english):
        return ": its code cells differ from its English notebook's"
    return None
