"""How a job spreads over several GPUs, and what that costs in communication: one place for
the recommender, ``fit`` and ``estimate``.

* **Layouts** (:func:`scaled_job`): training shards its state with ZeRO-3 / FSDP over data
  parallelism (Rajbhandari et al., 2020); inference splits the model with tensor parallelism
  inside a node, then pipeline stages (Shoeybi et al., 2019; Narayanan et al., 2021).
* **GPU counts** (:func:`gpu_counts`, :func:`min_gpus`): one sequence, powers of two.
* **Links** (:func:`nvlink_domain`, :func:`link_gb_per_s`): NVLink inside its domain, PCIe
  beyond it.
* **Collectives** (:func:`allreduce_seconds`, :func:`tensor_parallel_seconds`): ring
  all-reduce over the slowest link.
"""

from __future__ import annotations

from dataclasses import replace

from whichgpu.catalog.records import GPU
from whichgpu.estimate.memory import estimate_memory
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch
from whichgpu.units import BYTES_PER_GIB

#: The largest GPU count searched (a cluster of 128 nodes of 8).
MAX_GPUS = 1024

#: PCIe x16 bandwidth per direction in GB/s by generation (PCI-SIG: 3.0 ≈ 16, 4.0 ≈ 32, 5.0 ≈ 64).
PCIE_X16_GB_PER_S = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}


def usable_bytes(gpu: GPU) -> float:
    """A GPU's memory in bytes: its "GB" are binary (an A100 80GB has 81,920 MiB)."""
    return gpu.memory_gib * BYTES_PER_GIB


def tensor_parallel_degree(arch: ModelArch | None, limit: int) -> int:
    """The largest power of two up to ``limit`` that splits the model's attention heads
    (Megatron-LM and vLLM require ``num_attention_heads % tp == 0``) and its KV heads
    (divides them, or is a multiple of them: vLLM replicates KV heads past their count)."""
    tp = 1
    while tp * 2 <= limit:
        t = tp * 2
        if arch is not None and arch.n_heads and arch.n_heads % t:
            break
        kv = arch.n_kv_heads if arch is not None else 0
        if kv and kv % t and t % kv:
            break
        tp = t
    return tp


def check_layout(arch: ModelArch, job: Job) -> None:
    """A tensor-parallel degree must split the attention heads, a pipeline degree the layers
    (Megatron-LM's ``num_layers % pipeline_model_parallel_size``)."""
    from whichgpu.errors import InvalidInput

    if job.tp > 1 and arch.n_heads and arch.n_heads % job.tp:
        raise InvalidInput(
            "tp_heads", field=("tp",), tp=job.tp, model=arch.name, heads=arch.n_heads
        )
    if job.pp > 1 and arch.n_layers and arch.n_layers % job.pp:
        raise InvalidInput(
            "pp_layers", field=("pp",), pp=job.pp, model=arch.name, layers=arch.n_layers
        )


def scaled_job(job: Job, count: int, arch: ModelArch | None = None) -> tuple[Job, str]:
    """``job`` spread over ``count`` GPUs the way users do: training shards its state with
    ZeRO-3 / FSDP over data parallelism (keeping the user's tp and pp); inference splits the
    model with tensor parallelism up to 8 GPUs (one node) in a degree that divides its heads
    (:func:`tensor_parallel_degree`), then pipeline stages."""
    if count == 1:
        return replace(job, gpus=1, tp=1, pp=1, zero=job.zero if job.training else 0), "1 GPU"
    if job.training:
        # Sharded mixed precision runs in DeepSpeed (or FSDP's MixedPrecision policy): 16-bit
        # weights and fp32 masters, both sharded; torch autocast's cached 16-bit weight
        # copies would hold every gathered layer and undo the sharding.
        engine = (
            "deepspeed" if job.engine == "torch" and job.precision.endswith("mixed") else job.engine
        )
        sharded = replace(job, gpus=count, zero=3, engine=engine)
        if count % (job.tp * job.pp):
            sharded = replace(sharded, tp=1, pp=1)
        return sharded, f"ZeRO-3 over {count}"
    tp = tensor_parallel_degree(arch, min(count, 8))
    pp = max(1, count // tp)
    strategy = f"tensor parallel {tp}" + (f" × pipeline {pp}" if pp > 1 else "")
    return replace(job, gpus=tp * pp, tp=tp, pp=pp), strategy


def gpu_counts(limit: int = MAX_GPUS) -> list[int]:
    """The GPU counts whichgpu considers, up to ``limit``: 1, 2, 4, 8… Tensor parallelism
    splits attention heads and hidden sizes that are powers of two (or multiples of 8), and
    nodes hold 8: a count of 3, 5 or 6 divides neither, so no framework's default uses it."""
    out, count = [], 1
    while count <= limit:
        out.append(count)
        count *= 2
    return out


def min_gpus(arch: ModelArch, job: Job, gpu: GPU, limit: int = MAX_GPUS) -> tuple[int | None, str]:
    """The fewest of ``gpu`` (among :func:`gpu_counts`) that hold the job, spread by
    :func:`scaled_job`, and how it is spread."""
    for count in gpu_counts(limit):
        scaled, strategy = scaled_job(job, count, arch)
        if estimate_memory(arch, scaled).total_bytes <= usable_bytes(gpu):
            return count, strategy
    return None, f"more than {limit}"


#: GPUs one NVLink fabric joins all-to-all: an SXM baseboard's 8 (NVSwitch on HGX A100,
#: H100, H200, B200; DGX-1's hybrid cube mesh for V100 SXM2), but only pairs of PCIe cards
#: (an NVLink bridge joins two: RTX A6000, A40, A100/H100 PCIe, RTX 3090).
SXM_NVLINK_DOMAIN = 8
BRIDGE_NVLINK_DOMAIN = 2


def nvlink_domain(gpu: GPU) -> int:
    if not gpu.nvlink_gb_per_s:
        return 1
    return BRIDGE_NVLINK_DOMAIN if gpu.form_factor.startswith("PCIe") else SXM_NVLINK_DOMAIN


def link_gb_per_s(gpu: GPU, gpus: int = 2) -> float:
    """One direction of the slowest link a ring over ``gpus`` GPUs crosses: NVLink (half its
    bidirectional figure) while the ring stays inside one NVLink domain, PCIe x16 of the
    card's generation once it leaves it (bridged pairs, or more than 8 SXM GPUs, where the
    node's PCIe/network path is taken as PCIe-class)."""
    if gpu.nvlink_gb_per_s and gpus <= nvlink_domain(gpu):
        return gpu.nvlink_gb_per_s / 2
    return PCIE_X16_GB_PER_S.get(gpu.pcie_gen or 4, 31.5)


def tensor_parallel_seconds(arch: ModelArch, tokens: float, gpus: int, gpu: GPU) -> float:
    """Tensor-parallel communication of a forward pass over ``tokens`` tokens: Megatron-LM
    (Shoeybi et al., 2019, §3, Fig. 3) splits each transformer layer's attention and MLP
    across the GPUs and all-reduces their 16-bit outputs twice per layer (``g`` after
    self-attention and after the MLP): ``2·L`` ring all-reduces of ``tokens·hidden·2``
    bytes, which the GPUs wait on (they are on the critical path between layers)."""
    if gpus <= 1 or not arch.n_layers or not arch.hidden_size:
        return 0.0
    payload = 2.0 * arch.n_layers * tokens * arch.hidden_size * 2
    return allreduce_seconds(payload, gpus, gpu)


def allreduce_seconds(gradient_bytes: float, gpus: int, gpu: GPU) -> float:
    """Ring all-reduce: each GPU sends and receives ``2·(n−1)/n`` of the bytes."""
    if gpus <= 1:
        return 0.0
    return 2 * (gpus - 1) / gpus * gradient_bytes / (link_gb_per_s(gpu, gpus) * 1e9)
