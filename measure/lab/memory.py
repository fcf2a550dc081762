"""Peak memory of a piece of work, measured by the allocator or the operating system.

* CUDA: the caching allocator's own peak (``torch.cuda.max_memory_allocated``), reset
  before the work; exact bytes of live tensors.
* CPU: there is no allocator counter, so the process's peak resident set size is read
  from the kernel (``VmHWM`` in /proc/self/status), after resetting it by writing 5 to
  /proc/self/clear_refs (Linux 4.0+). It counts pages, so it includes allocator slack and
  anything else the process touched: a real measurement, coarser than CUDA's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from dataclasses import dataclass

import torch

from sitedata import wording


@dataclass(frozen=True)
class Peak:
    baseline_bytes: int  # in use before the work (the resident weights, mostly)
    peak_bytes: int  # the highest point during the work

    @property
    def above_baseline_bytes(self) -> int:
        return self.peak_bytes - self.baseline_bytes


def _read_status(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # reported in kB (KiB)
    raise OSError(f"{field} not in /proc/self/status")


def _trim_heap() -> None:
    """Give freed heap pages back to the kernel (glibc ``malloc_trim``), so that work
    reusing pages an earlier point freed still shows up as growth of the resident set."""
    name = ctypes.util.find_library("c")
    if name:
        try:
            ctypes.CDLL(name).malloc_trim(0)
        except (OSError, AttributeError):
            pass


def _reset_cpu_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def method(device: torch.device) -> str:
    if device.type == "cuda":
        return wording.MEMORY_CUDA
    return wording.MEMORY_CPU


def settled_bytes(device: torch.device) -> int:
    """Memory in use once garbage is collected and freed heap pages are returned: the
    allocator's live bytes on CUDA, the resident set on CPU."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        return torch.cuda.memory_allocated(device)
    _trim_heap()
    return _read_status("VmRSS")


def measure_peak(fn: Callable[[], object], *, device: torch.device) -> Peak:
    """Peak memory while ``fn`` runs, relative to what was in use just before it."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        fn()
        torch.cuda.synchronize(device)
        return Peak(base, torch.cuda.max_memory_allocated(device))
    _trim_heap()
    if not _reset_cpu_peak():
        raise OSError("cannot reset the peak RSS (/proc/self/clear_refs not writable)")
    base = _read_status("VmRSS")
    fn()
    return Peak(base, _read_status("VmHWM"))
