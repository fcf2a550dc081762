"""Where a run or a merge may write its data, and holding that folder while it does.

A data folder may be any new, empty or marked folder (``sitedata.folder``), except one
whose place is someone else's: inside a git repository's own ``.git``, or inside this
checkout's source (its pages, code, tests and hooks, its hidden folders, the built site),
where a run would mix measurements into what is committed or built. ``site_data/`` and
any other folder of the checkout remain open. A name with a control character (a newline,
an escape sequence) is refused too: it cannot be shown in one line, or typed again.

While it writes, a run or a merge holds the folder's lock (``sitedata.lock``) from its
first touch to its end; a second one into the same folder is refused with one line that
names the first, and nothing of the first is ever removed. A run of another key than the
folder's primary goes under its runs/<key>/ (``run_folder``, sitedata.runs), and the run
holds both locks: the folder's, then its own.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from measure.errors import UserError
from sitedata.folder import FolderError, claim
from sitedata.keys import run_key
from sitedata.lock import FolderBusy, held
from sitedata.names import shown
from sitedata.read import DataError
from sitedata.runs import place

REPO = Path(__file__).resolve().parent.parent
# The checkout's own folders (besides its hidden ones: .git, .github, .ci, .venv): a data
# folder in one would be committed as source, built as a page, or cleaned with the build.
SOURCE_FOLDERS = frozenset({"docs", "measure", "sitedata", "sitekit", "hooks", "tests", "gpu", "site"})
_CONTROL = {"Cc", "Cf", "Zl", "Zp"}  # control and format characters, line and paragraph separators


def place_problem(path: Path, repo: Path = REPO) -> str:
    """Why ``path`` may not hold data written by this project ("" if it may). Touches nothing."""
    text = os.fspath(path)
    bad = next((c for c in text if unicodedata.category(c) in _CONTROL), None)
    if bad is not None:
        return f"{shown(text)} holds a control character (U+{ord(bad):04X}); give a folder with a plain name"
    where = Path(os.path.abspath(text)).resolve()  # every link on the way followed, as a write would
    if ".git" in Path(os.path.abspath(text)).parts or ".git" in where.parts:
        return f"{text} is inside a git repository's own folder (.git); give a folder of its own"
    try:
        inner = where.relative_to(Path(repo).resolve()).parts
    except ValueError:
        return ""
    if not inner:
        return f"{text} is this checkout itself; give site_data or a folder of its own"
    if inner[0] in SOURCE_FOLDERS or inner[0].startswith("."):
        inside = f"{text} is inside this checkout's {inner[0]}/ folder, which holds no data"
        return f"{inside}; give site_data or a folder of its own"
    return ""


def check_place(path: Path, option: str) -> None:
    problem = place_problem(path)
    if problem:
        raise UserError(f"{option} {problem}")


@contextmanager
def holding(folder: Path, command: str, refused: str) -> Iterator[None]:
    """``folder`` made a data folder (marked) and its lock held for the whole block;
    ``refused`` begins the one line said when another process holds it or the folder
    is not one this project may write."""
    with ExitStack() as stack:
        try:
            claim(folder)
            stack.enter_context(held(folder, command))
        except (FolderBusy, FolderError) as e:
            raise UserError(f"{refused}{e}") from None
        except OSError as e:
            raise UserError(f"{refused}{folder}: {e.strerror or e}") from None
        yield


def run_key_of(model: str, dev, profile: str | None) -> str:
    """The key (sitedata.keys) a run will write under, from what it asks for: the
    model's name as its provenance records it, this machine, its dtype and profile."""
    from measure.lab.context import default_profile
    from measure.lab.devices import default_dtype, describe_machine
    from measure.lab.models import EMBEDDED_NAME

    return run_key(
        {
            "model": {"name": EMBEDDED_NAME if model == "default" else model},
            "device": describe_machine(dev),
            "dtype": str(default_dtype(dev)).removeprefix("torch."),
            "profile": profile or default_profile(dev),
        }
    )


def run_folder(out: Path, key: str, experiments: list[str]) -> Path:
    """Where the run of ``key`` writing ``experiments`` goes in ``out``: out itself, or
    out/runs/<key> where the primary holds one of them from another key (sitedata.runs.place)."""
    try:
        return place(out, key, experiments)
    except (DataError, FolderError) as e:
        raise UserError(f"--out {e}") from None
    except OSError as e:
        raise UserError(f"--out {out}: {e.strerror or e}") from None
