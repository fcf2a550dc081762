"""The site carries its source: an archive of the files it was built from, its commit and
whether the tree had changes, linked from every provenance box."""

from __future__ import annotations

import gzip
import io
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from sitekit.sources import source_archive
from tests.conftest import LANGUAGES, REPO


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.org")
    _git(root, "config", "user.name", "t")
    (root / "a.txt").write_text("a\n")
    (root / ".gitignore").write_text("built/\n")
    (root / "built").mkdir()
    (root / "built" / "x").write_text("ignored\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    return root


def _names(path):
    with tarfile.open(fileobj=io.BytesIO(path.read_bytes())) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def test_the_archive_holds_the_files_built_from_and_says_whether_they_were_committed(repo, tmp_path):
    clean = source_archive.describe(repo)
    assert len(clean.commit) == 40 and not clean.changed
    assert clean.files == (".gitignore", "a.txt")  # the ignored build output stays out
    (repo / "a.txt").write_text("changed\n")
    changed = source_archive.describe(repo)
    assert changed.changed and changed.files == (".gitignore", "a.txt")
    site = tmp_path / "site"
    site.mkdir()
    out = source_archive.write(changed, site)
    # what was built, not what was committed
    assert _names(out) == {"site-source/.gitignore": b"built/\n", "site-source/a.txt": b"changed\n"}
    first = out.read_bytes()
    assert source_archive.write(changed, site).read_bytes() == first  # the same files, the same bytes


def test_a_file_git_does_not_track_never_reaches_the_archive(repo, tmp_path):
    """A secret lying in the checkout, untracked and not ignored, stays out; so does a
    tracked file's deletion, and the tree is then said to have changes."""
    (repo / ".env").write_text("HF_TOKEN=hf_secret\n")
    (repo / "notes.txt").write_text("scratch\n")
    source = source_archive.describe(repo)
    assert source.files == (".gitignore", "a.txt") and not source.changed
    site = tmp_path / "site"
    site.mkdir()
    archive = source_archive.write(source, site).read_bytes()
    assert b"hf_secret" not in gzip.decompress(archive)
    (repo / "a.txt").unlink()
    gone = source_archive.describe(repo)
    assert gone.files == (".gitignore",) and gone.changed


def test_a_tracked_link_is_archived_as_the_link_not_what_it_points_to(repo, tmp_path):
    secret = tmp_path / "outside.txt"
    secret.write_text("outside the checkout\n")
    (repo / "link").symlink_to(secret)
    _git(repo, "add", "link")
    _git(repo, "commit", "-qm", "a link")
    site = tmp_path / "site"
    site.mkdir()
    out = source_archive.write(source_archive.describe(repo), site)
    with tarfile.open(fileobj=io.BytesIO(out.read_bytes())) as tar:
        link = tar.getmember("site-source/link")
        assert link.issym() and link.linkname == str(secret)
    assert b"outside the checkout" not in gzip.decompress(out.read_bytes())


def test_secrets_are_ignored_by_git():
    """A ``.env`` (or the like) at the root is ignored, so that `git add .` cannot track it."""
    names = [".env", ".env.local", "secrets.pem"]
    out = subprocess.run(["git", "check-ignore", *names], cwd=REPO, capture_output=True, text=True)
    assert out.stdout.split() == names


def test_outside_a_checkout_there_is_no_archive(tmp_path):
    source = source_archive.describe(tmp_path)
    assert source.commit is None
    assert source_archive.write(source, tmp_path) is None


@pytest.mark.build
@pytest.mark.parametrize("lang", ["en", *LANGUAGES])
def test_every_provenance_box_links_the_archive_of_the_built_files(built_site, lang):
    archive = built_site / source_archive.NAME
    assert archive.is_file()
    names = _names(archive)
    assert "site-source/mkdocs.yml" in names and "site-source/Makefile" in names
    assert not [n for n in names if "/.venv/" in n or n.startswith("site-source/site/")]
    page = (built_site if lang == "en" else built_site / lang) / "kv-cache"
    html = (page / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]*source\.tar\.gz)" download>([^<]+)</a>', html)
    assert links, lang
    assert {(page / href).resolve() for href, _ in links} == {archive.resolve()}
    assert all(re.search(r"\b[0-9a-f]{10}\b", text) for _, text in links)


def test_the_box_names_the_commit_the_changes_and_the_repository_when_set(monkeypatch):
    from types import SimpleNamespace

    from sitekit.sources import provenance

    monkeypatch.setattr(
        source_archive, "built_from", source_archive.Source(Path("."), "0123456789abcdef" * 2 + "01234567", True, ())
    )
    monkeypatch.setattr(source_archive, "repository", "")
    line = provenance._source_line(SimpleNamespace(url_prefix="../"))
    assert (
        line
        == '<a href="../source.tar.gz" download>the files this site was built from, commit 0123456789, with changes</a>'
    )
    monkeypatch.setattr(source_archive, "repository", "https://example.org/project")
    assert provenance._source_line(SimpleNamespace(url_prefix="")).endswith(
        ' · <a href="https://example.org/project">repository</a>'
    )
    monkeypatch.setattr(source_archive, "built_from", source_archive.Source(Path("."), None, False, ()))
    monkeypatch.setattr(source_archive, "repository", "")
    assert "not built from a git checkout" in provenance._source_line(SimpleNamespace(url_prefix=""))
