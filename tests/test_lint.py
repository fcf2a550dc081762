"""The formatter's and linter's verdicts are part of the suite."""

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_check():
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "sitedata", "measure", "sitekit", "hooks", "tests"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_ruff_format():
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "sitedata", "measure", "sitekit", "hooks", "tests"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
