"""The site carries its source: every build writes ``source.tar.gz``, the files git holds
for the tree it was built from, beside the pages, and every provenance box links to it.

The files are the ones git tracks (``git ls-files``), read from the working tree: the
commit's files, plus, when the tree has changes, the tracked files' changes, which
``describe`` reports so that the boxes say "with changes". A file git does not track is
never in the archive, whatever its name: a ``.env`` with a token lying in the checkout, a
scratch notebook, another tool's output. A tracked symbolic link is archived as the link
git holds, never as the file it points to. Outside a git checkout there is no archive, and
the boxes say so. A published site's repository address comes from the ``SITE_REPOSITORY``
environment variable (the pages workflow sets it) or ``extra.repository`` in mkdocs.yml,
and is shown beside the archive when set.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

NAME = "source.tar.gz"


@dataclass(frozen=True)
class Source:
    root: Path  # the checkout the files are read from
    commit: str | None  # None outside a git checkout
    changed: bool  # the tree differed from the commit when the site was built
    files: tuple[str, ...]


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout


def describe(root: Path) -> Source:
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return Source(root, None, False, ())
    listed = _git(root, "ls-files", "--cached", "-z") or ""
    # a tracked file deleted from the tree is not built from; a tracked link stays a link
    files = tuple(sorted(f for f in listed.split("\0") if f and ((root / f).is_symlink() or (root / f).is_file())))
    status = _git(root, "status", "--porcelain", "--untracked-files=no") or ""
    return Source(root, commit.strip(), bool(status.strip()), files)


def write(source: Source, site: Path, data: tuple[str, dict[str, bytes]] | None = None) -> Path | None:
    """``site/source.tar.gz`` with every file of ``source`` under ``site-source/``; the same
    bytes for the same files (no times, owners or modes of the machine that built it).
    ``data``: the data folder's path in the checkout and its files as the build read them
    (path within it -> bytes); the archive holds those in place of whatever the folder
    holds on disk now (a run may have written since the build read it)."""
    if source.commit is None:
        return None
    folder, read = data if data is not None else ("", {})
    prefix = folder.rstrip("/") + "/"
    replaced = {prefix + name.split("/")[0] + "/" for name in read}  # the experiments' folders read
    out = site / NAME
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in sorted(read.items()):
            info = tarfile.TarInfo(f"site-source/{prefix}{name}")
            info.mtime, info.mode, info.size = 0, 0o644, len(content)
            tar.addfile(info, io.BytesIO(content))
        for name in source.files:
            if any(name.startswith(folder) for folder in replaced):
                continue  # the data as read, above
            path = source.root / name
            info = tarfile.TarInfo(f"site-source/{name}")
            info.mtime, info.mode = 0, 0o644
            if path.is_symlink():
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(path)
                tar.addfile(info)
                continue
            data = path.read_bytes()
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))
    return out


# What this build is made from and where it is published: set once per build (render.py's
# on_config), read by every provenance box.
built_from: Source = Source(Path("."), None, False, ())
repository: str = ""
