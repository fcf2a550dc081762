"""Cards for the calculator's presets: memory and memory bandwidth as each vendor's
product page states them. Memory chips are sized in powers of two, so a card sold as
"24 GB" holds 24 GiB; bandwidth is rated in decimal GB/s (10^9 bytes per second)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Card:
    name: str
    memory_gib: float
    bandwidth_gb_s: float
    source: str


CARDS: tuple[Card, ...] = (
    Card(
        "NVIDIA GeForce RTX 4060",
        8,
        272,
        "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4060-4060ti/",
    ),
    Card("NVIDIA T4", 16, 320, "https://www.nvidia.com/en-us/data-center/tesla-t4/"),
    Card("NVIDIA L4", 24, 300, "https://www.nvidia.com/en-us/data-center/l4/"),
    Card("NVIDIA A10", 24, 600, "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"),
    Card(
        "NVIDIA GeForce RTX 3090",
        24,
        936,
        "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/",
    ),
    Card(
        "NVIDIA GeForce RTX 4090", 24, 1008, "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/"
    ),
    Card("NVIDIA L40S", 48, 864, "https://www.nvidia.com/en-us/data-center/l40s/"),
    Card("NVIDIA A100 40GB PCIe", 40, 1555, "https://www.nvidia.com/en-us/data-center/a100/"),
    Card("NVIDIA A100 80GB SXM", 80, 2039, "https://www.nvidia.com/en-us/data-center/a100/"),
    Card("NVIDIA H100 SXM", 80, 3350, "https://www.nvidia.com/en-us/data-center/h100/"),
    Card("NVIDIA H200 SXM", 141, 4800, "https://www.nvidia.com/en-us/data-center/h200/"),
    Card("AMD Instinct MI300X", 192, 5300, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"),
)
