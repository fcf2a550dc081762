"""Run a list of experiments on one model and write each result as soon as it exists,
so that an interruption loses at most the experiment in progress."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from measure import memory, registry
from measure.context import PROFILES, Context, default_profile
from measure.devices import choose_device, default_dtype, fingerprint
from measure.errors import UserError
from measure.models import load_model
from measure.provenance import provenance
from measure.store import write_result


@dataclass(frozen=True)
class Outcome:
    experiment: str
    status: str  # "written" or "skipped"
    detail: str
    seconds: float


def run_experiments(
    *,
    names: list[str],
    model: str,
    device: str = "auto",
    profile: str | None = None,
    out: Path,
    quiet: bool = False,
    explicit: bool = False,
) -> list[Outcome]:
    dev = choose_device(device)
    if profile is not None and profile not in PROFILES:
        raise UserError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    prof = profile or default_profile(dev)
    dtype = default_dtype(dev)
    modules = {n: registry.load(n) for n in names}
    started = time.perf_counter()

    def log(msg: str) -> None:
        if not quiet:
            print(f"[{time.perf_counter() - started:7.1f}s] {msg}", file=sys.stderr, flush=True)

    log(f"loading model {model!r} on {dev} ({str(dtype).removeprefix('torch.')}), profile {prof}")
    loaded = load_model(model, device=dev, dtype=dtype, log=log)
    log(f"model ready: {loaded.describe()['parameters']:,} parameters; {loaded.weights}")
    outcomes = []
    for i, name in enumerate(names, 1):
        mod = modules[name]
        if getattr(mod, "NEEDS_TRAINED", False) and not loaded.trained:
            why = f"{name} measures quality, which random weights do not have; use a trained model"
            if explicit:
                raise UserError(why)
            log(f"({i}/{len(names)}) skipped {name}: {why}")
            outcomes.append(Outcome(name, "skipped", why, 0.0))
            continue
        config = mod.Config.for_profile(prof)
        ctx = Context(
            model=loaded,
            device=dev,
            dtype=dtype,
            profile=prof,
            fingerprint=fingerprint(dev),
            memory_method=memory.method(dev),
            experiment_title=mod.TITLE,
            quiet=quiet,
            started=started,
        )
        log(f"({i}/{len(names)}) {name}: {mod.TITLE}")
        t0 = time.perf_counter()
        torch.manual_seed(0)
        result = mod.run(config, ctx)
        seconds = time.perf_counter() - t0
        folder = write_result(
            out, name, result, provenance(experiment=name, config=config, ctx=ctx, duration_s=seconds)
        )
        rows = sum(len(t.rows) for t in result.tables)
        detail = f"{len(result.tables)} tables, {rows} rows, {len(result.values)} values -> {folder}"
        log(f"({i}/{len(names)}) {name} done in {seconds:.1f}s: {detail}")
        outcomes.append(Outcome(name, "written", detail, seconds))
    return outcomes
