"""Cards for the calculator's presets: memory, memory bandwidth and matrix peak as each
vendor states them. Memory chips are sized in powers of two, so a card sold as "24 GB"
holds 24 GiB; bandwidth is rated in decimal GB/s (10^9 bytes per second).

The peak is the card's fp16/bf16 tensor-core throughput, dense, with fp32 accumulation
(as PyTorch's fp16 and bf16 matrix products accumulate): the compute dtype of every
weight precision the calculator offers, since int8 and int4 weights that are only
stored narrow are widened to fp16 for the product. Vendors state it three ways, kept
as stated here: a dense figure; a figure with 2:4 structured sparsity, twice the dense
one (``sparse=True``, NVIDIA's product pages mark it with an asterisk); and, for the
GeForce cards, in the architecture's whitepaper, beside a figure with fp16 accumulation
that is twice as high on those cards. A card whose vendor states none has no peak."""

from __future__ import annotations

from dataclasses import dataclass

_ADA = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
_AMPERE_GA102 = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"


@dataclass(frozen=True)
class Peak:
    """A matrix peak as its source states it, in TFLOP/s."""

    stated_tflops: float
    source: str
    sparse: bool = False  # stated with 2:4 structured sparsity: twice the dense throughput

    @property
    def dense_tflops(self) -> float:
        return self.stated_tflops / 2 if self.sparse else self.stated_tflops


@dataclass(frozen=True)
class Card:
    name: str
    memory_gib: float
    bandwidth_gb_s: float
    source: str
    peak: Peak | None = None


CARDS: tuple[Card, ...] = (
    Card(
        "NVIDIA GeForce RTX 4060",
        8,
        272,
        "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4060-4060ti/",
        None,  # its page states "AI TOPS" only, and the Ada whitepaper does not list it
    ),
    Card(
        "NVIDIA T4",
        16,
        320,
        "https://www.nvidia.com/en-us/data-center/tesla-t4/",
        Peak(65, "https://www.nvidia.com/en-us/data-center/tesla-t4/"),  # "Mixed Precision (FP16/FP32)"
    ),
    Card(
        "NVIDIA L4",
        24,
        300,
        "https://www.nvidia.com/en-us/data-center/l4/",
        Peak(242, "https://www.nvidia.com/en-us/data-center/l4/", sparse=True),
    ),
    Card(
        "NVIDIA A10",
        24,
        600,
        "https://www.nvidia.com/en-us/data-center/products/a10-gpu/",
        Peak(125, "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"),
    ),
    Card(
        "NVIDIA GeForce RTX 3090",
        24,
        936,
        "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/",
        Peak(71, _AMPERE_GA102),  # "Peak FP16 Tensor TFLOPS with FP32 Accumulate"
    ),
    Card(
        "NVIDIA GeForce RTX 4090",
        24,
        1008,
        "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/",
        Peak(165.2, _ADA),  # "Peak FP16 Tensor TFLOPS with FP32 Accumulate"
    ),
    Card(
        "NVIDIA L40S",
        48,
        864,
        "https://www.nvidia.com/en-us/data-center/l40s/",
        Peak(362.05, "https://www.nvidia.com/en-us/data-center/l40s/"),
    ),
    Card(
        "NVIDIA A100 40GB PCIe",
        40,
        1555,
        "https://www.nvidia.com/en-us/data-center/a100/",
        Peak(312, "https://www.nvidia.com/en-us/data-center/a100/"),
    ),
    Card(
        "NVIDIA A100 80GB SXM",
        80,
        2039,
        "https://www.nvidia.com/en-us/data-center/a100/",
        Peak(312, "https://www.nvidia.com/en-us/data-center/a100/"),
    ),
    Card(
        "NVIDIA H100 SXM",
        80,
        3350,
        "https://www.nvidia.com/en-us/data-center/h100/",
        Peak(1979, "https://www.nvidia.com/en-us/data-center/h100/", sparse=True),
    ),
    Card(
        "NVIDIA H200 SXM",
        141,
        4800,
        "https://www.nvidia.com/en-us/data-center/h200/",
        Peak(1979, "https://www.nvidia.com/en-us/data-center/h200/", sparse=True),
    ),
    Card(
        "AMD Instinct MI300X",
        192,
        5300,
        "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
        Peak(1307.4, "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"),
    ),
)
