"""The embedded model's converted folder (measure/lab/embedded.py) is put in place in one
rename, and two first runs at once both finish: the first complete folder is kept."""

import json
import os

import pytest

from measure.lab.embedded import publish_folder


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
