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

import math
from functools import lru_cache

from whichgpu.catalog.records import GPU
from whichgpu.estimate.memory import memory_of
from whichgpu.estimate.pipeline import model_chunks
from whichgpu.frozen import evolve
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch
from whichgpu.units import BYTES_PER_GIB

#: The largest GPU count searched (a cluster of 128 nodes of 8).
MAX_GPUS = 1024

#: PCIe x16 bandwidth per direction in GB/s by generation (PCI-SIG: 3.0 ≈ 16, 4.0 ≈ 32, 5.0 ≈ 64).
PCIE_X16_GB_PER_S = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}


def usable_bytes(gpu: GPU) -> float:
    """A GPU's memory in bytes as its driver reports it (:attr:`GPU.reported_memory_mib`:
    a T4 with ECC on has 15,360 MiB of its 16 GiB), else its "GB" as binary (an A100 80GB
    has 81,920 MiB)."""
    if gpu.reported_memory_mib is not None:
        return gpu.reported_memory_mib * 1024.0**2
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
    """A tensor-parallel degree must split the attention heads; a pipeline needs a layer for
    each stage (uneven splits are allowed: :func:`stage_share`)."""
    from whichgpu.errors import InvalidInput, Ref

    if job.tp > 1 and arch.n_heads and arch.n_heads % job.tp:
        raise InvalidInput(
            "tp_heads", field=("tp",), tp=job.tp, model=arch.name, heads=arch.n_heads
        )
    if job.pp > 1 and arch.n_layers and job.pp > arch.n_layers:
        raise InvalidInput(
            "pp_layers", field=("pp",), pp=job.pp, model=arch.name, layers=arch.n_layers
        )
    if job.vp > 1 and job.pp <= 1:
        raise InvalidInput("vp_needs_pp", field=("vp",), vp=job.vp, pp=Ref(("pp",)))
    stage = math.ceil(max(arch.n_layers, 1) / max(job.pp, 1))
    if job.vp > stage:
        raise InvalidInput(
            "vp_layers", field=("vp",), vp=job.vp, pp=job.pp, model=arch.name, layers=stage
        )


def check_recompute_block(arch: ModelArch, job: Job) -> None:
    """A block of recomputed layers the user asks for is 1 to the layers a pipeline rank of
    their layout holds: the range Megatron-core's TransformerConfig states ("recompute_num_layers
    must be between 1 and num_layers_per_pipeline_rank", raised where none is given; a
    larger one is not refused there, and its block method then recomputes every layer), a
    rule of whichgpu's so that a block asked is a block run. Checked on the layout asked,
    not on one a search picks: there a block past a chunk's layers recomputes each of them,
    as Megatron runs it (:func:`~whichgpu.estimate.activations.recomputed_share`); the
    rank's layers counted at the largest stage, uneven splits allowed (Megatron's message
    divides evenly)."""
    from whichgpu.errors import InvalidInput

    stage = math.ceil(max(arch.n_layers, 1) / max(job.pp, 1))
    if job.recompute_layers > stage:
        raise InvalidInput("recompute_layers_stage", field=("recompute_layers",),
                           n=job.recompute_layers, pp=job.pp, model=arch.name,
                           layers=stage)  # fmt: skip


def scaled_job(job: Job, count: int, arch: ModelArch | None = None) -> tuple[Job, str]:
    """``job`` spread over ``count`` GPUs the way users do: training shards its state with
    ZeRO-3 / FSDP over data parallelism (keeping the user's tp and pp); inference splits the
    model with tensor parallelism up to 8 GPUs (one node) in a degree that divides its heads
    (:func:`tensor_parallel_degree`), then pipeline stages."""
    if count == 1:
        return evolve(job, gpus=1, tp=1, pp=1, zero=job.zero if job.training else 0), "1 GPU"
    if job.training:
        # Sharded mixed precision runs in DeepSpeed (or FSDP's MixedPrecision policy): 16-bit
        # weights and fp32 masters, both sharded; torch autocast's cached 16-bit weight
        # copies would hold every gathered layer and undo the sharding.
        runtime = (
            "deepspeed"
            if job.runtime == "torch" and job.precision.endswith("mixed")
            else job.runtime
        )
        sharded = evolve(job, gpus=count, zero=3, runtime=runtime)
        if count % (job.tp * job.pp * job.cp):
            sharded = evolve(sharded, tp=1, pp=1, cp=1)
        if sharded.pp > 1:
            # pipeline stages shard the optimizer only: DeepSpeed's pipeline engine refuses
            # ZeRO-2/3 ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
            # deepspeed/runtime/pipe/engine.py), Megatron's distributed optimizer is ZeRO-1
            sharded = evolve(sharded, zero=1)
        if sharded.tp * sharded.pp * sharded.cp > 1:  # the user's split kept, sharded
            return sharded, layout_name(sharded.tp, sharded.pp, sharded.dp, sharded.cp)
        return sharded, f"ZeRO-3 over {count}"
    tp = tensor_parallel_degree(arch, min(count, 8))
    pp = max(1, count // tp)
    return evolve(job, gpus=tp * pp, tp=tp, pp=pp), layout_name(tp, pp)


def layout_name(tp: int, pp: int, dp: int = 1, cp: int = 1) -> str:
    """A tensor × pipeline × context × data-parallel layout in words, its degrees of 1 left
    out."""
    return (
        f"tensor parallel {tp}"
        + (f" × pipeline {pp}" if pp > 1 else "")
        + (f" × context parallel {cp}" if cp > 1 else "")
        + (f" × data parallel {dp}" if dp > 1 else "")
    )


#: The fewest tokens a GPU's chunk of a sequence keeps under context parallelism: each
#: rank holds two chunks of ``seq / (2·cp)`` (the causal mask's balance), and NeMo's
#: performance recipes split 8,192-token sequences two ways, not 4,096-token ones
CP_MIN_TOKENS = 4096


def context_degrees(job: Job, room: int) -> list[int]:
    """The context-parallel degrees a 3-D framework's layout may take for ``job`` with
    ``room`` GPUs to spare: 1, and 2, 4… while each GPU keeps :data:`CP_MIN_TOKENS` of a
    sequence that splits evenly (``seq`` a multiple of ``2·cp``)."""
    out, cp = [1], 2
    while cp <= room and job.seq // cp >= CP_MIN_TOKENS and job.seq % (2 * cp) == 0:
        out.append(cp)
        cp *= 2
    return out


def training_layouts(
    arch: ModelArch, job: Job, count: int, parallel: str = "3d"
) -> list[tuple[Job, str]]:
    """The ways frameworks spread a training job over ``count`` GPUs, for the search to
    choose from (:mod:`whichgpu.plan.settings` keeps the fastest that fits):

    * data-parallel replicas (PyTorch DDP), every GPU holding the whole model state;
    * ZeRO-3 / FSDP over all of them (:func:`scaled_job`);
    * with ``parallel="3d"`` (Megatron-LM, NeMo, torchtitan): tensor parallelism of 2, 4 or
      8 inside a node (a degree that splits the heads, :func:`tensor_parallel_degree`) ×
      pipeline stages over the layers × context parallelism where sequences are long
      (:func:`context_degrees`; NeMo's recipes: Llama 3 8B at 8,192 tokens, TP 1 × CP 2) ×
      data parallelism, the optimizer distributed over the
      data-parallel ranks (ZeRO-1, Megatron's distributed optimizer) and 16-bit weights with
      fp32 masters (Narayanan et al., 2021, §3: TP inside a node, PP across them). Every
      pipeline degree up to the layers is listed, smallest first (an uneven split runs at
      its heaviest stage), interleaved as :func:`~whichgpu.estimate.pipeline.model_chunks`
      chooses.

    ``parallel`` is the framework's (:mod:`whichgpu.job.recipes`): ``ddp`` frameworks use DDP or,
    when the model state does not fit, FSDP (Accelerate); ``fsdp``/``zero`` shard."""
    if count == 1:
        return [scaled_job(job, 1, arch)]
    out: list[tuple[Job, str]] = []
    if parallel in ("ddp", "3d"):
        out.append((evolve(job, gpus=count, tp=1, pp=1, cp=1, zero=0), f"data parallel {count}"))
    out.append(scaled_job(job, count, arch))
    if parallel != "3d" or not (arch.n_heads and arch.n_layers) or arch.kind == "cnn":
        return out
    runtime = (
        "megatron" if job.runtime == "torch" and job.precision.endswith("mixed") else job.runtime
    )
    tp = 1 if arch.kind == "decoder" and job.seq >= 2 * CP_MIN_TOKENS else 2
    while tp <= min(count, job.gpus_per_node) and tensor_parallel_degree(arch, tp) == tp:
        pp = 1
        while tp * pp <= count:
            if count % (tp * pp) == 0 and pp <= arch.n_layers:
                for cp in context_degrees(job, count // (tp * pp)):
                    if (tp == 1 and cp == 1) or count % (tp * pp * cp):
                        continue  # (tensor parallel 1 is plain data parallelism, above)
                    layout = evolve(job, gpus=count, tp=tp, pp=pp, cp=cp, zero=1,
                                    runtime=runtime)  # fmt: skip
                    layout = evolve(layout, vp=model_chunks(arch, layout))
                    out.append((layout, layout_name(tp, pp, layout.dp, cp)))
            pp *= 2
        tp *= 2
    return out


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
    :func:`scaled_job` — or, for training where ZeRO-3 cannot (each GPU still holds whole
    activations), by a tensor × pipeline layout of :func:`training_layouts`, which splits
    the activations too — and how it is spread."""
    capacity = usable_bytes(gpu)
    for count in gpu_counts(limit):
        for layout, name in _spreads(arch, job, count):
            if memory_of(arch, layout).total_bytes <= capacity:
                return count, name
    return None, f"more than {limit}"


def splits_tensors(job: Job) -> bool:
    """Whether ``job`` is split by tensor (and pipeline) parallelism as people run it: a
    served model (every engine), pretraining (Megatron-LM, torchtitan) or a Megatron-engine
    job; not a fine-tune run as the HF Trainer runs it (ZeRO-3 / FSDP: PEFT and bitsandbytes
    have no tensor parallelism, whichgpu.job.recipes.parallel_of)."""
    return not job.training or job.task == "train" or job.runtime == "megatron"


@lru_cache(maxsize=1024)
def _spreads(arch: ModelArch, job: Job, count: int) -> tuple[tuple[Job, str], ...]:
    """The layouts :func:`min_gpus` tries at ``count``, in order: :func:`scaled_job`, then
    for training (its layout left open) the tensor × pipeline layouts of
    :func:`training_layouts`. Built once for every GPU ``fit`` and ``recommend`` ask about:
    they do not depend on it, only whether they fit does."""
    out = [scaled_job(job, count, arch)]
    if job.training and splits_tensors(job) and count > 1 and not (job.tp > 1 or job.pp > 1):
        # a pipeline as full as a step's accumulation will keep it (chosen later, per GPU:
        # whichgpu.plan.settings): a micro-batch in flight per stage
        out += [
            (evolve(layout, grad_accum=max(layout.grad_accum, layout.pp)), name)
            for layout, name in training_layouts(arch, job, count, "3d")[2:]
        ]
    return tuple(out)


#: GPUs one NVLink fabric joins all-to-all: an SXM baseboard's 8 (NVSwitch on HGX A100,
#: H100, H200, B200; DGX-1's hybrid cube mesh for V100 SXM2), but only pairs of PCIe cards,
#: and only where an NVLink bridge joins them (RTX A6000, A40, A100/H100 PCIe, RTX 3090).
SXM_NVLINK_DOMAIN = 8
BRIDGE_NVLINK_DOMAIN = 2


#: How the catalog describes a PCIe card that is sold as bridged pairs (H100 NVL)
SOLD_BRIDGED = "joined by NVLink bridges"


def nvlink_domain(gpu: GPU, bridged: bool = False) -> int:
    """GPUs one NVLink fabric joins. A PCIe card's bridge is an accessory bought apart that
    the instances sold with those cards do not state, so a pair is joined only where
    ``bridged`` says so, or where the card is sold as bridged pairs (:data:`SOLD_BRIDGED`):
    TensorRT-LLM's v0.14 tables measure 2 × A100 PCIe at 0.55-0.66 of 2 × A100 SXM (the
    same NVLink rate, were they bridged) at every length, as a pair over PCIe runs
    (validation/published_serving.csv, s81). A rack-scale fabric joins more than a node
    (:attr:`~whichgpu.catalog.records.GPU.nvlink_domain_gpus`: GB200 NVL72's 72 GPUs, sold as
    trays of 4)."""
    if not gpu.nvlink_gb_per_s:
        return 1
    if gpu.nvlink_domain_gpus:
        return gpu.nvlink_domain_gpus
    if gpu.form_factor.startswith("PCIe"):
        paired = bridged or SOLD_BRIDGED in gpu.form_factor
        return BRIDGE_NVLINK_DOMAIN if paired else 1
    return SXM_NVLINK_DOMAIN


def in_rack_domain(gpu: GPU, gpus: int) -> bool:
    """Whether ``gpus`` of ``gpu`` lie in one rack-scale NVLink domain, whatever instances
    they are sold as (GB200 NVL72: up to 72 over trays of 4), so that their rings and
    replicas stay on NVLink across nodes."""
    return bool(gpu.nvlink_domain_gpus) and gpus <= (gpu.nvlink_domain_gpus or 0)


def bridgeable(gpu: GPU, count: int, per_instance: int | None = None) -> bool:
    """``count`` cards (``per_instance`` a rented instance, None: one machine) that NVLink
    bridges could join in pairs where :func:`nvlink_domain` does not assume them: PCIe
    cards with the connectors, two or more in one machine."""
    together = count if per_instance is None else min(count, per_instance)
    return together > 1 and nvlink_domain(gpu, True) > nvlink_domain(gpu, False)


#: GPUs in one node: an HGX/DGX baseboard's 8, and the 8 PCIe cards of a 4U GPU server.
GPUS_PER_NODE = 8

#: InfiniBand NIC rate per GPU in Gb/s, by the host's PCIe generation: DGX-1 (PCIe 3) had
#: EDR 100 Gb/s ports, DGX A100 (PCIe 4) one ConnectX-6 HDR 200 Gb/s per GPU, DGX H100 and
#: DGX B200 (PCIe 5) one ConnectX-7 NDR 400 Gb/s per GPU (NVIDIA DGX user guides), in the
#: rail-optimised fabrics those clusters are built with.
INFINIBAND_GBIT_PER_GPU = {3: 100.0, 4: 200.0, 5: 400.0, 6: 800.0}

#: A node on plain Ethernet: one 100 GbE port for all its GPUs, TCP without RDMA.
ETHERNET_GBIT_PER_NODE = 100.0
#: An instance smaller than a node gets its share of the host's port, as clouds size a VM's
#: network with its slice of the host: AWS G5 (A10G) g5.xlarge (1 GPU) up to 10 Gb/s,
#: g5.12xlarge (4) 40, g5.48xlarge (8) 100; GCP G2 (L4) g2-standard-4 (1 GPU) 10 Gb/s,
#: g2-standard-48 (4) 50, g2-standard-96 (8) 100 (the providers' instance-type pages): about
#: 12.5 Gb/s a GPU, the 100 GbE node's share.

#: GeForce cards have peer-to-peer over PCIe disabled (the RTX 4090's driver reports no P2P;
#: NCCL then stages through host memory): each transfer crosses PCIe twice. Measured,
#: host-staged rings reach 0.46 (8 × RTX 4090, stock driver) and 0.57 (4 × RTX 4090, SHM) of
#: the x16 rate (validation/nccl_busbw.csv; nccl-tests all_reduce_perf busbw).
NO_P2P_SHARE = 0.5
#: What NCCL's ring all-reduce reaches of the x16 link rate between cards with peer-to-peer:
#: the median busbw of the eight large-message nccl-tests runs over PCIe with P2P in
#: validation/nccl_busbw.csv (4-8 GPUs, PCIe 4 and 5, under one socket and across two: the
#: cross-socket runs reach as much, 0.60-0.66; an A100 PCIe box with every pair across the
#: root complexes reaches 0.17).
PCIE_P2P_BUS_SHARE = 0.66
#: What NCCL moves over NVLink of its line rate: "Each NVLink has a line rate of 25GB/s (in
#: each direction) which converts to ~20GB/s effective bandwidth with a 128B payload size"
#: (the SMs' payload; NCCL's maintainer, NVIDIA/nccl-tests#149): 240 GB/s of an A100's 300
#: (measured 230-233), 360 of an H100's 450 (its "app-level bandwidth is 370GB/s in each
#: direction", NVIDIA/nccl#1442). Rows: validation/nccl_nvlink_busbw.csv.
NVLINK_PAYLOAD_SHARE = 0.8
#: An all-reduce where the NVSwitch reduces in the switch (NVLink SHARP, the third-generation
#: NVSwitch of HGX H100 boards and later) runs faster than the wire: "we can get a 30%
#: improvement using NVLink SHARP" (NVIDIA/nccl#1442); 8 × H100 reach a busbw of ~480 GB/s
#: (nccl-tests#212), 8 × H200 475 (nccl-tests#272), 8 × H800 215 of 200 (nccl#1374).
NVLS_GAIN = 1.3


def nvlink_sharp(gpu: GPU) -> bool:
    """Whether the GPU's NVSwitch reduces in the switch (NVLink SHARP, which NCCL uses for
    all-reduce by default): NVIDIA SXM modules from Hopper (compute capability 9.0) on,
    whose boards carry the third-generation NVSwitch or later."""
    return (
        gpu.vendor == "NVIDIA"
        and gpu.form_factor.startswith("SXM")
        and float(gpu.compute_capability or 0) >= 9.0
    )


def host_link_gb_per_s(gpu: GPU) -> float:
    """One direction of the card's PCIe x16 link (to host memory)."""
    return PCIE_X16_GB_PER_S.get(gpu.pcie_gen or 4, 31.5)


#: The host's DRAM bandwidth (GB/s, the platform's peak: channels × 8 bytes × transfer
#: rate) of the servers data-centre cards are built into, by the PCIe generation of their
#: slots: PCIe 3, two Xeon Scalable (Skylake, DGX-2's Platinum 8168) of 6 DDR4-2666
#: channels each, 256; PCIe 4, two EPYC Rome/Milan (DGX A100's 7742) of 8 DDR4-3200 each,
#: 409.6; PCIe 5, two Xeon Sapphire Rapids (DGX H100's 8480C) of 8 DDR5-4800 each, 614.4.
SERVER_DRAM_GB_PER_S = {3: 256.0, 4: 409.6, 5: 614.4}
#: The same for the desktops consumer cards are built into (one or two cards), two
#: channels, by the year from which a card launched: DDR4-2666 (42.7), DDR4-3200 (51.2)
#: from 2019 (Ryzen 3000, the first desktop with PCIe 4), DDR5-5600 (89.6) from 2022
#: (Raptor Lake's rated 5600; Ryzen 7000 5200 to 6000).
DESKTOP_DRAM_GB_PER_S = ((2022, 89.6), (2019, 51.2), (0, 42.7))
#: GH200: each Hopper GPU has its own Grace CPU, whose LPDDR5X reaches "up to 512 GB/s"
#: (NVIDIA GH200 Grace Hopper Superchip datasheet).
GRACE_DRAM_GB_PER_S = 512.0
#: Cards a desktop holds at most: more share a server's memory.
DESKTOP_CARDS = 2


def host_dram_gb_per_s(gpu: GPU, cards: int, per_node: int = GPUS_PER_NODE) -> float:
    """The DRAM bandwidth the host gives ``cards`` GPUs of one node of ``per_node``: all
    of a desktop's for up to :data:`DESKTOP_CARDS` consumer cards
    (:data:`DESKTOP_DRAM_GB_PER_S`), each GH200 its own Grace's, else a server's
    (:data:`SERVER_DRAM_GB_PER_S`; a card without a PCIe generation, an SXM or OAM module,
    the latest), its share where a cloud instance is a slice of a :data:`GPUS_PER_NODE`-GPU
    server."""
    if "consumer" in gpu.form_factor and cards <= DESKTOP_CARDS:
        return next(rate for year, rate in DESKTOP_DRAM_GB_PER_S if gpu.launch_year >= year)
    if gpu.form_factor.startswith("Superchip"):
        return GRACE_DRAM_GB_PER_S * cards
    server = SERVER_DRAM_GB_PER_S[min(max(gpu.pcie_gen or 5, 3), 5)]
    return server * min(1.0, per_node / GPUS_PER_NODE)


def network_gb_per_s(
    gpu: GPU, network: str, per_node: int = GPUS_PER_NODE, gbit: float | None = None
) -> float:
    """GB/s per GPU between nodes: each GPU's share of its instance's network (a
    hierarchical ring sends every GPU's part through it, or each GPU has its own NIC on a
    fabric), the instance's ``gbit`` as its offer sells it where the catalog cites it
    (:class:`~whichgpu.catalog.records.InstanceNetwork`), else :func:`instance_gbit`."""
    return instance_gbit(gpu, network, per_node, gbit) / 8 / per_node


def instance_gbit(
    gpu: GPU, network: str, per_node: int = GPUS_PER_NODE, sold: float | None = None
) -> float:
    """An instance's network, Gb/s: as its offer sells it (``sold``), else as assumed where
    the offer says nothing: on InfiniBand a NIC a GPU of its PCIe generation
    (:data:`INFINIBAND_GBIT_PER_GPU`), on Ethernet the node's port or an instance's share
    of it (:func:`ethernet_gbit`)."""
    if sold is not None:
        return sold
    if network == "ethernet":
        return ethernet_gbit(per_node)
    return INFINIBAND_GBIT_PER_GPU.get(gpu.pcie_gen or 5, 400.0) * per_node


def ethernet_gbit(per_node: int) -> float:
    """An instance's Ethernet port, Gb/s: a node's, or the share of it an instance of
    ``per_node`` GPUs of a :data:`GPUS_PER_NODE`-GPU host is sold with."""
    return ETHERNET_GBIT_PER_NODE * min(1.0, per_node / GPUS_PER_NODE)


@lru_cache(maxsize=1024)
def one_instance(job: Job, gpus: int) -> Job:
    """``job`` as a group of ``gpus`` GPUs inside one instance sees it: the instances' shape
    and the network between them play no part in what such a group computes
    (:func:`collective_gb_per_s` stays on the node's own links up to ``per_node``; the memory
    key drops them too, :func:`~whichgpu.estimate.memory.memory_key`), so one serving replica
    planned on 2-, 4- and 8-GPU instances is one replica, its curve computed once. A group
    wider than its instance, or than a default node, keeps them."""
    alone = (Job.gpus_per_node, Job.network, None)
    if gpus > min(job.gpus_per_node, Job.gpus_per_node):
        return job
    if (job.gpus_per_node, job.network, job.network_gbit) == alone:
        return job
    return evolve(job, gpus_per_node=Job.gpus_per_node, network=Job.network, network_gbit=None)


def collective_gb_per_s(
    gpu: GPU,
    ranks: int,
    network: str = "infiniband",
    per_node: int = GPUS_PER_NODE,
    bridged: bool = False,
    allreduce: bool = False,
    network_gbit: float | None = None,
) -> float:
    """One direction of the slowest link a ring over ``ranks`` GPUs crosses: NVLink (half its
    bidirectional figure, at what NCCL's payloads carry of it, :data:`NVLINK_PAYLOAD_SHARE`,
    and for an ``allreduce`` NVLink SHARP's gain where the switch has it) while it stays
    inside one NVLink domain (:func:`nvlink_domain`: across nodes only in a rack-scale one;
    PCIe cards only where ``bridged``), PCIe x16 of the card's generation inside a node of
    ``per_node`` GPUs at what NCCL reaches of it (with peer-to-peer, or staged through host
    memory between GeForce cards, whose driver allows peer-to-peer only over a bridge), and
    the network once it spans nodes (``network_gbit`` an instance, as sold)."""
    domain = nvlink_domain(gpu, bridged)
    if domain > 1 and (ranks <= min(domain, per_node) or in_rack_domain(gpu, ranks)):
        wire = gpu.nvlink_gb_per_s / 2
        if gpu.vendor != "NVIDIA":  # another vendor's fabric: no measurement to scale it by
            return wire
        sharp = allreduce and nvlink_sharp(gpu)
        return wire * NVLINK_PAYLOAD_SHARE * (NVLS_GAIN if sharp else 1.0)
    pcie = host_link_gb_per_s(gpu)
    staged = "consumer" in gpu.form_factor  # no peer-to-peer over PCIe
    if ranks <= per_node:  # a ring between the cards of one node
        return pcie * (NO_P2P_SHARE if staged else PCIE_P2P_BUS_SHARE)
    # across nodes each GPU's data leaves through its NIC (GPUDirect RDMA): the network is
    # the bound, or the card's own link where that is slower
    across = network_gb_per_s(gpu, network, per_node, network_gbit)
    return min(pcie * NO_P2P_SHARE if staged else pcie, across)


def link_gb_per_s(gpu: GPU, gpus: int = 2, bridged: bool = False) -> float:
    """:func:`collective_gb_per_s` of an all-reduce on an InfiniBand cluster (inference's
    tensor parallelism stays inside a node)."""
    return collective_gb_per_s(gpu, gpus, bridged=bridged, allreduce=True)


def tensor_parallel_seconds(
    arch: ModelArch, tokens: float, gpus: int, gpu: GPU, bridged: bool = False
) -> float:
    """Tensor-parallel communication of a forward pass over ``tokens`` tokens: Megatron-LM
    (Shoeybi et al., 2019, §3, Fig. 3) splits each transformer layer's attention and MLP
    across the GPUs and all-reduces their 16-bit outputs twice per layer (``g`` after
    self-attention and after the MLP): ``2·L`` ring all-reduces of ``tokens·hidden·2``
    bytes, which the GPUs wait on (they are on the critical path between layers)."""
    if gpus <= 1 or not arch.n_layers or not arch.hidden_size:
        return 0.0
    payload = 2.0 * arch.n_layers * tokens * arch.hidden_size * 2
    return allreduce_seconds(payload, gpus, gpu, bridged)


def expert_parallel_seconds(
    arch: ModelArch, tokens: float, gpus: int, gpu: GPU, bridged: bool = False
) -> float:
    """Data-parallel attention's communication of a forward pass over ``tokens`` tokens (all
    the replica's): no all-reduce after attention (each GPU runs its own sequences'), and at
    each MoE layer every GPU's tokens reach the experts and come back. vLLM's default
    ``allgather_reducescatter`` backend ("Expert Parallel Deployment") all-gathers the
    tokens' 16-bit hidden states to every GPU and reduce-scatters the experts' outputs: a
    ring all-gather and a ring reduce-scatter, together a ring all-reduce's traffic, once a
    MoE layer (half of tensor parallelism's two a layer; DeepEP's all-to-all sends less)."""
    if gpus <= 1 or not arch.n_moe_layers or not arch.hidden_size:
        return 0.0
    payload = float(arch.n_moe_layers) * tokens * arch.hidden_size * 2
    return allreduce_seconds(payload, gpus, gpu, bridged)


def forward_comm_seconds(
    arch: ModelArch,
    tokens: float,
    gpus: int,
    gpu: GPU,
    bridged: bool = False,
    attention_dp: bool = False,
) -> float:
    """A forward pass's communication on ``gpus`` GPUs of a replica: the tensor-parallel
    all-reduces (:func:`tensor_parallel_seconds`), or data-parallel attention's MoE exchange
    (:func:`expert_parallel_seconds`)."""
    if attention_dp:
        return expert_parallel_seconds(arch, tokens, gpus, gpu, bridged)
    return tensor_parallel_seconds(arch, tokens, gpus, gpu, bridged)


def ring_seconds(nbytes: float, ranks: int, gb_per_s: float) -> float:
    """A ring all-reduce (or reduce-scatter + all-gather) of ``nbytes`` over ``ranks`` at
    ``gb_per_s`` a link: each sends and receives ``2·(n−1)/n`` of them (Patarasuk & Yuan,
    2009)."""
    if ranks <= 1 or gb_per_s <= 0:
        return 0.0
    return 2 * (ranks - 1) / ranks * nbytes / (gb_per_s * 1e9)


def allreduce_seconds(gradient_bytes: float, gpus: int, gpu: GPU, bridged: bool = False) -> float:
    """:func:`ring_seconds` over the slowest link inside a node's cluster."""
    return ring_seconds(gradient_bytes, gpus, link_gb_per_s(gpu, gpus, bridged))
