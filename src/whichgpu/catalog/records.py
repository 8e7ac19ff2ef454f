"""Typed, frozen records of the catalog: one class per data file, validated on load.

Field names carry their units (``memory_bandwidth_gb_per_s``, ``price_usd_per_h``). Tensor
throughput is always *dense* (no 2:4 structured sparsity); the vendor's headline figure is
kept separately with its basis, so that the two are never mixed.

The annotations are evaluated as the classes are made (no ``from __future__ import
annotations``): msgspec reads them on the first conversion, and strings it would evaluate
one by one: 13 M instructions of every cold start, about 4 % of loading the catalog.
"""

import re
from datetime import date
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from whichgpu.units import BYTES_PER_GB, BYTES_PER_GIB

Id = Annotated[str, Meta(pattern=r"^[a-z0-9][a-z0-9.-]*$", max_length=64)]
Text = Annotated[str, Meta(min_length=1, max_length=2000)]
#: A date as precise as the source gives it (``2021``, ``2021-06``, ``2021-06-28``) or
#: ``undated`` when the source shows none (the source's ``retrieved`` date then stands).
DateText = Annotated[str, Meta(pattern=r"^(\d{4}(-\d{2}(-\d{2})?)?|undated)$")]
Tflops = Annotated[float, Meta(gt=0, le=100_000)]

Market = Literal["on-demand", "spot", "marketplace", "serverless"]
MARKETS: tuple[Market, ...] = ("on-demand", "spot", "marketplace", "serverless")
RENTAL_MARKETS: tuple[Market, ...] = ("on-demand", "spot", "marketplace")


class Record(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A validated, immutable row. msgspec validates in microseconds and imports in
    milliseconds, which keeps the CLI's cold start short (pydantic costs ~0.1 s there)."""

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """Fields without a default: read off the class's own tables (``msgspec.structs.
        fields`` would evaluate every annotation, ~1 ms a class at each cold start)."""
        names = cls.__struct_fields__
        first_default = len(names) - len(cls.__struct_defaults__)
        defaults = dict(zip(names[first_default:], cls.__struct_defaults__, strict=True))
        return tuple(n for n in names if defaults.get(n, msgspec.NODEFAULT) is msgspec.NODEFAULT)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__struct_fields__}


class Source(Record, frozen=True, kw_only=True):
    """A document that figures are taken from."""

    id: Id
    title: Text
    publisher: Text
    url: Text
    published: DateText
    retrieved: date
    kind: Text


class GPU(Record, frozen=True, kw_only=True):
    """One GPU model (a SKU): specs as its vendor documents them."""

    id: Id
    name: Text
    #: NVIDIA (CUDA) or AMD (ROCm): which software stacks run on it
    vendor: Literal["NVIDIA", "AMD"] = "NVIDIA"
    architecture: Text
    chip: Text
    #: CUDA compute capability (NVIDIA only; AMD's gfx target is in the field notes)
    compute_capability: Annotated[str, Meta(pattern=r"^\d{1,2}\.\d$")] | None = None
    launch_year: Annotated[int, Meta(ge=2010, le=2035)]
    form_factor: Text
    pcie_gen: Annotated[int, Meta(ge=3, le=6)] | None = None
    cuda_cores: Annotated[int, Meta(gt=0, le=100_000)] | None = None
    tensor_cores: Annotated[int, Meta(ge=0, le=10_000)] | None = None
    tensor_core_gen: Annotated[int, Meta(ge=1, le=9)] | None = None
    rt_cores: Annotated[int, Meta(ge=0, le=1_000)]
    rt_core_gen: Annotated[int, Meta(ge=1, le=9)] | None = None
    memory_gib: Annotated[float, Meta(gt=0, le=2_000)]
    #: The memory the driver reports in all (nvidia-smi's memory.total, rocm-smi's VRAM
    #: Total) on a recent driver, where a public log shows it: a GDDR data-centre card with
    #: ECC on loses a 16th to it (a T4's 16 GiB reads 15,360 MiB; an L40S's 48, 46,068) and an
    #: HBM part a little to the driver (an H100's 80, 81,559). None: ``memory_gib`` whole
    reported_memory_mib: Annotated[int, Meta(gt=0, le=2_000_000)] | None = None
    memory_type: Text
    memory_bandwidth_gb_per_s: Annotated[float, Meta(gt=0, le=50_000)]
    ecc: bool | None = None
    fp32_tflops: Tflops
    fp64_tflops: Annotated[float, Meta(ge=0, le=100_000)]
    fp64_tensor_tflops: Tflops | None = None
    tf32_tensor_dense_tflops: Tflops | None = None
    #: FP16 inputs with FP32 accumulation: the rate mixed-precision training gets.
    fp16_tensor_dense_tflops: Tflops
    #: FP16 inputs with FP16 accumulation (twice the FP32-accumulate rate on GeForce cards).
    fp16_fp16acc_tensor_dense_tflops: Tflops
    bf16_tensor_dense_tflops: Tflops | None = None
    fp8_tensor_dense_tflops: Tflops | None = None
    #: NVFP4 (E2M1 values, an FP8 scale per 16) on fifth-generation tensor cores (Blackwell).
    fp4_tensor_dense_tflops: Tflops | None = None
    int8_tensor_dense_tops: Tflops | None = None
    #: The FP16 tensor figure the vendor headlines, and whether it assumes 2:4 sparsity.
    vendor_fp16_tensor_tflops: Tflops
    vendor_fp16_tensor_basis: Literal["dense", "sparse"]
    tdp_w: Annotated[float, Meta(gt=0, le=3_000)]
    nvlink_gb_per_s: Annotated[float, Meta(ge=0, le=10_000)]
    #: GPUs one NVLink fabric joins where it spans several nodes (GB200 NVL72: 72, over
    #: compute trays of 4); empty: one node's (an HGX baseboard's 8, a bridged pair)
    nvlink_domain_gpus: Annotated[int, Meta(ge=2, le=1_024)] | None = None
    mig_max_instances: Annotated[int, Meta(ge=0, le=7)]
    display_outputs: Annotated[int, Meta(ge=0, le=8)]
    display_connectors: Text | None = None
    #: Video encode / decode engines (NVENC/NVDEC; AMD: VCN); None where no source says
    nvenc: Annotated[int, Meta(ge=0, le=16)] | None = None
    nvdec: Annotated[int, Meta(ge=0, le=16)] | None = None
    source: Id
    as_of: DateText

    def __post_init__(self) -> None:
        """Cross-field sanity: catches a sparse figure typed as dense, a swapped column."""
        if self.vendor == "NVIDIA" and self.compute_capability is None:
            raise ValueError("an NVIDIA GPU needs its compute_capability")
        if self.fp16_tensor_dense_tflops < self.fp32_tflops:
            raise ValueError("fp16_tensor_dense_tflops is below fp32_tflops")
        if self.fp16_fp16acc_tensor_dense_tflops < self.fp16_tensor_dense_tflops:
            raise ValueError("fp16_fp16acc_tensor_dense_tflops is below fp16_tensor_dense_tflops")
        if self.fp64_tflops > self.fp32_tflops:
            raise ValueError("fp64_tflops is above fp32_tflops")
        if self.bf16_tensor_dense_tflops is not None and (
            self.bf16_tensor_dense_tflops > self.fp16_fp16acc_tensor_dense_tflops
        ):
            raise ValueError("bf16_tensor_dense_tflops is above the FP16 tensor rate")
        factor = 2.0 if self.vendor_fp16_tensor_basis == "sparse" else 1.0
        implied = self.vendor_fp16_tensor_tflops / factor
        if abs(implied / self.fp16_fp16acc_tensor_dense_tflops - 1) > 0.03:
            raise ValueError(
                f"vendor_fp16_tensor_tflops ({self.vendor_fp16_tensor_basis}) implies "
                f"{implied:g} dense TFLOPS, not fp16_fp16acc_tensor_dense_tflops "
                f"{self.fp16_fp16acc_tensor_dense_tflops:g}"
            )
        if (self.rt_cores > 0) != (self.rt_core_gen is not None):
            raise ValueError("rt_core_gen must be given exactly when rt_cores > 0")
        if (self.display_outputs > 0) != (self.display_connectors is not None):
            raise ValueError("display_connectors must be given exactly when display_outputs > 0")

    @property
    def short_name(self) -> str:
        """The name without the vendor's brand words, for narrow table headers."""
        name = self.name.removeprefix("NVIDIA ")
        return name.removeprefix("GeForce ")

    @property
    def cuda(self) -> bool:
        """Runs CUDA (NVIDIA); an AMD GPU runs ROCm, where CUDA-only software does not."""
        return self.vendor == "NVIDIA"

    @property
    def has_nvlink(self) -> bool:
        return self.nvlink_gb_per_s > 0

    @property
    def has_mig(self) -> bool:
        return self.mig_max_instances > 0


#: GPU fields a user sees as specs (everything but the provenance columns).
GPU_SPEC_FIELDS: tuple[str, ...] = tuple(
    name for name in GPU.__struct_fields__ if name not in ("id", "source", "as_of")
)


#: Most MIG GPUs split into 7 compute slices and 8 memory slices (A100, H100, H200, B200);
#: the A30 and the RTX PRO 6000 Blackwell into 4 and 4 (NVIDIA MIG user guide, "Supported
#: MIG Profiles"): a profile row names its GPU's geometry.
MIG_COMPUTE_SLICES = 7
MIG_MEMORY_SLICES = 8

_MIG_PROFILE_NAME = re.compile(r"^([1-7])g\.(\d+)gb(\+me|\+me\.all|\+gfx|-me)?$")


class MigProfile(Record, frozen=True, kw_only=True):
    """One MIG GPU-instance profile of one GPU (``1g.10gb`` on the A100 80GB), as NVIDIA's
    MIG user guide lists it.

    ``memory_gb`` is the figure in the profile's name (usable memory is a little less:
    ``1g.10gb`` reports 9.75 GiB). ``placements`` are the memory slots an instance may start
    on, ``;``-separated, and ``placement_slices`` the slots it then covers: what
    ``nvidia-smi mig -lgipp`` prints as ``Placements: {0,2,4,6}:2``.
    """

    gpu: Id
    profile: Annotated[str, Meta(pattern=_MIG_PROFILE_NAME.pattern)]
    compute_slices: Annotated[int, Meta(ge=1, le=MIG_COMPUTE_SLICES)]
    memory_slices: Annotated[int, Meta(ge=1, le=MIG_MEMORY_SLICES)]
    memory_gb: Annotated[float, Meta(gt=0, le=2_000)]
    max_instances: Annotated[int, Meta(ge=1, le=MIG_COMPUTE_SLICES)]
    placements: Annotated[str, Meta(pattern=r"^\d(;\d)*$")]
    placement_slices: Annotated[int, Meta(ge=1, le=MIG_MEMORY_SLICES)]
    decoders: Annotated[int, Meta(ge=0, le=16)]
    jpeg: Annotated[int, Meta(ge=0, le=16)]
    ofa: Annotated[int, Meta(ge=0, le=16)]
    #: The GPU's compute and memory slices (7 and 8, or 4 and 4 on an A30)
    gpu_compute_slices: Annotated[int, Meta(ge=1, le=MIG_COMPUTE_SLICES)] = MIG_COMPUTE_SLICES
    gpu_memory_slices: Annotated[int, Meta(ge=1, le=MIG_MEMORY_SLICES)] = MIG_MEMORY_SLICES
    source: Id
    #: Where the placements come from, when not from ``source``.
    placements_source: Id | None = None
    as_of: DateText
    note: Text | None = None

    @property
    def memory_gib(self) -> float:
        """The memory whichgpu counts the profile as holding, in GiB: its name's GB as that
        many 10^9 bytes (``1g.10gb``: 9.31 GiB). A MIG instance gives CUDA a little more
        than that (9.75 GiB on the A100 80GB: 9,984 MiB, NVIDIA MIG user guide, ``nvidia-smi
        mig -lgip`` output), so the figure stays on the safe side."""
        return self.memory_gb * BYTES_PER_GB / BYTES_PER_GIB

    def __post_init__(self) -> None:
        """Cross-field sanity: the name, the slices and the placements must agree."""
        match = _MIG_PROFILE_NAME.match(self.profile)
        if match is None:  # only when built directly: conversion checks the pattern first
            raise ValueError(f"profile {self.profile!r} is not a MIG profile name like 1g.10gb")
        if int(match.group(1)) != self.compute_slices:
            raise ValueError(
                f"profile {self.profile} names {match.group(1)} compute slices, "
                f"not compute_slices {self.compute_slices}"
            )
        if float(match.group(2)) != self.memory_gb:
            raise ValueError(
                f"profile {self.profile} names {match.group(2)} GB, "
                f"not memory_gb {self.memory_gb:g}"
            )
        if self.placement_slices != self.memory_slices:
            raise ValueError(
                f"placement_slices {self.placement_slices} differs from "
                f"memory_slices {self.memory_slices}"
            )
        starts = self.start_slots
        if list(starts) != sorted(set(starts)):
            raise ValueError(f"placements {self.placements!r} are not distinct and ascending")
        for start in starts:
            if start + self.memory_slices > self.gpu_memory_slices:
                raise ValueError(
                    f"placement {start} + {self.memory_slices} memory slices runs past "
                    f"slot {self.gpu_memory_slices}"
                )
        if self.max_instances > len(starts):
            raise ValueError(
                f"max_instances {self.max_instances} exceeds the {len(starts)} placements"
            )
        if self.max_instances * self.memory_slices > self.gpu_memory_slices:
            raise ValueError(
                f"{self.max_instances} instances of {self.memory_slices} memory slices exceed "
                f"the {self.gpu_memory_slices} slices of a GPU"
            )

    @property
    def start_slots(self) -> tuple[int, ...]:
        """The memory slots an instance may start on: ``"0;2;4"`` is ``(0, 2, 4)``."""
        return tuple(int(slot) for slot in self.placements.split(";"))

    @property
    def placement_ranges(self) -> tuple[tuple[int, int], ...]:
        """Each placement as the ``(start, stop)`` memory slots it covers, stop excluded."""
        return tuple((start, start + self.memory_slices) for start in self.start_slots)

    @property
    def compute_fraction(self) -> float:
        """The share of the GPU's SMs: ``3g`` is 3/7."""
        return self.compute_slices / self.gpu_compute_slices

    @property
    def memory_fraction(self) -> float:
        """The share of the GPU's memory (and L2): ``3g.40gb`` on an 80 GB GPU is 4/8."""
        return self.memory_slices / self.gpu_memory_slices

    @property
    def media_extensions(self) -> bool:
        """Whether the profile takes the media engines (``+me``)."""
        return "+me" in self.profile


class FieldSource(Record, frozen=True, kw_only=True):
    """The source of one GPU figure, where it is not the row's own source, or is derived."""

    gpu: Id
    field: Text
    source: Id
    note: Text | None = None


class Alias(Record, frozen=True, kw_only=True):
    """Another name for a GPU. ``scope`` says whose vocabulary it is (a user's, SkyPilot's),
    or that it names a family of variants (``family``: one row per variant; a name typed
    alone reads as the variant most offers rent, and the answer says which), or a variant
    the catalog has no row of (``variant``: the same chip and memory as ``gpu``, its own
    tensor rates unpublished; read as ``gpu``, and the answer says so)."""

    alias: Text
    gpu: Id
    scope: Literal["user", "skypilot", "family", "variant"]
    note: Text | None = None


PriceKind = Literal["offer", "claim"]


class Price(Record, frozen=True, kw_only=True):
    """An hourly rental price per GPU of one instance type (the instance's price divided by
    its GPU count), kept with the instance it is sold as.

    An ``offer`` is a provider's own listing (its price page, its API as a price catalog
    records it); a ``claim`` is a price someone else states (the article's ranges, a blog's
    table). Rankings use offers; a claim is checked against them (``compare``), and the
    article's scenario (``--catalog article``) ranks on the article's own claims.
    """

    gpu: Id
    kind: PriceKind = "offer"
    market: Market
    provider: Text
    region: Text | None = None
    #: Regions listing this instance type at catalog time (the price is their lowest).
    region_count: Annotated[int, Meta(ge=1, le=1_000)] = 1
    instance: Text | None = None
    gpus_per_instance: Annotated[int, Meta(ge=1, le=64)] = 1
    price_usd_per_h: Annotated[float, Meta(gt=0, le=500)]
    #: The median per-GPU price over ``region_count`` regions, where more than one lists it.
    median_usd_per_h: Annotated[float, Meta(gt=0, le=500)] | None = None
    source: Text
    as_of: DateText
    note: Text | None = None

    @property
    def instance_usd_per_h(self) -> float:
        """What one instance costs an hour: the per-GPU price times its GPUs."""
        return self.price_usd_per_h * self.gpus_per_instance


class InstanceNetwork(Record, frozen=True, kw_only=True):
    """The network a provider sells one instance type with, between instances: its
    bandwidth an instance and whether the GPUs reach it directly (a training fabric: AWS
    EFA with GPUDirect RDMA, InfiniBand, RoCE, GCP GPUDirect), from the provider's
    instance-type page. Rings
    between instances of an option rented as several cross it
    (:func:`whichgpu.estimate.parallel.network_gb_per_s`)."""

    provider: Text
    instance: Text
    #: Gb/s an instance, as sold: for an "up to" figure its sustained baseline (a run of
    #: hours outlasts the burst credits; the note quotes both)
    network_gbit: Annotated[float, Meta(gt=0, le=100_000)]
    #: How the provider names the fabric (EFA, GPUDirect-TCPXO, ENA (Ethernet))
    fabric: Text
    #: The NICs move the GPUs' data directly (GPUDirect RDMA, GPUDirect-TCPX/TCPXO), as a
    #: training fabric does; else it goes through host memory over TCP
    gpudirect: bool
    source: Id
    as_of: DateText
    note: Text | None = None


class PurchasePrice(Record, frozen=True, kw_only=True):
    """A purchase price range for one GPU, new or used: a seller's or a market's figure
    (``offer``), or one someone else states (``claim``: the article's C13), which is listed
    and checked but not ranked on, as a rental claim is not."""

    gpu: Id
    kind: PriceKind = "offer"
    condition: Literal["new", "used"]
    low_usd: Annotated[float, Meta(gt=0, le=1_000_000)]
    high_usd: Annotated[float, Meta(gt=0, le=1_000_000)]
    source: Id
    as_of: DateText
    note: Text | None = None

    def __post_init__(self) -> None:
        if self.high_usd < self.low_usd:
            raise ValueError("high_usd is below low_usd")


class ArticleFigure(Record, frozen=True, kw_only=True):
    """A figure the seed article states for one of its GPUs (claim ids from CLAIMS.md).

    Numeric claims give ``low``/``high`` (equal for a point value; ``high`` empty for "at
    least"); text claims give ``accepted``, the catalog values the article's words denote.
    """

    claim: Annotated[str, Meta(pattern=r"^C\d+$")]
    gpu: Id
    field: Text
    article_text: Text
    low: float | None = None
    high: float | None = None
    accepted: Text | None = None
    note: Text | None = None

    def __post_init__(self) -> None:
        if (self.low is None) == (self.accepted is None):
            raise ValueError("give either low (numeric claim) or accepted (text claim)")


class CapacityClaim(Record, frozen=True, kw_only=True):
    """A capacity claim of the article as a job on a GPU and a model size it states."""

    claim: Annotated[str, Meta(pattern=r"^C\d+$")]
    gpu: Id
    task: Text
    precision: Text
    quant: Text | None = None
    optimizer: Text = "adamw"
    seq: Annotated[int, Meta(gt=0)]
    batch: Annotated[int, Meta(gt=0)] = 1
    checkpointing: Literal["none", "selective", "full"] = "none"
    stated_params: Annotated[float, Meta(gt=0)]
    #: fits: the claim holds if a model of that size fits; limit: it holds if the largest
    #: model that fits is within a factor of 2 of it; reported: context, not a verdict.
    test: Literal["fits", "limit", "reported"]
    note: Text | None = None


Regime = Literal[
    "llm-train",
    "llm-prefill",
    "llm-decode",
    "llm-serve",
    "cnn-train",
    "cnn-infer",
    "transformer-train",
    "diffusion-infer",
    "render",
    "fp64",
    "gemm",
    "bandwidth",
]


class Benchmark(Record, frozen=True, kw_only=True):
    """A published measurement, with the harness that produced it (software moves throughput
    by ±50 %: ResNet-50 on one A100 is 1,582 images/s in Lambda's harness, 2,470 in NVIDIA's)."""

    id: Id
    gpu: Id
    gpus: Annotated[int, Meta(ge=1, le=1024)] = 1
    regime: Regime
    model: Text
    #: Empty where precision does not apply (render scores, memory copies).
    precision: Text | None = None
    batch: Annotated[int, Meta(ge=1)] | None = None
    seq: Annotated[int, Meta(ge=1)] | None = None
    generate: Annotated[int, Meta(ge=0)] | None = None
    metric: Text
    value: Annotated[float, Meta(gt=0)]
    unit: Text
    harness: Id
    #: Image generation: pixels per image side, and denoising steps a call
    resolution: Annotated[int, Meta(ge=8, le=16384)] | None = None
    steps: Annotated[int, Meta(ge=1, le=10000)] | None = None
    #: Training: activation checkpointing as the run states it ("full": every layer's
    #: forward runs again in the backward); empty where the source says it is off, or for
    #: work that is not training
    checkpointing: Literal["none", "full"] | None = None
    #: PCIe cards joined in pairs by NVLink bridges (their tensor parallelism runs over
    #: NVLink); without, a pair of PCIe cards talks over PCIe
    nvlink_bridge: bool = False
    #: The KV cache's dtype where the run set it apart from its weights' ("auto": the
    #: model's 16 bits); empty: an fp8 run's cache in fp8, as TensorRT-LLM's fp8 builds
    #: keep it, any other run's in 16 bits
    kv_dtype: Literal["auto", "fp16", "bf16", "fp8"] | None = None
    #: A mixture of experts served with data-parallel attention and expert-parallel MoE
    #: over the run's GPUs (TensorRT-LLM's "DEP" columns, ``enable_attention_dp``)
    attention_dp: bool = False
    #: The serving engine family whose routed experts' law a planned MoE step takes
    #: (:attr:`~whichgpu.job.Job.moe_kernels`); empty on a published measurement, which
    #: takes its harness's
    moe_kernels: Id | None = None
    #: A convolutional network's activations in memory: ``contiguous`` (NCHW, PyTorch's
    #: default), whose 16-bit tensor-core convolutions cuDNN runs behind NCHW-to-NHWC
    #: transposes, or ``channels_last`` (NHWC), which they take as they are (NVIDIA,
    #: "Convolutional Layers User's Guide", tensor layouts); empty where the run does not
    #: say, or the framework lays them out itself
    memory_format: Literal["contiguous", "channels_last"] | None = None
    software: Text | None = None
    source: Id
    as_of: DateText
    note: Text | None = None


class PerfClaim(Record, frozen=True, kw_only=True):
    """A speed claim of the article as a ratio of two GPUs' throughput on one job."""

    claim: Annotated[str, Meta(pattern=r"^C\d+$")]
    label: Text
    model: Text
    task: Text
    precision: Text
    batch: Annotated[int, Meta(ge=1)] = 1
    seq: Annotated[int, Meta(ge=1)] | None = None
    prompt: Annotated[int, Meta(ge=1)] | None = None
    generate: Annotated[int, Meta(ge=1)] | None = None
    gpu: Id
    #: Empty for a claim about the throughput itself (in the workload's unit)
    baseline: Id | None = None
    harness: Id | None = None
    stated_low: Annotated[float, Meta(gt=0)]
    stated_high: Annotated[float, Meta(gt=0)]
    note: Text | None = None


class Claim(Record, frozen=True, kw_only=True):
    """One claim of the seed article and how whichgpu checks it."""

    claim: Annotated[str, Meta(pattern=r"^C\d+$")]
    topic: Text
    text: Text
    check: Literal[
        "figures",
        "purchase",
        "rent",
        "hours_per_100",
        "rent_ratio",
        "ratio_bandwidth",
        "ratio_fp64",
        "fp32_vs_tensor",
        "capacity",
        "perf",
        "mig",
        "evidence",
    ]
    verdict: Literal["confirmed", "corrected", "not checkable yet"] | None = None
    explanation: Text | None = None
    source: Id | None = None
    #: The numbers the claim states, space-separated, for claims checked by arithmetic
    #: (for several GPUs: in the order the article lists its GPUs, low then high).
    stated: Text | None = None

    def __post_init__(self) -> None:
        if (self.check == "evidence") != (self.verdict is not None):
            raise ValueError("a verdict is recorded exactly for claims checked by evidence")


class EfficiencyRow(Record, frozen=True, kw_only=True):
    """One fitted term of the throughput model (``efficiency.csv``, written by
    scripts/fit_efficiency.py): an efficiency η per (harness, regime), a factor, a
    per-step overhead, a shared term, or the leave-one-out error spread of a regime."""

    kind: Literal["spread_low", "spread_high", "eta", "factor", "overhead", "term"]
    key: str = ""
    regime: str = ""
    value: float
    unit: str = ""
    fitted_on: Annotated[int, Meta(ge=0)] | None = None


class CompilePair(Record, frozen=True, kw_only=True):
    """One training run published with and without ``torch.compile``, all else equal
    (``compile_pairs.csv``): what compiling buys, for :mod:`whichgpu.estimate.compile_speed`."""

    source: Id
    as_of: DateText
    framework: Id
    model: Id
    gpu: Id
    gpus: Annotated[int, Meta(ge=1)]
    eager_tokens_per_s_per_gpu: Annotated[float, Meta(gt=0)]
    compiled_tokens_per_s_per_gpu: Annotated[float, Meta(gt=0)]
    note: Text | None = None


class PresetMeta(Record, frozen=True, kw_only=True):
    """A shipped model preset's ``_whichgpu`` object: which model it is and where its
    config.json and published parameter count come from."""

    id: Id
    hf_id: str = ""
    display_name: Text | None = None
    source: Text
    retrieved: DateText | None = None
    config_exact: str = ""
    published_params: Annotated[int, Meta(gt=0)] | None = None
    published_active_params: Annotated[int, Meta(gt=0)] | None = None
    published_params_source: str = ""
    notes: str = ""
    #: Other Hugging Face ids the same weights were published under (a repository renamed:
    #: meta-llama/Meta-Llama-3.1-8B is now meta-llama/Llama-3.1-8B)
    hf_aliases: tuple[str, ...] = ()
