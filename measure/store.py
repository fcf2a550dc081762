"""The result store: ``site_data/<experiment>/<table>.csv`` plus ``meta.json``.

Files are replaced atomically (write a sibling temp file, fsync, rename), so a run
stopped by Ctrl-C or a crash leaves every previously written file whole. The CSVs are
written before meta.json, and meta.json lists the tables it describes: a reader that
trusts meta.json never sees a table without its provenance.

CSV conventions: snake_case columns in declared order, rows in the order the
experiment produced them, no timestamps (dates live in meta.json), so that a re-run
produces a clean diff.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from measure.schema import Result, Table

SCHEMA_VERSION = 1


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        # KeyboardInterrupt included: never leave the temp file, never touch the target.
        Path(tmp).unlink(missing_ok=True)
        raise


def _cell(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)  # shortest exact round-trip, stable across runs
    return v


def table_to_csv(table: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c.name for c in table.columns])
    for row in table.rows:
        w.writerow([_cell(row[c.name]) for c in table.columns])
    return buf.getvalue()


def write_result(root: Path, experiment: str, result: Result, provenance: dict) -> Path:
    """Write one experiment's tables and meta.json under ``root/experiment``."""
    folder = Path(root) / experiment
    for table in result.tables:
        atomic_write_text(folder / f"{table.name}.csv", table_to_csv(table))
    meta = {
        "schema_version": SCHEMA_VERSION,
        "experiment": experiment,
        **provenance,
        "tables": {
            t.name: {
                "title": t.title,
                "file": f"{t.name}.csv",
                "rows": len(t.rows),
                "columns": [
                    {
                        "name": c.name,
                        "unit": c.unit,
                        "kind": c.kind,
                        "label": c.label or c.name,
                        "description": c.description,
                    }
                    for c in t.columns
                ],
            }
            for t in result.tables
        },
        "values": {
            v.name: {"value": v.value, "unit": v.unit, "kind": v.kind, "description": v.description}
            for v in result.values
        },
        "notes": result.notes,
    }
    atomic_write_text(folder / "meta.json", json.dumps(meta, indent=2, sort_keys=False, default=str) + "\n")
    # A table this run no longer produces would otherwise linger and look current.
    produced = {f"{t.name}.csv" for t in result.tables}
    for old in folder.glob("*.csv"):
        if old.name not in produced:
            old.unlink()
    return folder


def read_meta(root: Path, experiment: str) -> dict:
    with open(Path(root) / experiment / "meta.json", encoding="utf-8") as f:
        return json.load(f)
