"""Builds of a copy of the project for tests that bring their own pages or data."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO, _env, require_marker


def english_build(dest: Path, **config) -> subprocess.CompletedProcess:
    """mkdocs build --strict, of the English edition alone, of ``dest``'s docs and
    site_data with the project's hooks and mkdocs.yml, its keys changed by ``config``
    (None drops one), into ``dest``/site."""
    require_marker("build", "builds the site")
    project = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    for key, value in config.items():
        project.pop(key) if value is None else project.update({key: value})
    for plugin in project["plugins"]:
        if isinstance(plugin, dict) and "i18n" in plugin:
            for lang in plugin["i18n"]["languages"]:
                lang["build"] = lang["locale"] == "en"
    (dest / "mkdocs.yml").write_text(yaml.safe_dump(project, allow_unicode=True), encoding="utf-8")
    for folder in ("hooks", "sitedata"):
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(dest / "site")],
        cwd=dest,
        capture_output=True,
        text=True,
        env={**_env(), "NO_MKDOCS_2_WARNING": "1", "SITEKIT_FIGURE_CACHE": str(REPO / ".cache" / "figures")},
    )
