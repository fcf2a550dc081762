"""GPUs whose roofline the pages predict with: memory bandwidth and dense fp16 matrix
peak as each vendor publishes them, with the source of each figure. Facts typed from
datasheets, never measured here; a prediction made with them is labelled as one.

The chapter names no card beyond "an 8 GB laptop GPU", and its figures do not single
one out (its decode step, 166.5 ms, is some forty times the floor of any of them), so
the laptop GPU is given as a range: the two ends of NVIDIA's 8 GB laptop parts in memory
bandwidth, the RTX 4060 Laptop GPU (128-bit GDDR6 at 16 Gbps: 256 GB/s) and the RTX 3070
Ti Laptop GPU (256-bit GDDR6 at 14 Gbps: 448 GB/s). NVIDIA publishes no matrix peak for
its laptop parts; theirs is worked out here as the architecture whitepapers do for the
desktop cards: streaming multiprocessors x dense fp16 FLOPs per clock per SM with fp32
accumulation (what PyTorch's fp16 matrix multiplies use) x the highest boost clock the
part is sold with. A laptop that gives its GPU less power runs it slower.
"""

from __future__ import annotations

from dataclasses import dataclass

# Dense fp16 tensor FLOPs per clock per SM with fp32 accumulation on GeForce Ada and
# Ampere parts: the RTX 4090's 165.2 TFLOPS over 128 SMs at 2,520 MHz (Ada whitepaper,
# table 2), the RTX 3090's 71 TFLOPS over 82 SMs at 1,695 MHz (GA102 whitepaper, table 9).
ADA_GEFORCE_FP16_PER_SM_CLOCK = 512
AMPERE_GEFORCE_FP16_PER_SM_CLOCK = 512
ADA_WHITEPAPER = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
AMPERE_WHITEPAPER = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
LAPTOPS = "https://www.nvidia.com/en-us/geforce/laptops/compare/"


@dataclass(frozen=True)
class Gpu:
    key: str  # the row's name in the data
    name: str
    memory_gib: float
    bandwidth_gb_s: float  # decimal GB/s, as rated
    fp16_tflops: float  # dense (no sparsity) fp16 matrix peak, fp32 accumulation
    role: str  # why it is here, for the pages
    source: str
    match: str = ""  # what the device name torch reports holds for this card

    def matches(self, device_name: str) -> bool:
        return bool(self.match) and self.match.lower() in device_name.lower()


def _laptop_tflops(sms: int, boost_mhz: float, per_sm_clock: int) -> float:
    return sms * per_sm_clock * boost_mhz * 1e6 / 1e12


GPUS: tuple[Gpu, ...] = (
    Gpu(
        "laptop_low",
        "NVIDIA GeForce RTX 4060 Laptop GPU",
        8,
        256,  # 128-bit x 16 Gbps / 8
        _laptop_tflops(24, 2370, ADA_GEFORCE_FP16_PER_SM_CLOCK),  # 24 SMs (3,072 CUDA cores), up to 2,370 MHz
        "the chapter's 8 GB laptop GPU, slowest memory",
        f"{LAPTOPS} (8 GB GDDR6, 128-bit, 3,072 CUDA cores, boost up to 2,370 MHz); {ADA_WHITEPAPER}",
        "RTX 4060 Laptop",
    ),
    Gpu(
        "laptop_high",
        "NVIDIA GeForce RTX 3070 Ti Laptop GPU",
        8,
        448,  # 256-bit x 14 Gbps / 8
        _laptop_tflops(46, 1485, AMPERE_GEFORCE_FP16_PER_SM_CLOCK),  # 46 SMs (5,888 CUDA cores), up to 1,485 MHz
        "the chapter's 8 GB laptop GPU, fastest memory",
        f"{LAPTOPS} (8 GB GDDR6, 256-bit, 5,888 CUDA cores, boost up to 1,485 MHz); {AMPERE_WHITEPAPER}",
        "RTX 3070 Ti Laptop",
    ),
    Gpu(
        "h100",
        "NVIDIA H100 SXM",
        80,
        3350,
        989.4,  # the datasheet's 1,979 teraFLOPS is with sparsity; dense is half
        "a data-centre GPU",
        "https://www.nvidia.com/en-us/data-center/h100/ (FP16 Tensor Core 1,979 teraFLOPS with sparsity, GPU memory "
        "bandwidth 3.35 TB/s, H100 SXM)",
        "H100",
    ),
    Gpu(
        "h200",
        "NVIDIA H200 SXM",
        141,
        4800,
        989.4,  # the same Hopper die as the H100 SXM: the datasheet's 1,979 with sparsity
        "a data-centre GPU with faster memory",
        "https://www.nvidia.com/en-us/data-center/h200/ (FP16 Tensor Core 1,979 teraFLOPS with sparsity, GPU memory "
        "bandwidth 4.8 TB/s, H200 SXM)",
        "H200",
    ),
)


def datasheet_for(device_name: str) -> Gpu | None:
    """The card of this list a device is (by the name torch reports), or None."""
    return next((g for g in GPUS if g.matches(device_name)), None)
