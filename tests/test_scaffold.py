"""`make section`: a new section's skeleton, written into a copy of the project, builds
strictly and measures as it stands; a bad name or title is one line before anything is
written, and a title reaches the command as data, never as code."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from measure import scaffold
from measure.errors import UserError
from sitekit.language import editions
from tests.conftest import BUILD_ENV, REPO, require_marker

TITLE = "Isn't it cheap? Reusing (some) prompts: a test"
NAME = "a_new_section"  # a section no checkout has


def copy_project(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked, and new ones not ignored), without
    the virtual environment, caches or the built site."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (name.decode() for name in listed)):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    return dest


def _make_n(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """make -n: the recipe printed, not run; make still expands what it would run, so a
    $(shell ...) in a value would run here (tests/test_make_inputs.py)."""
    stamp = tmp_path / "stamp"
    stamp.touch()
    return subprocess.run(
        ["make", "-n", "--no-print-directory", f"STAMP={stamp}", f"PROJECT={stamp}", "section", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _command(out: subprocess.CompletedProcess) -> list[str]:
    lines = out.stdout.replace("\\\n", " ").splitlines()  # a recipe's continued line as one
    line = next(line for line in lines if " -m measure section " in line)
    return shlex.split(line)


def test_a_title_reaches_the_command_as_one_word_as_written(tmp_path):
    out = _make_n(tmp_path, f"NAME={NAME}", f"TITLE={TITLE}", "AFTER=batching")
    assert out.returncode == 0, out.stderr
    words = _command(out)
    assert words[words.index("section") + 1 : words.index("section") + 3] == [NAME, TITLE]
    assert words[words.index("--after") + 1] == "batching" and words[words.index("--root") + 1] == str(REPO)


@pytest.mark.parametrize(
    "attack",
    [
        "A'; touch {pwn}; echo '",
        "A $(shell touch {pwn})",
        "A ${{shell touch {pwn}}}",
        "A `touch {pwn}`",
        'A" ; touch {pwn} ; "',
    ],
)
def test_an_injection_through_the_title_stays_text_and_is_refused_in_one_line(tmp_path, attack):
    pwn = tmp_path / "pwn"
    title = attack.format(pwn=pwn)
    out = _make_n(tmp_path, f"NAME={NAME}", f"TITLE={title}")
    assert out.returncode == 0 and not pwn.exists(), out.stderr
    (given,) = [w for w in _command(out) if "touch" in w]  # the title, one word, as typed
    assert given == title
    root = copy_project(tmp_path / "project")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    with pytest.raises(UserError) as refused:
        scaffold.write(root, NAME, given)
    assert str(refused.value).startswith("TITLE may hold only letters, digits, spaces and")
    assert "\n" not in str(refused.value) and not pwn.exists()
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # nothing written


def test_a_line_break_in_the_title_is_refused_by_make(tmp_path):
    out = _make_n(tmp_path, f"NAME={NAME}", "TITLE=A\ntouch x")
    assert out.returncode != 0 and "TITLE may not hold a line break or a tab" in out.stderr


@pytest.mark.parametrize(
    ("name", "title", "message"),
    [
        ("PromptReuse", "A title", "NAME must be snake_case"),
        ("prompt__reuse", "A title", "NAME must be snake_case"),
        ("2prompt", "A title", "NAME must be snake_case"),
        ("batching", "A title", "NAME 'batching' exists already: the registry, measure/experiments/batching"),
        ("class", "A title", "NAME 'class' is a Python keyword"),
        (NAME, "A *bold* title", "TITLE may hold only letters, digits, spaces and"),
        (NAME, "A [link](x) title", "TITLE may hold only letters, digits, spaces and"),
        (NAME, "Title: with {{ a marker }}", "TITLE may hold only letters, digits, spaces and"),
        (NAME, " leading space", "TITLE must start with a letter"),
        (NAME, "Two  spaces", "TITLE must start with a letter, have single spaces"),
        (NAME, "x" * 81, "TITLE must start with a letter"),
    ],
)
def test_a_bad_name_or_title_is_one_line(name, title, message):
    with pytest.raises(UserError) as refused:
        scaffold.write(REPO, name, title)  # refused before anything is written
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


def test_an_unknown_section_to_follow_is_one_line(tmp_path):
    root = copy_project(tmp_path / "project")
    with pytest.raises(UserError, match="AFTER must name a section, one of: kv_cache, "):
        scaffold.write(root, NAME, "A title", after="chapter")


def test_the_skeleton_joins_every_list_in_its_place(tmp_path):
    root = copy_project(tmp_path / "project")
    written = scaffold.write(root, NAME, TITLE, after="batching")
    assert root / "measure/experiments/a_new_section/claims.toml" in written
    registry = (root / "measure/registry.py").read_text(encoding="utf-8")
    assert f'    "batching",\n    "{NAME}",\n' in registry
    config = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = [page for item in config["nav"] for page in item.values()]
    assert pages[pages.index("batching.md") + 1] == "a-new-section.md"
    assert {"Isn't it cheap? Reusing (some) prompts": "a-new-section.md"} in config["nav"]
    page = (root / "docs/a-new-section.md").read_text(encoding="utf-8")
    assert page.startswith(f"# {TITLE}\n") and "{{ answer('a_new_section.time_ratio') }}" in page
    assert f'TITLE = "{TITLE}"' in (root / "measure/experiments/a_new_section/__init__.py").read_text()
    # what waits for a translator says so, in one line each
    lock = root / "hooks/locales/editions.lock"
    assert editions.pending(lock) == [f"{lang} a-new-section.md" for lang in sorted(editions.LANGUAGES)]
    assert [p for p in editions.check(root / "docs", lock) if p.startswith("a-new-section")] == [
        f"a-new-section.{lang}.md follows nothing yet: make section wrote it in English; write it in {lang}, "
        f"then run make editions PAGES=a-new-section.md LANGS={lang}"
        for lang in editions.LANGUAGES
    ]
    left = editions.untranslated(root / "mkdocs.yml", root / "hooks/locales")
    assert len([x for x in left if x.startswith("mkdocs.yml:")]) == len(editions.LANGUAGES)
    assert any('"Isn\'t it cheap? Reusing (some) prompts: one prefill by prompt length"' in x for x in left)
    with pytest.raises(UserError, match="NAME 'a_new_section' exists already"):
        scaffold.write(root, NAME, TITLE)


def _in_copy(root: Path, *args: str, timeout: int) -> subprocess.CompletedProcess:
    """A command run in the copy with the copy's own packages first on the path (the
    installed project is the checkout's, which has no skeleton)."""
    env = {**os.environ, **BUILD_ENV, "PYTHONPATH": str(root)}
    return subprocess.run(args, cwd=root, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.smoke
@pytest.mark.build
@pytest.mark.slow
def test_the_skeleton_measures_and_builds_strictly_as_it_stands(tmp_path):
    """The author's first three commands, in a copy: make section, make measure (here in
    the smoke profile, on the tiny model), make site."""
    require_marker("smoke", "smoke-runs a skeleton")
    root = copy_project(tmp_path / "project")
    scaffold.write(root, NAME, TITLE, after="batching")
    python = sys.executable
    measured = _in_copy(
        root, python, "-m", "measure", "run", "--only", NAME, "--profile", "smoke",
        "--model", "arch:tiny", "--device", "cpu", "--out", str(root / "site_data"), "--quiet", timeout=600,
    )  # fmt: skip
    assert measured.returncode == 0, measured.stderr[-3000:]
    notebooks = _in_copy(root, python, "-m", "measure", "notebooks", "--data", str(root / "site_data"), timeout=600)
    assert notebooks.returncode == 0, notebooks.stderr[-3000:]
    mkdocs = [python, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    built = _in_copy(root, *mkdocs, timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    for edition in ("", *(f"{lang}/" for lang in editions.LANGUAGES)):
        html = (tmp_path / "site" / edition / "a-new-section" / "index.html").read_text(encoding="utf-8")
        assert 'data-table="a_new_section.prefill"' in html and 'data-figure="a_new_section.prefill"' in html
