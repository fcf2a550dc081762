"""The planted slowdown of the timing gate's procedure (tests/gate/planted_slowdown.py):
planted where it says, sized as it says; the procedure itself times a real regeneration
and is run by hand (``python tests/gate/planted_slowdown.py [--unchanged]``)."""

from __future__ import annotations

import importlib.util
import shutil

import torch

from tests.conftest import REPO
from tests.gate import planted_slowdown


def test_the_plant_copies_a_fraction_of_the_weights_bytes_in_every_decode_step(tmp_path):
    (tmp_path / "measure/lab").mkdir(parents=True)
    shutil.copy(REPO / planted_slowdown.TARGET, tmp_path / planted_slowdown.TARGET)
    planted_slowdown.plant(tmp_path, 0.15)
    text = (tmp_path / planted_slowdown.TARGET).read_text()
    assert text.count("_planted_copy(model)  # PLANTED") == 1 and "def _planted_copy(model)" in text
    spec = importlib.util.spec_from_file_location("planted_generation", tmp_path / planted_slowdown.TARGET)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = torch.nn.Linear(100, 100)  # 10,100 float32 parameters: 40,400 bytes
    module._planted_copy(model)
    src, dst = module._PLANTED[id(model)]
    assert src.numel() == dst.numel() == int(40_400 * 0.15 / 2) and torch.equal(src, dst)


def test_an_unplanted_copy_is_the_checkout_as_git_holds_it(tmp_path):
    planted_slowdown.copy_checkout(tmp_path, REPO / "site_data")
    assert (tmp_path / planted_slowdown.TARGET).read_bytes() == (REPO / planted_slowdown.TARGET).read_bytes()
    assert (tmp_path / "site_data" / "calibration" / "meta.json").is_file()


def test_a_folder_without_a_calibration_is_refused_in_one_line(tmp_path, capsys):
    assert planted_slowdown.main(["--committed", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"--committed {tmp_path}: not a data folder with its calibration"
