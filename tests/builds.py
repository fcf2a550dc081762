"""Builds of a copy of the project for tests that bring their own pages or data."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import BUILD_ENV, REPO, _env, copy_project_files, copy_shown_code, require_marker


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
    shutil.copytree(REPO / "hooks", dest / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    # each experiment's claims and answers files, read as data; the measuring code beside them stays behind
    shutil.copytree(
        REPO / "measure/experiments", dest / "measure/experiments", ignore=shutil.ignore_patterns("*.py", "__pycache__")
    )
    if (dest / "docs").is_dir():
        copy_shown_code(dest / "docs", dest)
    copy_project_files(dest)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(dest / "site")],
        cwd=dest,
        capture_output=True,
        text=True,
        env={**_env(), **BUILD_ENV},
    )


def claims_of(dest: Path, pages: list[Path]) -> dict:
    """The project's ``extra`` with its claims folder ``dest``/claims holding only the
    claims ``pages`` name: a build of some of the pages uses every claim it defines. The
    folder defines no answers: pages that name one are not built this way."""
    from sitekit.claims import claims
    from sitekit.claims.claim_files import load

    book = load(REPO / "measure/experiments", REPO, claims.CALLS)
    named = re.compile(r"""claim\(\s*['"]([a-z0-9_.]+)['"]|<!--\s*(?:el)?if\s+(?:unsure\s+)?([a-z0-9_.]+)\s*-->""")
    by_experiment: dict[str, list[str]] = {}
    for page in pages:
        for ref in sorted({a or b for a, b in named.findall(page.read_text(encoding="utf-8"))}):
            claim = book.get(ref)
            exp, name = ref.split(".")
            toml = f"[{name}]\ncheck = {json.dumps(claim.expression)}\nhardware = {str(claim.hardware).lower()}\n"
            by_experiment.setdefault(exp, []).append(toml)
    (dest / "claims").mkdir()
    for exp, tables in by_experiment.items():
        (dest / "claims" / exp).mkdir()
        (dest / "claims" / exp / "claims.toml").write_text("".join(tables), encoding="utf-8")
    project = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    return {**project["extra"], "claims": "claims"}
