"""What an experiment is given: the model, the device, the profile, the run's calibration,
and a progress bar."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import torch

from measure.lab.models import LoadedModel

if TYPE_CHECKING:
    from measure.lab.calibration import Calibration

T = TypeVar("T")
PROFILES = ("full", "cpu", "smoke")
TEXT_PATH = Path(__file__).resolve().parent.parent / "data" / "alice29.txt"


def default_profile(device: torch.device) -> str:
    """The chapter's sizes on a GPU; a smaller sweep that fits the CPU time budget."""
    return "full" if device.type == "cuda" else "cpu"


@cache
def book_text() -> str:
    return TEXT_PATH.read_text(encoding="utf-8")


@dataclass
class Context:
    model: LoadedModel
    device: torch.device
    dtype: torch.dtype
    profile: str
    machine: dict  # devices.describe_machine: the hardware, with its id
    memory_method: str
    experiment_title: str = ""
    quiet: bool = False
    started: float = field(default_factory=time.perf_counter)
    # The run's start calibration: its copy bandwidth (``calibration.bandwidth_bytes_per_s``)
    # is the one every floor divides by; None only where no run calibrated (a unit test).
    calibration: Calibration | None = None

    def log(self, message: str) -> None:
        if not self.quiet:
            print(f"[{time.perf_counter() - self.started:7.1f}s] {message}", file=sys.stderr, flush=True)

    def progress(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterable[T]:
        from tqdm.auto import tqdm

        return tqdm(
            items, desc=f"  {desc}", total=total, disable=self.quiet, file=sys.stderr, leave=False, dynamic_ncols=True
        )

    def prompt_ids(self, n: int, batch: int = 1, *, offset: int = 0) -> torch.Tensor:
        """``n`` token ids of ordinary English prose from the committed book (random ids
        for a random-weights model, which has no tokenizer)."""
        vocab = self.model.config.vocab_size
        if self.model.tokenizer is None:
            g = torch.Generator().manual_seed(1234 + offset)
            ids = torch.randint(0, vocab, (batch, n), generator=g)
        else:
            all_ids = book_token_ids(self.model.tokenizer)
            if len(all_ids) < offset + n * batch:
                raise ValueError(f"the book holds {len(all_ids)} tokens; {offset + n * batch} requested")
            ids = torch.tensor(all_ids[offset : offset + n * batch]).view(batch, n)
        return ids.to(self.device)


_TOKEN_CACHE: dict[int, list[int]] = {}


def book_token_ids(tokenizer) -> list[int]:
    key = id(tokenizer)
    if key not in _TOKEN_CACHE:
        _TOKEN_CACHE[key] = tokenizer(book_text(), add_special_tokens=False)["input_ids"]
    return _TOKEN_CACHE[key]
