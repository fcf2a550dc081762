"""Run a list of experiments on one model; each experiment's folder is replaced whole
as soon as it is measured, so an interruption loses at most the experiment in progress
and never mixes two runs in one folder.

Before any file is touched the whole request is checked (an experiment list, a profile,
a device, the model's name, an output folder that is a data folder of this project in a
place it may write (``measure/out_folder.py``) and can be written); then the folder's
lock is taken for the whole run (a second run or a merge into it is refused), what a
stopped write left is cleaned up, and an experiment whose committed data came from the
same code, model, machine and profile is skipped unless ``force`` is given. A stop or an
error is reported by what is on disk (``Writes``).

A run that measures anything calibrates the machine first and last
(``measure/lab/calibration.py``): every experiment gets the start calibration in its
context and its provenance (``run``), and ``calibration/`` gets the run's row at the end
(``measure/calibration_folder.py``), its end columns empty if the run stopped before
its end was measured. That row is written first, with the start calibration, before the
run's first experiment is swapped in: no experiment on disk names a run without a row.
A run with everything up to date measures nothing, not even that.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from measure import registry
from measure.calibration_folder import FOLDER as CALIBRATION
from measure.calibration_record import RunRecord
from measure.errors import UserError
from measure.ondisk import Writes
from measure.out_folder import check_place, holding, run_folder, run_key_of
from sitedata import DataError, FolderError, read_experiment, recover
from sitedata.folder import STAGING, folder_problem, target_problem
from sitedata.keys import run_key
from sitedata.store import META, fault, render_files, write_files


@dataclass(frozen=True)
class Outcome:
    experiment: str
    status: str  # "written", "up to date" or "skipped"
    detail: str
    seconds: float


@dataclass
class Interrupted(Exception):
    """A stop (Ctrl-C) during a run: what was written before it, and what was not."""

    outcomes: list[Outcome] = field(default_factory=list)
    current: str = ""


def check_output_folder(out: Path, names: list[str] = ()) -> None:
    """The folder is new, empty or a data folder of this project, it can be written, and
    no experiment's folder in it is a link. Touches nothing of the user's."""
    out = Path(out)
    check_place(out, "--out")
    problem = folder_problem(out) or next((p for n in names if (p := target_problem(out, n))), "")
    if problem:
        raise UserError(f"--out {problem}")
    parent = out if out.exists() else out.parent
    if not parent.is_dir():
        raise UserError(f"--out {out}: its parent folder {parent} does not exist")
    probe = parent / f".sitedata-probe-{os.getpid()}-{time.monotonic_ns()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"--out {out}: cannot write there ({e.strerror or e})") from None


def up_to_date(out: Path, name: str, *, code: str, model: str, device_id: str, profile: str) -> str:
    """Why the committed data of ``name`` already answers this request ("" if it does not);
    ``code``: the hash of its code as the run imported it."""
    try:
        meta = read_experiment(out, name).meta
    except DataError:
        return ""
    same = (
        meta["code_hash"] == code
        and meta["model"]["spec"] == model
        and meta["device"]["id"] == device_id
        and meta["profile"] == profile
    )
    return f"same code, model, machine and profile as the data of {meta['date'][:10]}" if same else ""


def _estimate(modules: dict, todo: list[str], profile: str, model, device, log) -> dict[str, float]:
    """Seconds each experiment should take, printed before any starts: its counted work
    (``work(cfg)`` in its module) at unit costs measured now. Empty unless every
    experiment to run counts its work (today: the systems experiments of the GPU command)."""
    from measure.lab.estimate import calibrate

    if any(modules[n].work is None for n in todo):
        return {}
    units = calibrate(model, device)
    out = {n: units.seconds(modules[n].work(modules[n].Config.for_profile(profile))) for n in todo}
    log(f"estimate: {sum(out.values()) / 60:.1f} min (" + ", ".join(f"{n} {s:.0f}s" for n, s in out.items()) + ")")
    log(f"  from {units.describe()}")
    return out


def run_experiments(
    *,
    names: list[str],
    model: str,
    device: str = "auto",
    profile: str | None = None,
    out: Path,
    quiet: bool = False,
    explicit: bool = False,
    force: bool = True,
    writes: Writes | None = None,
) -> list[Outcome]:
    from measure.lab.context import PROFILES
    from measure.lab.devices import choose_device
    from measure.lab.models import preflight

    if not names:
        raise UserError("no experiment selected; known: " + ", ".join(registry.EXPERIMENTS))
    modules = {n: registry.load(n) for n in names}
    if profile is not None and profile not in PROFILES:
        raise UserError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    dev = choose_device(device)
    preflight(model, network=False)
    check_output_folder(out, [*names, CALIBRATION])  # the run writes its calibration too
    key = run_key_of(model, dev, profile)
    # Every input checked: from here on files are touched, and only the data layer's own.
    writes = writes if writes is not None else Writes(out)
    with holding(Path(out), "measure run", "--out "):  # the whole folder, its other runs too
        target = run_folder(Path(out), key, names)
        if target != Path(out):
            check_output_folder(target, [*names, CALIBRATION])
            if not quiet:
                print(f"{out} holds another run as its primary: this run ({key}) goes to {target}", file=sys.stderr)
        writes.out = target  # what a stop or an error says is on disk is this run's folder
        with holding(target, "measure run", "--out "):
            return _measure(modules, model, dev, profile, target, quiet, explicit, force, writes, key)


def _measure(
    modules: dict, model: str, dev, profile: str | None, out: Path, quiet, explicit, force, writes, key: str
) -> list:
    """``run_experiments`` once the request is checked, with the folder's lock held;
    ``key``, the run key that chose ``out``."""
    import torch

    from measure.lab import calibration, memory
    from measure.lab.context import Context, default_profile
    from measure.lab.devices import default_dtype, describe_machine
    from measure.lab.models import load_model, preflight
    from measure.lab.provenance import code_hash, provenance

    names = list(modules)
    prof = profile or default_profile(dev)
    dtype = default_dtype(dev)
    started = time.perf_counter()
    # the code as imported (run_experiments imported it just now): a file edited while the
    # run goes on is not the code that ran
    code = {n: code_hash(n) for n in modules}

    def log(msg: str) -> None:
        if not quiet:
            print(f"[{time.perf_counter() - started:7.1f}s] {msg}", file=sys.stderr, flush=True)

    try:
        for line in recover(out):
            log(line)
    except OSError as e:
        raise UserError(f"--out {out}: a stopped write's leftover could not be removed ({e})") from None
    machine = describe_machine(dev)
    outcomes: list[Outcome] = []
    todo = []
    for name in names:
        here = {"model": model, "device_id": machine["id"], "profile": prof}
        why = "" if force else up_to_date(out, name, code=code[name], **here)
        if why:
            log(f"{name}: up to date ({why}); FORCE=1 re-measures it")
            outcomes.append(Outcome(name, "up to date", why, 0.0))
        else:
            todo.append(name)
    if not todo:
        return outcomes
    preflight(model)  # the hub's cache or the network, now that the model is needed
    log(f"loading model {model!r} on {dev} ({str(dtype).removeprefix('torch.')}), profile {prof}")
    loaded = load_model(model, device=dev, dtype=dtype, log=log)
    log(f"model ready: {loaded.describe()['parameters']:,} parameters; {loaded.weights}")
    if (
        run_key(
            {"model": loaded.describe(), "device": machine, "dtype": str(dtype).removeprefix("torch."), "profile": prof}
        )
        != key
    ):
        name = loaded.describe()["name"]
        raise UserError(f"the model loaded as {name!r}, not under the name {model!r} that chose the run's folder")
    plan = calibration.plan(prof, dev)
    start = calibration.measure(loaded.model, dev, run_id=calibration.new_run_id(), plan=plan)
    log(f"calibration of run {start.run_id}: {start.describe()}")
    calibrated = RunRecord(out, start, model=loaded, machine=machine, dtype=dtype, profile=prof, plan=plan, log=log)
    estimates = _estimate(modules, todo, prof, loaded.model, dev, log)
    current = ""
    try:
        for i, name in enumerate(todo, 1):
            current = name
            mod = modules[name]
            if mod.NEEDS_TRAINED and not loaded.trained:
                why = f"{name} measures quality, which random weights do not have; use a trained model"
                if explicit:
                    raise UserError(why)
                log(f"({i}/{len(todo)}) skipped {name}: {why}")
                outcomes.append(Outcome(name, "skipped", why, 0.0))
                continue
            writes.begin(name)
            config = mod.Config.for_profile(prof)
            ctx = Context(
                model=loaded,
                device=dev,
                dtype=dtype,
                profile=prof,
                machine=machine,
                memory_method=memory.method(dev),
                experiment_title=mod.TITLE,
                quiet=quiet,
                started=started,
                calibration=start,
            )
            log(f"({i}/{len(todo)}) {name}: {mod.TITLE}")
            t0 = time.perf_counter()
            torch.manual_seed(0)
            result = mod.run(config, ctx)
            seconds = time.perf_counter() - t0
            files = render_files(
                name,
                result,
                tables=mod.TABLES,
                values=mod.VALUES,
                provenance=provenance(experiment=name, config=config, ctx=ctx, duration_s=seconds, code=code[name]),
            )
            writes.writing(name, files[META])
            try:
                calibrated.before_first_experiment()
                folder = write_files(out, name, files)
            except FolderError as e:  # the folder changed under the run
                raise UserError(f"{name} was measured but not written: {e}; {writes.describe()}") from None
            except OSError as e:  # a disk that filled up or a folder removed during the run
                raise UserError(_write_failed(name, out, e, writes)) from None
            fault("returned")
            rows = sum(len(r) for r in result.tables.values())
            detail = f"{len(result.tables)} tables, {rows} rows, {len(result.values)} values -> {folder}"
            guess = f" (estimated {estimates[name]:.0f}s)" if name in estimates else ""
            log(f"({i}/{len(todo)}) {name} done in {seconds:.1f}s{guess}: {detail}")
            outcomes.append(Outcome(name, "written", detail, seconds))
            current = ""
        wrote = any(o.status == "written" for o in outcomes)  # else there is no row to complete
        end = calibration.measure(loaded.model, dev, run_id=start.run_id, plan=plan, moment="end") if wrote else None
    except KeyboardInterrupt:
        if current and writes.state(current) == "new":  # stopped after its folder was in place
            outcomes.append(Outcome(current, "written", "stopped while finishing; its data is whole", 0.0))
            current = ""
        calibrated.stopped()
        raise Interrupted(outcomes, current) from None
    except BaseException:
        calibrated.stopped()
        raise
    calibrated.finished(end)
    return outcomes


def _write_failed(name: str, out: Path, e: OSError, writes: Writes) -> str:
    """An I/O error during a write, told by what is on disk after it."""
    try:
        left = sorted(n for n in os.listdir(out) if (m := STAGING.fullmatch(n)) and m["experiment"] == name)
    except OSError:
        left = []
    tail = f"; {', '.join(left)} is left, the next run removes it" if left else ""
    if writes.state(name) == "new":
        return f"the write of {name} into {out} failed after its new data was in place ({e}); {writes.describe()}{tail}"
    return f"{name} was measured but could not be written to {out} ({e}); {writes.describe()}{tail}"
