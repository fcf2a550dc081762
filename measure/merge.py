"""``python -m measure merge FOLDER``: bring experiments measured elsewhere (the GPU
command writes them into a folder of their own) into site_data, verified and whole.

Every experiment folder in FOLDER is checked before any is installed: it must verify
against its meta.json (strictly: regular UTF-8 files it lists, nothing hidden, no link),
come from the code this checkout holds (the same code hash), or the pages would show
numbers from other code, and have a place in the target that is not a link. Each is
then swapped into site_data whole, from the very text verified, its provenance (device,
dtype, libraries, date) kept as measured. A stop or an error says, per experiment, what
the target holds then.

A folder may hold several runs (sitedata.runs): each goes to the run of its own key in
site_data, the primary's or one under runs/<key>/, and leaves every other run as it was.

FOLDER's calibration folder (the runs its experiments were measured in) is verified
with them and merged first: its rows join those already in site_data before any
experiment that names them is swapped in, and once they are in place every row whose run
an experiment still names is kept (``measure/calibration_folder.py``). The merge holds
the target's lock from its first write to its last (``measure/out_folder.py``): a run or
another merge into the same folder meanwhile is refused.
"""

from __future__ import annotations

from pathlib import Path

from measure import calibration_folder, registry
from measure.errors import UserError
from measure.ondisk import Writes
from measure.out_folder import check_place, holding
from sitedata import DataError, FolderError, read_experiment
from sitedata.folder import folder_problem, target_problem
from sitedata.runs import place, runs
from sitedata.store import META, write_files


def merge(*, source: Path, into: Path, only: str | None = None, writes: Writes | None = None) -> list[str]:
    """Every run in ``source`` (its primary and any under runs/) merged into the run of
    the same key in ``into``: the primary if ``into`` holds none or that key's, else
    ``into/runs/<key>`` (sitedata.runs.place); no other run is touched."""
    if not Path(source).is_dir():
        raise UserError(f"{source} is not a folder")
    check_place(into, "nothing merged: --into")
    problem = folder_problem(into)
    if problem:
        raise UserError(f"nothing merged: {problem}")
    try:
        incoming = runs(source)
    except DataError as e:
        raise UserError(f"nothing merged: {e}") from None
    if not incoming:
        raise UserError(f"{source} holds no experiment folder to merge")
    writes = writes if writes is not None else Writes(into, merge=True)
    lines = []
    with holding(Path(into), "measure merge", "nothing merged: "):  # the whole folder, its other runs too
        for run in incoming:
            try:
                target = place(Path(into), run.key, run.experiments)
            except (DataError, FolderError) as e:
                raise UserError(f"nothing merged: {e}") from None
            writes.out = target  # what a stop or an error says is on disk is this run's folder
            if target != Path(into):
                lines.append(f"run {run.key}: beside the primary run, in {target}")
            lines += _merge_run(run.root, target, run.experiments, only, writes)
    return lines


def _merge_run(source: Path, into: Path, found: tuple[str, ...], only: str | None, writes: Writes) -> list[str]:
    """One run's experiments ``found`` in ``source``, all verified first, merged into the
    data folder ``into``."""
    from measure.lab.provenance import code_hash

    names = [n for n in registry.select(only) if n in found] if only else found
    if not names:
        raise UserError(f"{source} holds no experiment folder to merge" + (f" among {only}" if only else ""))
    checked = []
    for name in names:
        registry.load(name)
        try:
            exp = read_experiment(source, name, strict=True)
        except DataError as e:
            raise UserError(f"nothing merged: {e}") from None
        if exp.meta["code_hash"] != code_hash(name):
            raise UserError(
                f"nothing merged: {name} in {source} was measured by other code (hash {exp.meta['code_hash']}, "
                f"this checkout {code_hash(name)}); measure it again with this checkout"
            )
        problem = target_problem(into, name)
        if problem:
            raise UserError(f"nothing merged: {problem}")
        checked.append(exp)
    try:
        calibration = calibration_folder.incoming(source)
    except DataError as e:
        raise UserError(f"nothing merged: {e}") from None
    problem = calibration and target_problem(into, calibration_folder.FOLDER)
    if problem:
        raise UserError(f"nothing merged: {problem}")
    with holding(Path(into), "measure merge", "nothing merged: "):
        return _install(Path(into), checked, calibration, writes)


def _install(into: Path, checked: list, calibration, writes: Writes) -> list[str]:
    """The verified experiments swapped into ``into``, the calibration's rows first."""
    lines = []
    try:
        if calibration is not None:
            calibration_folder.merge_into(into, calibration, set().union(*map(calibration_folder.run_named, checked)))
    except (OSError, FolderError) as e:
        raise UserError(f"merging the calibration into {into} failed ({e}); {writes.describe()}") from None
    for exp in checked:
        files = exp.files()
        writes.begin(exp.name)
        writes.writing(exp.name, files[META])
        try:
            write_files(into, exp.name, files)
        except (OSError, FolderError) as e:
            raise UserError(f"merging {exp.name} into {into} failed ({e}); {writes.describe()}") from None
        m = exp.meta
        lines.append(f"merged {exp.name}: {m['device']['id']}, {m['dtype']}, {m['profile']} profile, {m['date']}")
    if calibration is not None:
        try:
            lines.append(calibration_folder.settle(into, calibration))
        except (OSError, FolderError) as e:
            why = f"dropping the calibration rows no experiment names failed ({e})"
            raise UserError(f"{why}; {writes.describe()}") from None
    return lines
