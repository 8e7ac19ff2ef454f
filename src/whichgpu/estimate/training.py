"""Time of one optimizer step of a training job spread over ``tp × pp × dp`` GPUs.

The compute of a micro-batch is the calibrated single-GPU rate
(:mod:`whichgpu.estimate.throughput`); this module adds what spreading it costs, term by term:

* **Tensor parallelism** (Shoeybi et al., 2019, §3; Korthikanti et al., 2022, §4.2.2): each
  layer all-reduces its ``b·s·h`` 16-bit activations twice in the forward pass and twice in
  the backward (sequence parallelism turns each into a reduce-scatter and an all-gather of the
  same volume), and twice more when the layer is recomputed. They sit between the layer's
  GEMMs: not overlapped, unless the job overlaps them (``tp_overlap``: Transformer Engine's
  userbuffers split each GEMM into chunks and move one chunk's activations while the next
  computes: Wang et al., 2023, "Overlap communication with dependent computation via
  decomposition in large deep learning models", ASPLOS; NeMo's performance recipes turn it
  on), when a stage waits only on what its compute does not cover.
* **Pipeline parallelism** (Narayanan et al., 2021, §2.2.1, eq. 1): the 1F1B schedule over
  ``m`` micro-batches takes ``(m + p − 1)`` stage times: a bubble of ``(p − 1)/m``. Stages
  pass ``b·s·h`` 16-bit activations forward and as many gradients back.
* **Data parallelism**: gradients are all-reduced once a step, after the last micro-batch
  (gradient accumulation runs the others without synchronising: DDP's ``no_sync``, Megatron's
  ``overlap_grad_reduce``), in buckets that overlap that micro-batch's backward pass (Li et
  al., 2020, "PyTorch Distributed", §3.2.3). With a distributed optimizer it is a
  reduce-scatter of the gradients and an all-gather of the weights: the same bytes.
* **ZeRO-3 / FSDP** (Rajbhandari et al., 2020, §7.2.2): every micro-batch gathers the weights
  for its forward and again for its backward and reduce-scatters its gradients, prefetched
  under the compute: a micro-batch takes the longer of the two.
* **The optimizer update**: a pass over the trainable parameters this GPU updates, bound
  by its memory bandwidth (Ren et al., 2021, ZeRO-Offload §3: the update is O(M) work on
  O(M) data), moving what the optimizer's kernels read and write
  (:data:`OPTIMIZER_TRAFFIC`). Negligible for a pretraining step of millions of tokens or
  for LoRA's adapters; for a full fine-tune of a few thousand tokens a step it is a share
  of the step.
* **Offloading** (Ren et al., 2021, ZeRO-Offload §4): 16-bit gradients go to the host and the
  updated 16-bit weights come back over PCIe once a step, and the host's CPU runs the
  optimizer step in between, bound by its DRAM bandwidth (:func:`host_optimizer_seconds`);
  a paged optimizer's states that do not fit page in and out once a step; offloaded
  activations are copied out and back under the compute.

Links are :mod:`whichgpu.estimate.parallel`'s: NVLink inside its domain, PCIe (through host
memory on cards without peer-to-peer), and the network between nodes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import msgspec

from whichgpu.catalog.records import GPU
from whichgpu.estimate.activations import recomputed_share
from whichgpu.estimate.memory import (
    MemoryEstimate,
    gradient_bytes_per_param,
    gradients_bytes,
    master_weights_bytes_needed,
    optimizer_bytes,
    trainable_parameters,
    weights_bytes,
)
from whichgpu.estimate.parallel import (
    collective_gb_per_s,
    host_dram_gb_per_s,
    host_link_gb_per_s,
    ring_seconds,
    usable_bytes,
)
from whichgpu.estimate.pipeline import (
    output_layer_share,
    stage_compute_share,
    stage_share,
    virtual_stages,
)
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch


class Step(msgspec.Struct, frozen=True):
    """One optimizer step: its seconds and the share of each term in them (``optimizer_s``:
    the update on the GPU, or on the host when the optimizer is offloaded)."""

    seconds: float
    compute_s: float
    bubble_s: float
    tensor_parallel_s: float
    pipeline_p2p_s: float
    data_parallel_s: float
    offload_s: float
    optimizer_s: float = 0.0
    #: The ring attention's key and value passes attention did not cover (context
    #: parallelism)
    context_parallel_s: float = 0.0

    def scaled(self, factor: float) -> Step:
        """Every term of the step times ``factor`` (a framework's fitted speed factor: its
        rate and its step's seconds stay one figure), the shares unchanged."""
        return Step(
            self.seconds * factor,
            self.compute_s * factor,
            self.bubble_s * factor,
            self.tensor_parallel_s * factor,
            self.pipeline_p2p_s * factor,
            self.data_parallel_s * factor,
            self.offload_s * factor,
            self.optimizer_s * factor,
            self.context_parallel_s * factor,
        )

    @property
    def bound(self) -> str:
        comm = (
            self.tensor_parallel_s
            + self.data_parallel_s
            + self.pipeline_p2p_s
            + self.context_parallel_s
        )
        return "interconnect" if comm + self.offload_s > self.compute_s else "compute"


def activation_bytes(arch: ModelArch, job: Job) -> float:
    """One micro-batch's hidden states in 16 bits: what a tensor-parallel all-reduce or a
    pipeline stage boundary moves (``b·s·h·2``)."""
    return float(job.batch) * (job.seq // job.cp) * arch.hidden_size * 2


def context_parallel_bytes(arch: ModelArch, job: Job) -> float:
    """What one GPU's ring attention passes on at each hop of one layer's forward: its chunk
    of the sequence's keys and values in 16 bits, its tensor-parallel share of the KV heads
    (``b · s/cp · kv_dim / tp · 2``; Megatron-LM's context parallelism sends the chunk
    round the ``cp`` ranks, Liu et al., 2023, "Ring Attention", §3)."""
    heads = max(arch.kv_dim / job.tp, 2 * arch.head_dim) if arch.attention != "mla" else arch.kv_dim
    return float(job.batch) * (job.seq // job.cp) * heads * 2


class _Shape(NamedTuple):
    """What a step of one job moves and on how many layers, whatever GPU runs it."""

    share: float  # the heaviest pipeline stage's share of the layers
    compute_share: float  # its share of the step's compute, the output layer's included
    layers: float
    hidden_bytes: float  # one micro-batch's activations (:func:`activation_bytes`)
    ring_bytes: float  # a ring-attention hop (:func:`context_parallel_bytes`)
    attention_share: float  # attention's part of a step's FLOPs
    virtual_stages: int
    stage_weights_bytes: float  # one GPU's part of the weights and of the gradients
    stage_gradients_bytes: float
    optimizer_bytes: float  # :func:`optimizer_update_bytes`


@lru_cache(maxsize=4096)
def _shape(arch: ModelArch, job: Job) -> _Shape:
    """:class:`_Shape` of ``job``, once per job: the layout search estimates each on every
    GPU model of a count."""
    from whichgpu.estimate.perf import train_flops_per_token

    share = stage_share(arch, job.pp)
    flops = train_flops_per_token(arch, job, job.seq, executed=True)
    compute_share = stage_compute_share(arch, job.pp, output_layer_share(arch, flops))
    attention = flops - train_flops_per_token(arch, job, 0, executed=True)
    return _Shape(
        share,
        compute_share,
        max(arch.n_layers, 1) * share,
        activation_bytes(arch, job),
        context_parallel_bytes(arch, job) if job.cp > 1 else 0.0,
        attention / flops if flops else 0.0,
        virtual_stages(arch, job),
        weights_bytes(arch, job) * share / job.tp,
        gradients_bytes(arch, job) * share / job.tp,
        optimizer_update_bytes(arch, job),
    )


def step_time(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    microbatch_s: float,
    memory: MemoryEstimate | None = None,
) -> Step:
    """One optimizer step of ``job`` (its ``gpus`` split ``tp × pp × dp``, ``grad_accum``
    micro-batches of ``batch`` sequences per data-parallel rank). ``microbatch_s``: one
    GPU's compute time for a micro-batch through the whole model (the calibrated rate)."""
    tp, pp, cp, m = job.tp, job.pp, job.cp, max(job.grad_accum, 1)
    dp = job.shards  # the gradients are reduced over the context-parallel ranks too
    shape = _shape(arch, job)
    # the heaviest stage's layers set the pace; context parallelism splits each sequence
    stage_s = microbatch_s * shape.compute_share / (tp * cp)
    hidden = shape.hidden_bytes
    network, per_node, bridged = job.network, job.gpus_per_node, job.nvlink_bridge
    sold = job.network_gbit
    # tensor parallelism: 4 collectives a layer (6 with recomputation), inside the TP group
    recomputed = recomputed_share(arch, job)
    passes = 4 + 2 * recomputed
    tp_s = 0.0
    if tp > 1:
        link = collective_gb_per_s(gpu, tp, network, per_node, bridged, True, sold)
        tp_s = passes * shape.layers * ring_seconds(hidden, tp, link)
    # pipeline: activations forward and gradients back across each stage boundary
    p2p_s = 0.0
    if pp > 1:
        span = tp * 2  # a boundary joins two stages of tp GPUs
        boundary = collective_gb_per_s(gpu, span, network, per_node, bridged, network_gbit=sold)
        p2p_s = 2 * hidden / tp / (boundary * 1e9)
    if job.tp_overlap and tp > 1:
        tp_s = max(0.0, tp_s - stage_s)  # decomposed GEMMs carry the collectives
    # context parallelism: each layer's keys and values go round the ring cp − 1 hops in
    # the forward, their gradients with them in the backward (and again where the forward
    # is recomputed), each hop under the attention of the chunk at hand (Megatron-LM's
    # context parallelism overlaps the P2P with it): what attention does not cover waits
    cp_s = 0.0
    if cp > 1:
        link = collective_gb_per_s(gpu, tp * cp, network, per_node, bridged, network_gbit=sold)
        rounds = 3 + recomputed
        ring = rounds * (cp - 1) * shape.layers * shape.ring_bytes / (link * 1e9)
        cp_s = max(0.0, ring - stage_s * shape.attention_share)
    # interleaved 1F1B (Narayanan et al., 2021, §2.2.2): v chunks a GPU divide the bubble
    # by v, and each micro-batch crosses v times the stage boundaries (v = 1, plain 1F1B's
    # m + p − 1 stage times, where the micro-batches do not allow it: virtual_stages)
    v = shape.virtual_stages
    p2p_s *= v
    stage_total = stage_s + tp_s + p2p_s + cp_s
    compute_s = m * stage_s
    bubble_s = (pp - 1) * stage_total / v
    pipeline_s = m * stage_total + bubble_s
    # data parallelism across the replicas (ranks tp·pp apart: a ring over all the GPUs)
    dp_s = 0.0
    if dp > 1:
        # the gradients' all-reduce; ZeRO-3 gathers the weights and scatters the gradients
        dp_link = collective_gb_per_s(gpu, job.gpus, network, per_node, bridged,
                                      job.zero < 3, sold)  # fmt: skip
        if job.zero >= 3:
            # every micro-batch gathers the weights twice and reduce-scatters its gradients,
            # prefetched under its compute: what the compute does not hide is exposed
            volume = (2 * shape.stage_weights_bytes + shape.stage_gradients_bytes) / 2
            dp_s = m * max(0.0, ring_seconds(volume, dp, dp_link) - stage_total)
        else:
            comm = ring_seconds(shape.stage_gradients_bytes, dp, dp_link)
            dp_s = max(0.0, comm - stage_s * 2 / 3)  # the last micro-batch's backward hides some
    pipeline_s += dp_s
    offload_s = 0.0
    if job.offload != "none" or memory is not None:
        offload_s = _offload_seconds(arch, job, gpu, memory, compute_s)
    optimizer_s = shape.optimizer_bytes / _optimizer_bandwidth(gpu)
    if job.offload != "none":
        optimizer_s += host_optimizer_seconds(arch, job, gpu)
    seconds = pipeline_s + offload_s + optimizer_s
    return Step(seconds, compute_s, bubble_s, m * tp_s, m * p2p_s, dp_s, offload_s, optimizer_s,
                m * cp_s)  # fmt: skip


#: What one optimizer step reads and writes per trainable parameter, as multiples of
#: (its weight, its gradient, all its optimizer state), per implementation:
#:
#: * ``adamw``: PyTorch's default AdamW on CUDA, ``foreach=True``
#:   (``torch/optim/adamw.py``, ``_multi_tensor_adamw``, torch 2.4): eight list kernels,
#:   the weight decay (w r/w), ``lerp_`` of the first moment (m r/w, g r), ``mul_`` and
#:   ``addcmul_`` of the second (v r/w twice, g r), ``sqrt`` of it into a temporary (v r,
#:   t w), ``div_`` and ``add_`` of the temporary (t r/w twice) and ``addcdiv_`` into the
#:   weight (w r/w, m r, t r): 4 w + 2 g + 14 of one moment, 7 of both;
#: * ``adamw-fused`` (``fused=True``), bitsandbytes' 8-bit and paged 8-bit AdamW (one
#:   kernel each): w, g, m and v read, w, m and v written;
#: * ``sgd`` with momentum, ``foreach``: the decay into the gradient (g r/w, w r), the
#:   momentum ``mul_`` and ``add_`` (buffer r/w twice, g r), the step (w r/w, buffer r);
#: * ``adafactor``: :func:`_adafactor_bytes` (its statistics are small; its temporaries
#:   are not).
#:
#: DeepSpeed's and Megatron's fused Adam (engines other than ``torch``) update the fp32
#: master copy in one kernel and write the 16-bit weights from it. On the host (offload)
#: PyTorch's AdamW runs its single-tensor loop, the same kernels per parameter.
OPTIMIZER_TRAFFIC: dict[str, tuple[float, float, float]] = {
    "adamw": (4.0, 2.0, 7.0),
    "adamw-fused": (2.0, 1.0, 2.0),
    "adamw-8bit": (2.0, 1.0, 2.0),
    "paged-adamw-8bit": (2.0, 1.0, 2.0),
    "sgd": (3.0, 3.0, 5.0),
}

#: The share of its peak memory bandwidth a streaming kernel reaches: about 88 % on an A100
#: 80GB measured with Nsight Compute, "around 90 %" the best of any kernel in NVIDIA's GTC
#: talk that thread cites (NVIDIA developer forums, "Trouble to reach peak bandwidth of
#: A100", 2025); the optimizer's list kernels over many tensors reach a little less.
OPTIMIZER_BANDWIDTH_FRACTION = 0.85


def optimizer_seconds(arch: ModelArch, job: Job, gpu: GPU) -> float:
    """The optimizer update of one step on one GPU: :func:`optimizer_update_bytes` at
    :data:`OPTIMIZER_BANDWIDTH_FRACTION` of its memory bandwidth."""
    return optimizer_update_bytes(arch, job) / _optimizer_bandwidth(gpu)


def _optimizer_bandwidth(gpu: GPU) -> float:
    """Bytes a second an optimizer update streams on ``gpu``."""
    return gpu.memory_bandwidth_gb_per_s * 1e9 * OPTIMIZER_BANDWIDTH_FRACTION


def optimizer_update_bytes(arch: ModelArch, job: Job) -> float:
    """What one GPU's optimizer update reads and writes: :func:`_update_bytes_per_param`
    for the parameters it updates (its tensor-parallel and pipeline share, and with ZeRO /
    a distributed optimizer its data-parallel partition); the same on every GPU model, so
    asked once per job by the step's shape (:func:`_shape`, memoised; :func:`optimizer_seconds`
    states the same time for one GPU). 0 on the GPU when the optimizer runs on the host
    (ZeRO-Offload, FSDP's CPU offload): that is :func:`host_optimizer_seconds`."""
    trainable = trainable_parameters(arch, job)
    if not trainable or job.offload != "none":
        return 0.0
    weight, gradient = _trained_weight_bytes(job), gradient_bytes_per_param(job)
    per_param = _update_bytes_per_param(arch, job, weight, gradient)
    return trainable / _optimizer_shards(arch, job) * per_param


def _trained_weight_bytes(job: Job) -> float:
    """Bytes of a weight the optimizer updates: LoRA's adapters (fp32 in peft), a full
    fine-tune's weights in their stored dtype."""
    return gradient_bytes_per_param(job)


def _update_bytes_per_param(arch: ModelArch, job: Job, weight: float, gradient: float) -> float:
    """Bytes an optimizer step moves per trainable parameter of ``weight`` and ``gradient``
    bytes: :data:`OPTIMIZER_TRAFFIC` of its implementation."""
    states = optimizer_bytes(arch, job) / trainable_parameters(arch, job)
    if job.optimizer == "adafactor":
        return _adafactor_bytes(weight, gradient) + 2 * states
    if master_weights_bytes_needed(job) and weight < 4.0:
        # the engine's fused kernel updates the fp32 master copy and writes the 16-bit one
        w, g, s = OPTIMIZER_TRAFFIC["adamw-fused"]
        return w * 4.0 + weight + g * gradient + s * states
    w, g, s = OPTIMIZER_TRAFFIC[job.optimizer]
    return w * weight + g * gradient + s * states


#: The share of the host's peak DRAM bandwidth an offloaded optimizer step streams at:
#: DeepSpeed's CPU Adam (one AVX-vectorised pass, 30 bytes a parameter) updated 1B
#: parameters in 0.22 s and 10B in 2.57 s on a DGX-2's two Xeon Platinum 8168 (Ren et al.,
#: 2021, "ZeRO-Offload", Table 4): 136 and 117 GB/s of its 256 (:data:`~whichgpu.estimate.
#: parallel.SERVER_DRAM_GB_PER_S`). PyTorch's own CPU Adam of 2020 took 1.39 s for 1B there
#: (the same table; "DeepSpeedCPUAdam is 5X-7X faster than the standard PyTorch
#: implementation", DeepSpeed's ZeRO-Offload tutorial): its several passes are counted by
#: :data:`OPTIMIZER_TRAFFIC`, which puts it at 0.62 s, half the time measured. (Table 4 is
#: an image in the paper; its figures are read from a transcription and agree with the
#: tutorial's ratio: 1.39 / 0.22 = 6.3.)
HOST_OPTIMIZER_BANDWIDTH_FRACTION = 0.5


@lru_cache(maxsize=1024)
def _host_update_bytes(arch: ModelArch, job: Job) -> float:
    """What the host's optimizer steps read and write for one GPU's partition: an engine's
    fp32 master weights (and the 16-bit copy the GPU receives) with the fp32 gradients
    ZeRO-Offload keeps on the host; without one, the parameters and gradients in their own
    dtypes (LoRA's adapters in fp32), as FSDP's CPU offload keeps them."""
    trainable = trainable_parameters(arch, job)
    if not trainable:
        return 0.0
    if master_weights_bytes_needed(job):
        weight, gradient = 2.0, 4.0
    else:
        weight, gradient = _trained_weight_bytes(job), gradient_bytes_per_param(job)
    per_param = _update_bytes_per_param(arch, job, weight, gradient)
    return trainable / _optimizer_shards(arch, job) * per_param


def host_optimizer_seconds(arch: ModelArch, job: Job, gpu: GPU) -> float:
    """The optimizer step run on the host (``offload``: ZeRO-Offload's CPU Adam, Ren et al.,
    2021; FSDP's ``CPUOffload``): the partitions of a node's GPUs updated at once through
    the host's DRAM (:func:`~whichgpu.estimate.parallel.host_dram_gb_per_s` at
    :data:`HOST_OPTIMIZER_BANDWIDTH_FRACTION`); the step waits on it (no delayed update)."""
    in_node = max(1, min(job.gpus, job.gpus_per_node))
    dram = host_dram_gb_per_s(gpu, in_node, job.gpus_per_node)
    return (
        _host_update_bytes(arch, job) * in_node / (dram * 1e9 * HOST_OPTIMIZER_BANDWIDTH_FRACTION)
    )


def _optimizer_shards(arch: ModelArch, job: Job) -> float:
    """Into how many parts the optimizer's parameters are split, one a GPU: the tensor-parallel
    degree over the heaviest pipeline stage's share, times the data-parallel degree where
    ZeRO or a distributed optimizer partitions them."""
    return job.tp / stage_share(arch, job.pp) * (job.shards if job.zero >= 1 else 1)


def _adafactor_bytes(weight: float, gradient: float) -> float:
    """Bytes per parameter of a step of the Hugging Face Adafactor (``transformers/
    optimization.py``, ``Adafactor.step``: factored second moment, no first moment, its
    defaults), element by element: the update ``grad**2 + eps`` written (and the gradient
    read), its row and column means read, the update rebuilt from the factored moment and
    ``mul_`` by the gradient (read, read, written), its RMS read and ``div_`` (read, written),
    ``mul_(lr)`` (read, written), and ``p.add_(-update)`` (weight read and written, update
    read): 12 update-sized fp32 accesses, two of the gradient and two of the weight. A 16-bit
    weight or gradient is first cast to fp32 copies (read, written) and the weight copied
    back (read, written): 7 more fp32 accesses, the 16-bit ones read once."""
    fp32 = 4.0
    if weight == fp32 and gradient == fp32:
        return 12 * fp32 + 2 * gradient + 2 * weight
    # the casts: gradient read, copy written; weight read, copy written; the update reads
    # the copies; the copy back reads the fp32 weight and writes the 16-bit one
    return 19 * fp32 + gradient + 2 * weight


def _offload_seconds(
    arch: ModelArch, job: Job, gpu: GPU, memory: MemoryEstimate | None, compute_s: float
) -> float:
    """Host traffic a step waits on, over the card's PCIe link."""
    link = host_link_gb_per_s(gpu) * 1e9
    seconds = 0.0
    if job.offload != "none":
        # 16-bit gradients down and the updated 16-bit weights up, once a step, for the
        # parameters this GPU's optimizer partition holds (ZeRO-Offload, Ren et al., 2021, §4)
        seconds += (2 + 2) * trainable_parameters(arch, job) / _optimizer_shards(arch, job) / link
    if job.offload == "all":
        # the weights streamed in for every micro-batch's forward and backward
        weights = weights_bytes(arch, job) * stage_share(arch, job.pp) / job.tp
        seconds += max(0.0, 2 * weights * max(job.grad_accum, 1) / link - compute_s)
    if memory is not None and memory.paged_bytes:
        spill = max(0.0, memory.total_bytes + memory.paged_bytes - usable_bytes(gpu))
        seconds += 2 * min(spill, memory.paged_bytes) / link  # paged out and back in
    if memory is not None and job.activation_offload:
        seconds += max(0.0, 2 * memory.host_bytes / link - compute_s)
    return seconds
