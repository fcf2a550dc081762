"""The embedded model's converted folder (measure/lab/embedded.py) is put in place in one
rename, and two first runs at once both finish: the first complete folder is kept. It is
checked against the checksums recorded when it was written before every load, hashing
only a file changed since its last check (measure/lab/model_cache.py); a damaged one is
converted again with one line, and a cache that cannot be written is one line."""

import builtins
import errno
import io
import json
import os
import shutil
from types import SimpleNamespace

import pytest

from measure.errors import UserError
from measure.lab.model_cache import publish_folder


def _written(folder, marker: str, *, complete: bool = True):
    folder.mkdir()
    (folder / "model.safetensors").write_text(marker)
    if complete:
        (folder / "origin.json").write_text(json.dumps({"gguf_file": marker}))
    return folder


def test_a_folder_written_whole_takes_the_empty_place(tmp_path):
    tmp = _written(tmp_path / "m.partial-a", "a")
    publish_folder(tmp, tmp_path / "m")
    assert not tmp.exists() and (tmp_path / "m" / "model.safetensors").read_text() == "a"


def test_the_second_of_two_runs_keeps_the_first_ones_folder(tmp_path):
    target = _written(tmp_path / "m", "first")
    tmp = _written(tmp_path / "m.partial-b", "second")
    publish_folder(tmp, target)  # no error: the other run's folder is complete
    assert (target / "model.safetensors").read_text() == "first"
    assert tmp.is_dir()  # left for the caller, who removes it


def test_an_incomplete_folder_in_the_place_is_an_error_not_a_model(tmp_path):
    target = _written(tmp_path / "m", "half", complete=False)
    tmp = _written(tmp_path / "m.partial-c", "whole")
    with pytest.raises(OSError):
        publish_folder(tmp, target)
    assert sorted(os.listdir(target)) == ["model.safetensors"]


# The cache checked before every load (measure/lab/model_cache.py), on a converted folder
# made by a stand-in for the conversion: the checks see files and their checksums only.
WEIGHTS = bytes(range(256)) * 4096  # 1 MiB standing in for model.safetensors


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The embedded model's cache in a temporary folder, each conversion counted."""
    from measure.lab import embedded, model_cache

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("INFERENCE_CHEAP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(embedded, "embedded_gguf_path", lambda: gguf)
    conversions, hashed, lines = [], [], []

    def convert(gguf, folder, log):
        conversions.append(folder)
        (folder / "config.json").write_text('{"model_type": "llama"}')
        (folder / "model.safetensors").write_bytes(WEIGHTS)
        return {"gguf_file": gguf.name, "gguf_sha256": "0" * 64}

    sha256_file = model_cache.sha256_file
    monkeypatch.setattr(embedded, "_convert", convert)
    monkeypatch.setattr(model_cache, "sha256_file", lambda path: hashed.append(path.name) or sha256_file(path))
    return SimpleNamespace(
        folder=lambda: embedded.converted_folder(lines.append), conversions=conversions, hashed=hashed, lines=lines
    )


def test_a_verified_cache_is_loaded_without_hashing_its_weights_again(cache):
    folder = cache.folder()
    assert len(cache.conversions) == 1 and sorted(cache.hashed) == ["config.json", "model.safetensors"]
    origin = json.loads((folder / "origin.json").read_text())
    assert origin["files"]["model.safetensors"]["size"] == len(WEIGHTS)
    cache.hashed.clear()
    assert cache.folder() == folder and cache.hashed == [] and len(cache.conversions) == 1
    shutil.copytree(folder, folder.with_name("copy"))  # a copy: new inodes, hashed once, then trusted
    shutil.rmtree(folder)
    folder.with_name("copy").rename(folder)
    cache.folder()
    assert sorted(cache.hashed) == ["config.json", "model.safetensors"] and len(cache.conversions) == 1
    cache.hashed.clear()
    cache.folder()
    assert cache.hashed == [] and cache.lines == []


def _zero_middle(path, *, keep_mtime: bool):
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(len(WEIGHTS) // 2)
        f.write(b"\0" * 4096)
    if keep_mtime:  # set back as it was: the ctime still moved
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda p: _zero_middle(p, keep_mtime=False), "model.safetensors differs from its checksum"),
        (lambda p: _zero_middle(p, keep_mtime=True), "model.safetensors differs from its checksum"),
        (lambda p: os.truncate(p, 1000), f"model.safetensors is 1,000 bytes, {len(WEIGHTS):,} were written"),
        (lambda p: p.unlink(), "model.safetensors is missing"),
        (
            lambda p: (p.parent / "origin.json").write_text('{"gguf_file": "x.gguf", "gguf_sha256": "0"}'),
            "it records no checksums of its files, converted by older code",
        ),
    ],
)
def test_a_damaged_cache_is_converted_again_with_one_line(cache, damage, why):
    folder = cache.folder()
    damage(folder / "model.safetensors")
    assert cache.folder() == folder and len(cache.conversions) == 2
    assert cache.lines == [f"the converted model in {folder} cannot be trusted: {why}; converting it again"]
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert sorted(os.listdir(folder.parent)) == [".lock", folder.name]  # nothing set aside is left


def _unwritable(monkeypatch, root, code: int) -> None:
    """Every write below ``root`` fails with ``code`` (ENOSPC: a full disk, EROFS: a
    read-only mount), as the system would there: tests run as root, whom no mode bit
    stops, so the calls that write (make a folder, open to write, rename) are refused."""
    root = str(root)

    def below(path) -> bool:
        return os.path.abspath(os.fsdecode(path)).startswith(root)

    def refusing(original, writes=lambda *a, **k: True):
        def call(path, *args, **kwargs):
            if below(path) and writes(*args, **kwargs):
                raise OSError(code, os.strerror(code), os.fsdecode(path))
            return original(path, *args, **kwargs)

        return call

    for name in ("mkdir", "rename", "replace", "unlink", "rmdir"):
        monkeypatch.setattr(os, name, refusing(getattr(os, name)))
    monkeypatch.setattr(os, "open", refusing(os.open, lambda flags, *a, **k: flags & (os.O_WRONLY | os.O_RDWR)))
    for module in (builtins, io):
        monkeypatch.setattr(module, "open", refusing(io.open, lambda mode="r", *a, **k: set(mode) & set("wax+")))


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_cache_that_cannot_be_written_is_one_line(cache, monkeypatch, code):
    _unwritable(monkeypatch, os.environ["INFERENCE_CHEAP_CACHE"], code)
    with pytest.raises(UserError) as e:
        cache.folder()
    assert str(e.value) == (
        f"the converted model could not be written to {os.environ['INFERENCE_CHEAP_CACHE']} ({os.strerror(code)}); "
        "make room there, or set INFERENCE_CHEAP_CACHE to a folder that can be written"
    )


def test_a_disk_that_fills_during_the_conversion_leaves_no_partial_folder(cache, monkeypatch):
    from measure.lab import model_cache

    def full_after_config(folder):
        (folder / "config.json").write_text("{}")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(model_cache, "record_checksums", lambda folder, origin: full_after_config(folder))
    with pytest.raises(UserError, match=r"\(No space left on device\); make room there"):
        cache.folder()
    assert os.listdir(os.environ["INFERENCE_CHEAP_CACHE"]) == [".lock"]


def test_a_damaged_cache_on_a_read_only_mount_is_one_line(cache, monkeypatch):
    folder = cache.folder()
    os.truncate(folder / "model.safetensors", 10)
    _unwritable(monkeypatch, folder.parent, errno.EROFS)
    with pytest.raises(UserError) as e:
        cache.folder()
    assert str(e.value) == (
        f"the converted model in {folder} cannot be trusted (model.safetensors is 10 bytes, {len(WEIGHTS):,} were "
        "written) and cannot be replaced there (Read-only file system); remove that folder, or set "
        "INFERENCE_CHEAP_CACHE to a folder that can be written"
    )


def test_a_sound_cache_on_a_read_only_mount_is_used_and_hashed_each_time(cache, monkeypatch):
    folder = cache.folder()
    shutil.copytree(folder, folder.with_name("copy"))
    shutil.rmtree(folder)
    folder.with_name("copy").rename(folder)
    cache.hashed.clear()
    _unwritable(monkeypatch, folder.parent, errno.EROFS)  # its fingerprints cannot be recorded
    for _ in range(2):
        assert cache.folder() == folder
    assert cache.hashed.count("model.safetensors") == 2 and len(cache.conversions) == 1 and cache.lines == []


def test_a_run_on_a_full_disk_is_one_line(cache, monkeypatch, capsys, tmp_path):
    from tests.test_cli import _home, _one_error, run_main

    _home()  # the command line's home folder, made before the disk is full
    _unwritable(monkeypatch, os.environ["INFERENCE_CHEAP_CACHE"], errno.ENOSPC)
    line = _one_error(run_main(monkeypatch, capsys, "run", "--only", "chapter", "--out", str(tmp_path / "out")))
    cache_root = os.environ["INFERENCE_CHEAP_CACHE"]
    assert line == (
        f"error: the converted model could not be written to {cache_root} (No space left on device); "
        "make room there, or set INFERENCE_CHEAP_CACHE to a folder that can be written"
    )


def test_leftovers_of_a_stopped_conversion_are_removed_by_the_next(cache):
    folder = cache.folder()
    shutil.rmtree(folder)
    left = folder.with_name(f"{folder.name}.partial-abcd1234")
    left.mkdir()
    (left / "model.safetensors").write_bytes(b"half")
    cache.folder()
    assert sorted(os.listdir(folder.parent)) == [".lock", folder.name]
