"""Command line: ``python -m measure run|check|merge|notebooks|section|list``.

Examples::

    python -m measure run                          # every experiment, default model
    python -m measure run --only kv_cache          # one experiment
    python -m measure run --model arch:qwen2.5-0.5b --device cuda
    python -m measure check --kinds exact,numeric   # regenerate and compare with site_data
    python -m measure merge /tmp/gpu_data           # bring a GPU run's folder into site_data
    python -m measure notebooks                    # execute the notebook pages against site_data
    python -m measure section prompt_reuse "Reusing the prompt"   # a new section's skeleton
    python -m measure list
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from measure.errors import UserError

REPO = Path(__file__).resolve().parent.parent


def _parser() -> argparse.ArgumentParser:
    # Imported here, inside main's handling of Ctrl-C, and torch-free: the command line is
    # read and checked before PyTorch is imported.
    from measure import registry
    from measure.lab.architectures import ARCHITECTURES
    from measure.lab.spec import DEFAULT_MODEL

    p = argparse.ArgumentParser(
        prog="python -m measure", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run experiments and write site_data/")
    run.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help="'default' (embedded SmolLM2-135M-Instruct), a Hugging Face id or local folder, "
        f"or a random-weights architecture: {', '.join('arch:' + a for a in ARCHITECTURES)}",
    )
    run.add_argument("--device", default="auto", help="auto (CUDA if present), cpu or cuda")
    run.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(registry.EXPERIMENTS)}")
    run.add_argument(
        "--profile",
        default=None,
        help="full (the chapter's sizes; default on a GPU), cpu (smaller; default on a CPU) or smoke (tests)",
    )
    run.add_argument("--out", type=Path, default=REPO / "site_data", help="output folder (default: site_data)")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.add_argument(
        "--force",
        action="store_true",
        help="re-measure even experiments whose data came from the same code, model, machine and profile",
    )
    check = sub.add_parser("check", help="regenerate into a temporary folder and compare with site_data")
    check.add_argument("--only", default="", help="comma-separated subset of experiments")
    check.add_argument("--device", default="auto", help="auto, cpu or cuda")
    check.add_argument(
        "--kinds",
        default="exact,numeric,timing",
        help="column kinds to compare (timing only ever against the same device)",
    )
    check.add_argument("--committed", type=Path, default=REPO / "site_data", help="the data to check")
    check.add_argument("--docs", type=Path, default=REPO / "docs", help="pages whose table use is checked")
    check.add_argument("--no-pages", action="store_true", help="skip the page/table cross-check")
    check.add_argument(
        "--report", type=Path, default=REPO / "check-report.json", help="JSON report path (checked before regenerating)"
    )
    check.add_argument(
        "--regenerated", type=Path, default=None, help="compare this existing folder instead of regenerating"
    )
    check.add_argument("--quiet", action="store_true", help="no progress output")
    check.add_argument(
        "--brief", action="store_true", help="print the machine's speed, the counts and the failures only"
    )
    merge = sub.add_parser("merge", help="bring experiments measured elsewhere (a GPU run's folder) into site_data")
    merge.add_argument("folder", type=Path, help="the folder the other run wrote (e.g. by gpu/run_systems.sh)")
    merge.add_argument(
        "--into", type=Path, default=REPO / "site_data", help="the data to merge into (default: site_data)"
    )
    merge.add_argument("--only", default="", help="comma-separated subset of the experiments found there")
    notebooks = sub.add_parser("notebooks", help="execute the notebook pages against site_data (when it changed)")
    notebooks.add_argument(
        "--data",
        type=Path,
        default=REPO / "site_data",
        help="the data folder the notebooks read (passed to them as SITE_DATA) and are stamped with",
    )
    notebooks.add_argument("--force", action="store_true", help="execute even the notebooks that are up to date")
    new = sub.add_parser("section", help="write a new section's working skeleton (make section)")
    new.add_argument("name", help="the experiment's name, snake_case: its package, data folder and page")
    new.add_argument("title", help="the page's title; the menu's is its part before a colon")
    new.add_argument("--after", default=None, help="the section it follows in the nav (default: the last)")
    new.add_argument("--root", type=Path, default=REPO, help="the copy of the project to write into")
    sub.add_parser("list", help="list the experiments")
    return p


class _CtrlC:
    """Python's own Ctrl-C, remembered: a KeyboardInterrupt that a library swallows while
    PyTorch and transformers are imported (seen on a loaded machine: the run went on)
    still stops the run before it measures anything."""

    pressed = False

    @classmethod
    def handler(cls, signum, frame):
        cls.pressed = True
        raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    _CtrlC.pressed = False  # a press belongs to one call (tests call main more than once)
    previous = signal.signal(signal.SIGINT, _CtrlC.handler)
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGINT, previous)


def _main(argv: list[str] | None) -> int:
    writes = None  # what a run or a merge began to write, read back after a stop
    try:
        args = _parser().parse_args(argv)
        from measure import registry
        from measure.ondisk import Writes
        from sitedata.store import fault

        if args.command == "section":
            from measure import scaffold

            for path in scaffold.write(args.root, args.name, args.title, args.after):
                print(f"wrote {path.relative_to(args.root)}")
            print(scaffold.next_steps(args.name))
            return 0
        if args.command == "list":
            for name in registry.EXPERIMENTS:
                print(f"{name:14} {registry.load(name).TITLE}")
            return 0
        if args.command == "notebooks":
            from measure.notebooks import run as run_notebooks

            run_notebooks(args.data, force=args.force)
            return 0
        if args.command == "merge":
            from measure.merge import merge

            writes = Writes(args.into, merge=True)
            for line in merge(source=args.folder, into=args.into, only=args.only or None, writes=writes):
                print(line)
            return 0
        if args.command == "check":
            from measure.check import run_check
            from sitedata.schema import COMPARE as KINDS

            kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
            if not kinds or set(kinds) - set(KINDS):
                raise UserError(f"--kinds takes a comma-separated subset of {', '.join(KINDS)}")
            return run_check(
                only=args.only or None,
                committed=args.committed,
                device=args.device,
                kinds=kinds,
                report=args.report,
                docs=None if args.no_pages else args.docs,
                regenerated=args.regenerated,
                quiet=args.quiet,
                brief=args.brief,
            )
        writes = Writes(args.out)
        from measure.runner import Interrupted, run_experiments

        if _CtrlC.pressed:  # pressed during the imports, and swallowed there
            raise KeyboardInterrupt

        t0 = time.perf_counter()
        names = registry.select(args.only)
        try:
            outcomes = run_experiments(
                names=names,
                model=args.model,
                device=args.device,
                profile=args.profile,
                out=args.out,
                quiet=args.quiet,
                explicit=bool(args.only),
                force=args.force,
                writes=writes,
            )
        except Interrupted as stop:
            _summary(stop.outcomes, t0)
            print(f"\n{writes.stopped()}", file=sys.stderr)
            return 130
        fault("finished")
        _summary(outcomes, t0)
        return 0
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # anywhere, imports included: said by what is on disk
        print(f"\n{writes.stopped() if writes else 'interrupted; site_data is unchanged'}", file=sys.stderr)
        return 130


def _summary(outcomes, t0: float) -> None:
    print(f"\nsummary ({time.perf_counter() - t0:.1f}s in all):")
    for o in outcomes:
        print(f"  {o.experiment:20} {o.status:10} {o.seconds:6.1f}s  {o.detail}")


if __name__ == "__main__":
    sys.exit(main())
