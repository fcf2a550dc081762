"""`make mutate`: mutation testing of the modules that compute, compare or render
published numbers (pyproject.toml, [tool.mutmut]), then the kill rate per module.

mutmut names a mutant after its file's path and activates it by the module name a
function has at run time, so a module must be imported under the name its path gives.
The page side is imported as ``sitekit`` (hooks/ is on the path), not
``hooks.sitekit``; the run therefore works in a copy of the project, .mutation/, where
sitekit/ sits at the top. Every run starts from nothing: mutmut re-tests a mutant
only when its function changed, so results kept from an earlier run would not see
new tests.
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
COPIED = ("measure", "sitedata", "tests", "site_data", "docs", "mkdocs.yml", "pyproject.toml")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def prepare() -> None:
    WORK.mkdir(exist_ok=True)
    for name in (*COPIED, "hooks", "sitekit", "mutants"):
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
    shutil.copytree(REPO / "hooks" / "sitekit", WORK / "sitekit", ignore=IGNORE)


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
    sys.path.insert(0, str(REPO))
    sys.exit(main())
