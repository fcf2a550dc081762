"""Runs side by side: one run per key in one data folder.

A run's **key** names what its numbers depend on: the machine, the model, the dtype and
the profile (``run_key``), written in each meta.json since format version 5 and worked
out from the same fields for data written before (``sitedata.migrate.update_to_5``).

``site_data/`` holds the **primary** run, the one the prose is written about, as
experiment folders at its top, as it always has; every other run lies whole under
``runs/<key>/``, a data folder of its own (its marker, its lock, its experiment folders,
its calibration), so that everything the data layer guarantees a folder (whole-folder
writes, checksums, bounds, the marker, the confinement) holds for each run as it holds
for the primary. A run goes to the primary's folder unless that holds one of its
experiments from another key, and then under its own key (``place``): so the primary may
gather experiments of several keys (a trained model's quality beside a random-weight
model's timings, as the test suite's smoke folder does), while a folder under runs/ holds
one key only, and a run under a folder named for another key is refused when read
(``runs``).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from sitedata.bounds import MAX_META_BYTES, Refused, open_folder, parse_json, read_text
from sitedata.folder import FolderError
from sitedata.format import META, SCHEMA_VERSION
from sitedata.keys import KEY
from sitedata.machine_speed import FOLDER as CALIBRATION  # the record of every run a folder's experiments name
from sitedata.migrate import migrated
from sitedata.names import shown
from sitedata.read import DataError, experiment_names

RUNS = "runs"  # site_data/runs/<key>/: the runs beside the primary


@dataclass(frozen=True)
class Run:
    key: str
    root: Path  # the data folder holding the run's experiment folders
    primary: bool
    experiments: tuple[str, ...] = ()  # this run's experiments in ``root``


def folder_keys(root: Path, *, readable_only: bool = False) -> dict[str, str]:
    """Each experiment of the data folder ``root`` (its calibration aside) -> the key of
    its run, from its meta.json alone (read within bounds, never through a link,
    migrated to the current format); the experiments' own verification is their
    reader's (``read_experiment``). ``readable_only``: an experiment whose meta.json
    cannot be read is left out (a run that writes it replaces it) instead of refused."""
    found = {}
    for name in experiment_names(root):
        if name == CALIBRATION:
            continue
        try:
            found[name] = _meta_key(Path(root), name)
        except DataError:
            if not readable_only or (Path(root) / name).is_symlink():  # a link is never written through
                raise
    return found


def folder_key(root: Path) -> str | None:
    """The key of the one run in the data folder ``root`` (None if it holds no
    experiment); DataError if its experiments come from more than one key."""
    return _one_key(root, folder_keys(root))


def _one_key(root: Path, found: dict[str, str]) -> str | None:
    keys = {key: name for name, key in sorted(found.items())}
    if len(keys) > 1:
        found_text = ", ".join(f"{name} ({key})" for key, name in sorted(keys.items()))
        raise DataError(f"{Path(root).name} mixes runs of different keys: {found_text}; one folder holds one run")
    return next(iter(keys), None)


def _meta_key(root: Path, name: str) -> str:
    if (root / name).is_symlink():
        raise DataError(
            f"{root / name} is a symbolic link; an experiment's folder is replaced whole, never through a link"
        )
    try:
        with open_folder(root, name) as fd:
            try:
                meta = migrated(parse_json(read_text(fd, META, MAX_META_BYTES)), SCHEMA_VERSION)
            except Refused as e:
                raise DataError(f"{root / name / META} {e}") from None
    except Refused as e:
        raise DataError(f"{root / name} {e}") from None
    except OSError as e:
        raise DataError(f"{root / name / META} could not be read ({e.strerror or e})") from None
    key = meta.get("key") if isinstance(meta, dict) else None
    if not isinstance(key, str) or not KEY.fullmatch(key):
        raise DataError(f"{root / name / META} names no run key; re-measure it: make measure ONLY={name}")
    return key


def runs(root: Path) -> list[Run]:
    """Every run in the data folder ``root``, verified: the primary's first, one per key
    its experiments come from (most experiments first: the site's own run leads), then
    each ``runs/<key>/`` in the order of its key."""
    root = Path(root)
    top: dict[str, list[str]] = {}
    for name, key in sorted(folder_keys(root).items()):
        top.setdefault(key, []).append(name)
    found = [Run(key, root, True, tuple(names)) for key, names in sorted(top.items(), key=lambda kv: -len(kv[1]))]
    for name in _run_folders(root):
        if not KEY.fullmatch(name):
            raise DataError(f"{RUNS}/{shown(name)} is not a run's key (machine__model__dtype__profile)")
        keys = folder_keys(root / RUNS / name)
        key = _one_key(root / RUNS / name, keys)
        if key is None:
            continue  # a run's folder left empty: nothing to show
        if key != name:
            raise DataError(f"{RUNS}/{name} holds a run of key {key}; a run lies under its own key")
        found.append(Run(key, root / RUNS / name, False, tuple(keys)))
    return found


def run_of(found: list[Run], key: str) -> Path | None:
    """The folder holding the run of ``key`` among the runs ``found`` in one data folder:
    its runs/<key>/, else the primary's folder where experiments there are of that key;
    None if neither."""
    beside = [run.root for run in found if run.key == key and not run.primary]
    top = [run.root for run in found if run.key == key and run.primary]
    return (beside or top or [None])[0]


def _run_folders(root: Path) -> list[str]:
    """The entries of ``root/runs``, each a folder and never a link (DataError otherwise)."""
    where = root / RUNS
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(st.st_mode):
        raise DataError(f"{where} is not a folder of its own; runs/ holds one data folder per run")
    names = sorted(n for n in os.listdir(where) if not n.startswith("."))
    for name in names:
        if not stat.S_ISDIR(os.lstat(where / name).st_mode):
            raise DataError(f"{RUNS}/{shown(name)} is not a folder of its own; runs/ holds one data folder per run")
    return names


def place(root: Path, key: str, experiments: list[str] | tuple[str, ...] = ()) -> Path:
    """Where a run of ``key`` writing ``experiments`` goes in the data folder ``root``:
    ``root`` itself when none of them is there of another key (a first run, the same
    key's, or experiments the primary does not hold), else ``root/runs/<key>``, ``runs/``
    made here if it is missing (never through a link: FolderError). A run is never
    split: all its experiments go to one folder."""
    root = Path(root)
    if not KEY.fullmatch(key):
        raise FolderError(f"{shown(key)} is not a run's key")
    held = folder_keys(root, readable_only=True) if root.is_dir() else {}
    if all(held.get(name, key) == key for name in experiments):
        return root
    where = root / RUNS
    try:
        os.mkdir(where)
    except FileExistsError:
        pass
    if not stat.S_ISDIR(os.lstat(where).st_mode):
        raise FolderError(f"{where} is not a folder of its own; a run is written under runs/, never through a link")
    return where / key
