"""What several test files share: the rows of an experiment's table, read through the
data layer."""

from __future__ import annotations

from pathlib import Path


def table_rows(folder: Path, table: str) -> list[dict[str, str]]:
    """The rows of ``table`` in the experiment folder ``folder`` as written (strings, in
    file order), read and verified against its meta.json by ``sitedata.read``."""
    from sitedata import read_experiment

    folder = Path(folder)
    return read_experiment(folder.parent, folder.name).rows(table)
