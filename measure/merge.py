"""``python -m measure merge FOLDER``: bring experiments measured elsewhere (the GPU
command writes them into a folder of their own) into site_data, verified and whole.

Every experiment folder in FOLDER is checked before any is installed: it must verify
against its meta.json and come from the code this checkout holds (the same code hash),
or the pages would show numbers from other code. Each is then swapped into site_data
whole, its provenance (device, dtype, libraries, date) kept as measured.
"""

from __future__ import annotations

from pathlib import Path

from measure import registry
from measure.errors import UserError
from sitedata import DataError, experiment_names, read_experiment
from sitedata.store import install_experiment


def merge(*, source: Path, into: Path, only: str | None = None) -> list[str]:
    from measure.lab.provenance import code_hash

    if not Path(source).is_dir():
        raise UserError(f"{source} is not a folder")
    found = experiment_names(source)
    names = [n for n in registry.select(only) if n in found] if only else found
    if not names:
        raise UserError(f"{source} holds no experiment folder to merge" + (f" among {only}" if only else ""))
    checked = []
    for name in names:
        registry.load(name)
        try:
            exp = read_experiment(source, name)
        except DataError as e:
            raise UserError(f"nothing merged: {e}") from None
        if exp.meta["code_hash"] != code_hash(name):
            raise UserError(
                f"nothing merged: {name} in {source} was measured by other code (hash {exp.meta['code_hash']}, "
                f"this checkout {code_hash(name)}); measure it again with this checkout"
            )
        checked.append(exp)
    lines = []
    for exp in checked:
        install_experiment(exp.folder, into, exp.name)
        m = exp.meta
        lines.append(f"merged {exp.name}: {m['device']['id']}, {m['dtype']}, {m['profile']} profile, {m['date']}")
    return lines
