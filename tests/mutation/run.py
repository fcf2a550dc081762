"""`make mutate`: mutation testing of the modules that compute, compare or render
published numbers (pyproject.toml, [tool.mutmut]), then the kill rate per module.

mutmut names a mutant after its file's path and activates it by the module name a
function has at run time, so a module must be imported under the name its path gives:
measure/, sitedata/ and sitekit/ sit at the top of the project, as they are installed.
The run works in a copy of the project, .mutation/, so that the working tree never
holds a mutant. Every run starts from nothing: mutmut re-tests a mutant only when its
function changed, so results kept from an earlier run would not see new tests.

    make mutate     # or: .venv/bin/python -m tests.mutation.run, from the project's root
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORK = REPO / ".mutation"
COPIED = ("measure", "sitedata", "sitekit", "tests", "site_data", "docs", "mkdocs.yml", "pyproject.toml")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def prepare() -> None:
    WORK.mkdir(exist_ok=True)
    for name in (*COPIED, "hooks", "mutants"):
        target = WORK / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, WORK / name, ignore=IGNORE)
        else:
            shutil.copy2(source, WORK / name)
    (WORK / "hooks").mkdir()
    shutil.copy2(REPO / "hooks" / "render.py", WORK / "hooks" / "render.py")


def main() -> int:
    prepare()
    # Tests run in processes forked from one that has imported torch: more than one
    # OpenMP thread there can deadlock a child.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HYPOTHESIS_PROFILE": "mutation"}
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "mutmut", "run"], cwd=WORK, env=env)
    print(f"\nmutmut run: exit {run.returncode} after {time.monotonic() - start:.0f} s")
    from tests.mutation.report import main as report

    return report(WORK) or run.returncode


if __name__ == "__main__":
    sys.exit(main())
