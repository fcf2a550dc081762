"""The notebook pages, executed against the current site_data/ (or another data folder).

The English notebook, ``docs/<name>.ipynb``, is executed once with nbclient from the
repository's root. Every edition's notebook, ``docs/<name>.<lang>.ipynb``, holds the same
code cells in its own words (its comments, and the labels it prints translated as the
page shows the English run's: sitedata/hashes.py) with its own words around them, and
receives the English run's outputs cell by cell: five editions cost one run. Each
executed notebook records the hashes of the data and of the code it ran
(sitedata/hashes.py); the build refuses a notebook whose hashes are not the current
ones, and this module re-executes only a notebook whose data or code changed.

The data folder reaches the kernel as ``SITE_DATA`` (the notebooks read it there, and
site_data/ beside them without it), so the data hash recorded is that of the
data the notebook read. A folder that holds no experiment is refused before anything
runs or is written.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from measure.errors import UserError
from sitedata.hashes import NOTEBOOK_KEY, data_hash, notebook_code_hash, same_code, staleness
from sitedata.read import experiment_names

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
EDITION = re.compile(r"^(?P<name>[\w-]+)\.(?P<lang>[a-z]{2})\.ipynb$")
TIMEOUT_S = 600  # per cell; the measuring notebook converts the embedded model on a first run
DATA_ENV = "SITE_DATA"  # the data folder the notebooks read, set for their kernel


def english_notebooks(docs: Path = DOCS) -> list[Path]:
    return sorted(p for p in docs.glob("*.ipynb") if not EDITION.match(p.name))


def editions(english: Path) -> list[Path]:
    return sorted(english.parent.glob(f"{english.stem}.*.ipynb"))


def is_current(path: Path, data: str, english: Path | None = None) -> bool:
    """Whether ``path`` was executed (or, for an edition, filled from its ``english``
    notebook's run) against ``data`` with the code it holds now."""
    source = None if english is None else nbformat.read(english, as_version=4)
    return staleness(nbformat.read(path, as_version=4), data, source) is None


def execute(path: Path, data_root: Path, cwd: Path = REPO) -> nbformat.NotebookNode:
    """Run every cell of one notebook against ``data_root``; a failing cell is one line
    naming the notebook."""
    data = data_hash(data_root)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute(env={**os.environ, DATA_ENV: str(Path(data_root).resolve())})
    except CellExecutionError as e:
        last = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise UserError(
            f"{path.relative_to(cwd) if path.is_relative_to(cwd) else path}: a cell failed: {last}"
        ) from None
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timestamps: the file changes only when outputs do
    nb.metadata[NOTEBOOK_KEY] = {"data": data, "code": notebook_code_hash(nb)}
    return nb


def carry_outputs(english: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """An edition's notebook with the English run's outputs in its code cells."""
    nb = nbformat.read(path, as_version=4)
    if not same_code(english, nb):
        raise UserError(
            f"{path.name}: its code cells differ from {path.name.split('.')[0]}.ipynb; an edition translates "
            "its text cells, its code's comments and the labels it prints, never the code"
        )
    ran = iter(c for c in english.cells if c.cell_type == "code")
    for cell in nb.cells:
        if cell.cell_type == "code":
            source = next(ran)
            cell.outputs, cell.execution_count = source.outputs, source.execution_count
            cell.metadata.pop("execution", None)
    nb.metadata[NOTEBOOK_KEY] = dict(english.metadata[NOTEBOOK_KEY])
    return nb


def run(data_root: Path, *, force: bool = False, docs: Path = DOCS, log=print) -> int:
    """Execute every notebook whose data or code changed; returns how many ran."""
    if not experiment_names(data_root):
        raise UserError(f"--data {data_root}: no experiment's data there (no <experiment>/meta.json); nothing was run")
    data = data_hash(data_root)
    ran = 0
    for english in english_notebooks(docs):
        group = [english, *editions(english)]
        if not force and all(is_current(p, data, None if p == english else english) for p in group):
            log(f"notebook {english.name}: up to date with {data_root}, skipped")
            continue
        start = time.perf_counter()
        log(f"notebook {english.name}: executing against {data_root} ...")
        done = execute(english, data_root)
        outputs = {english: done} | {p: carry_outputs(done, p) for p in group[1:]}
        for path, nb in outputs.items():
            nbformat.write(nb, path)
        log(f"notebook {english.name}: {len(group)} editions written in {time.perf_counter() - start:.1f} s")
        ran += 1
    return ran
