"""What a job is planned on: a GPU model, how many, whole or a MIG slice, and the instance
shape they are rented as."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from whichgpu.catalog.records import GPU

if TYPE_CHECKING:
    from whichgpu.catalog.prices import Link
    from whichgpu.catalog.records import MigProfile


@dataclass(frozen=True)
class Hardware:
    """What a candidate runs on: ``count`` whole GPUs per service, or one MIG slice per
    service; ``gpus`` is the physical cards paid for."""

    gpu: GPU
    count: int
    services: int
    mig: MigProfile | None = None
    #: GPUs in each rented instance, where the candidate is rented as instances
    #: (``count`` over instances of ``per_node``: rings that leave one cross the network
    #: the instances are sold with); None for cards bought, or hardware with no shape
    per_node: int | None = None
    #: The network its offers sell between those instances, where the catalog cites it
    #: (an option rented as several instances only; None: Ethernet at a node's share)
    link: Link | None = None

    @property
    def node_gpus(self) -> int | None:
        """GPUs an instance where the candidate spans several rented instances (rings that
        leave one cross their network, Ethernet unless the user names another: a provider
        sells separate instances joined by its VPC, not by a training fabric, unless its
        offer says so); None where one instance holds them all, or none is rented."""
        if self.per_node is None or self.per_node >= self.count:
            return None
        return self.per_node

    @property
    def instances(self) -> int:
        """Instances rented: the GPUs over the instance shape (one without a shape)."""
        return 1 if self.per_node is None else math.ceil(self.gpus / self.per_node)

    @property
    def gpus(self) -> int:
        if self.mig is None:
            return self.count * self.services
        return math.ceil(self.services / self.mig.max_instances)

    @property
    def mig_profile(self) -> str | None:
        return None if self.mig is None else self.mig.profile


def slice_gpu(gpu: GPU, profile: MigProfile) -> GPU:
    """A MIG slice as a smaller GPU: its share of the SMs (compute slices of 7) for every
    rate, its share of the memory slices (of 8) for bandwidth, its own memory (NVIDIA MIG
    user guide: each instance has dedicated SMs, L2 slices and memory controllers)."""
    import msgspec

    c = profile.compute_fraction
    m = profile.memory_fraction

    def scaled(value: float | None) -> float | None:
        return None if value is None else value * c

    return msgspec.structs.replace(
        gpu,
        memory_gib=profile.memory_gib,  # a slice's name counts 10^9-byte GB: in GiB here
        reported_memory_mib=None,  # the whole GPU's: a slice has its profile's memory
        memory_bandwidth_gb_per_s=gpu.memory_bandwidth_gb_per_s * m,
        fp32_tflops=gpu.fp32_tflops * c,
        fp64_tflops=gpu.fp64_tflops * c,
        fp64_tensor_tflops=scaled(gpu.fp64_tensor_tflops),
        tf32_tensor_dense_tflops=scaled(gpu.tf32_tensor_dense_tflops),
        fp16_tensor_dense_tflops=gpu.fp16_tensor_dense_tflops * c,
        fp16_fp16acc_tensor_dense_tflops=gpu.fp16_fp16acc_tensor_dense_tflops * c,
        bf16_tensor_dense_tflops=scaled(gpu.bf16_tensor_dense_tflops),
        fp8_tensor_dense_tflops=scaled(gpu.fp8_tensor_dense_tflops),
        fp4_tensor_dense_tflops=scaled(gpu.fp4_tensor_dense_tflops),
        int8_tensor_dense_tops=scaled(gpu.int8_tensor_dense_tops),
        vendor_fp16_tensor_tflops=gpu.vendor_fp16_tensor_tflops * c,
        nvlink_gb_per_s=0.0,
        mig_max_instances=0,
    )
