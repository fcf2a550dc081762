"""Does the timing gate tell a slower program from a slower machine? Plant a slowdown in
one code path of a copy of this checkout, regenerate there, and let the gate compare it
with the committed data on this machine.

    python tests/gate/planted_slowdown.py                  # plant 15 % in the decode step
    python tests/gate/planted_slowdown.py --fraction 0.3   # another size
    python tests/gate/planted_slowdown.py --unchanged      # the same procedure, nothing planted
    python tests/gate/planted_slowdown.py --report r.json  # keep the gate's report
    python tests/gate/planted_slowdown.py --committed RUN  # against a run of this machine's

The plant is an extra copy in ``measure.lab.generation.decode_step``, before the model's
forward pass, of ``fraction`` times the bytes the model's weights hold (a copy moves
twice its buffer): a decode step that streams its weights once takes about ``fraction``
longer, and nothing the machine's probes run (the calibration's roofline) is touched.
Every experiment that times a decode step through that function is slowed; the gate
should report the machine's speed once, then drift on those timings and on nothing else.
The unchanged run is the control: the same regeneration with nothing planted should show
no drift. The committed data must have been measured on this machine (the same CPU model
and thread count) by a run whose calibration probed the roofline; on a machine of another
model, ``--committed`` names a run of its own (``make measure OUT=<folder>``) to compare
against instead.

Exit status: 0 when the gate saw what it should (drift with a plant, none without), 1
otherwise, 2 when the procedure itself could not run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET = "measure/lab/generation.py"
ANCHOR = '    """One new token against the cache; the cache grows by one position in place."""\n'
PLANT = """    _planted_copy(model)  # PLANTED SLOWDOWN (tests/gate/planted_slowdown.py)
"""
HELPER = '''

_PLANTED: dict = {}


def _planted_copy(model) -> None:
    """The planted slowdown: a copy of FRACTION times the weights' bytes (it moves twice that)."""
    key = id(model)
    if key not in _PLANTED:
        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        size = max(1, int(weights * FRACTION / 2))
        _PLANTED[key] = (torch.ones(size, dtype=torch.uint8), torch.empty(size, dtype=torch.uint8))
    src, dst = _PLANTED[key]
    dst.copy_(src)
'''


def copy_checkout(dest: Path, data: Path) -> None:
    """The files git tracks, and the data folder ``data`` as it is on disk (as site_data), into ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    shutil.rmtree(dest / "site_data", ignore_errors=True)
    shutil.copytree(data, dest / "site_data", ignore=shutil.ignore_patterns(".lock"))


def plant(dest: Path, fraction: float) -> None:
    path = dest / TARGET
    text = path.read_text(encoding="utf-8")
    if ANCHOR not in text:
        raise SystemExit(f"{TARGET}: the decode step's docstring moved; update the plant's anchor")
    text = text.replace(ANCHOR, ANCHOR + PLANT, 1) + HELPER.replace("FRACTION", repr(fraction))
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fraction", type=float, default=0.15, help="the planted copy, as a fraction of the weights' bytes")
    p.add_argument("--only", default="prefill_decode", help="the experiments regenerated (comma-separated)")
    p.add_argument("--unchanged", action="store_true", help="plant nothing: the control run")
    p.add_argument("--keep", action="store_true", help="keep the copy (its path is printed)")
    p.add_argument("--report", type=Path, help="also write the gate's JSON report here")
    p.add_argument(
        "--committed", type=Path, default=REPO / "site_data", help="the data compared against (default: site_data)"
    )
    args = p.parse_args(argv)
    if not (args.committed / "calibration").is_dir():
        print(f"--committed {args.committed}: not a data folder with its calibration", file=sys.stderr)
        return 2
    if not 0 < args.fraction < 10:
        print("--fraction takes a number between 0 and 10", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="planted-"))
    try:
        copy_checkout(work, args.committed)
        if not args.unchanged:
            plant(work, args.fraction)
        report = work / "report.json"
        what = "nothing planted" if args.unchanged else f"a copy of {args.fraction:.0%} of the weights' bytes planted"
        print(f"{what} in {TARGET}'s decode step; regenerating {args.only} in {work}", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "measure", "check", "--only", args.only, "--kinds", "timing", "--no-pages",
             "--committed", str(work / "site_data"), "--report", str(report)],
            cwd=work,
        )  # fmt: skip
        if not report.is_file():
            print(f"the gate wrote no report (exit {done.returncode})", file=sys.stderr)
            return 2
        if args.report:
            shutil.copy(report, args.report)
        found = json.loads(report.read_text(encoding="utf-8"))
        drift = [f for f in found["findings"] if f["verdict"] == "drift" and f["compare"] == "timing"]
        print(f"\n{len(drift)} timing(s) drifted; machine: {'; '.join(found.get('machine_speed') or ['unknown'])}")
        for f in drift[:12]:
            print(f"  {f['experiment']}.{f['table']} {f['column']} row {f['row']}: {f['tolerance']}")
        return 0 if bool(drift) != args.unchanged else 1
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
