"""How many sequences an engine's KV-cache pool holds on a replica: the memory the engine
takes, less the weights, the profiled activations and the CUDA context, in whole blocks
(Kwon et al., 2023, vLLM §4; each engine's rule in :mod:`whichgpu.job.engines`)."""

from __future__ import annotations

import math
from functools import lru_cache

from whichgpu.catalog.records import GPU
from whichgpu.estimate.assumptions import BUFFER_SPREAD_GIB, CUDA_CONTEXT_GIB, NCCL_BUFFERS_GIB
from whichgpu.estimate.kv_cache import kv_cache_bytes
from whichgpu.estimate.memory import activations_bytes, replicated_weights_bytes, weights_bytes
from whichgpu.estimate.parallel import usable_bytes
from whichgpu.frozen import evolve
from whichgpu.job import Job
from whichgpu.job.engines import EngineProfile
from whichgpu.models.arch import ModelArch
from whichgpu.units import BYTES_PER_GIB

#: Tokens vLLM profiles its activations on before sizing the KV pool (max_num_batched_tokens)
PROFILE_TOKENS = 8192


def _pool(
    arch: ModelArch, job: Job, gpu: GPU, tp: int, engine: EngineProfile
) -> tuple[float, float, float]:
    """A replica's bytes outside the KV cache (weights, profiled activations, CUDA contexts
    and, on a tensor-parallel group, NCCL's buffers), its KV budget as the engine sizes it,
    and one sequence's KV cache in whole blocks."""
    total = usable_bytes(gpu) * tp
    nccl = tp > 1 and engine.split == "tensor"
    used, one = _replica_bytes(arch, job, tp, engine.block_tokens, nccl)
    if job.quantised and job.quantize_on == "gpu":  # the 16-bit model loads first
        from whichgpu.estimate.memory import weights_bytes

        if weights_bytes(arch, evolve(job, quant=None)) > total:
            return used, -1.0, one  # it never gets to quantising: no sequence held
    if engine.kv_pool == "free":
        budget = engine.memory_fraction * (total - used)
    else:
        budget = engine.memory_fraction * total - used
    return used, budget, one


def outside_kv_bytes(arch: ModelArch, job: Job, tp: int, nccl: bool) -> float:
    """What an engine's replica of ``tp`` GPUs holds besides its KV cache: the weights, the
    activations of the profiling pass over :data:`PROFILE_TOKENS` tokens (vLLM's
    ``max_num_batched_tokens``), and on each GPU the CUDA context and, where the GPUs talk
    through NCCL, its buffers (both measured: validation/measured_context.csv)."""
    profile = evolve(job, batch=1, seq=PROFILE_TOKENS, prompt=PROFILE_TOKENS, generate=0,
                      all_logits=False, tp=tp)  # fmt: skip
    process_gib = CUDA_CONTEXT_GIB + (NCCL_BUFFERS_GIB if nccl else 0.0)
    drafter = 0.0
    if job.speculative is not None:  # its head or MTP module, in 16 bits
        from whichgpu.estimate.speculative import draft_params

        drafter = draft_params(arch, job.speculative) * 2.0
    return (
        drafter
        + weights_bytes(arch, job)
        + replicated_weights_bytes(arch, job, tp)  # data-parallel attention's copies
        + activations_bytes(arch, profile) * tp
        + process_gib * BYTES_PER_GIB * tp
    )


@lru_cache(maxsize=4096)
def _replica_bytes(
    arch: ModelArch, job: Job, tp: int, block_tokens: int, nccl: bool
) -> tuple[float, float]:
    """:func:`_pool`'s bytes outside the KV cache and one sequence's KV cache, the same on
    every GPU (computed once for the candidates of one replica shape)."""
    used = outside_kv_bytes(arch, job, tp, nccl)
    single = evolve(job, batch=1, tp=tp)
    shared = min(job.shared_prefix, job.prompt)  # a shared prefix's blocks, held once
    if shared:
        used += kv_cache_bytes(arch, single, tokens=shared) * tp
    tokens = job.prompt - shared + max(job.generate, 1)
    if block_tokens:
        tokens = math.ceil(tokens / block_tokens) * block_tokens
    one = kv_cache_bytes(arch, single, tokens=tokens) * tp
    return used, one


def kv_sequences(arch: ModelArch, job: Job, gpu: GPU, tp: int, engine: EngineProfile) -> int:
    """Sequences of ``prompt + generate`` tokens whose KV cache fits a replica as the engine
    sizes its pool (``engine.kv_pool``): vLLM takes ``gpu_memory_utilization`` of the memory
    and subtracts the weights, the activations of a profiling pass and the CUDA context
    (``Worker.determine_num_available_blocks``); TensorRT-LLM takes its fraction of what is
    free after them; llama.cpp reserves a whole context a slot. Blocks are whole."""
    _used, budget, one = _pool(arch, job, gpu, tp, engine)
    if budget <= 0 or one <= 0:
        return 0
    return min(sequence_cap(job, gpu, tp, engine), int(budget // one))


def sequence_cap(job: Job, gpu: GPU, tp: int, engine: EngineProfile) -> int:
    """The most sequences the engine batches on a replica of ``tp`` GPUs: its cap, once a
    data-parallel rank where each rank schedules its own (:attr:`EngineProfile.rank_limits`)."""
    ranks = tp if job.attention_dp and engine.rank_limits else 1
    return engine.limits(gpu)[0] * ranks


def kv_pool_share(
    arch: ModelArch, job: Job, gpu: GPU, tp: int, engine: EngineProfile
) -> tuple[float, float]:
    """The KV-cache pool the engine sizes on a replica of ``tp`` GPUs: bytes a GPU, and its
    share of the replica's memory."""
    _used, budget, _one = _pool(arch, job, gpu, tp, engine)
    total = usable_bytes(gpu) * tp
    return max(budget, 0.0) / tp, max(budget, 0.0) / total


def pool_band(
    arch: ModelArch, job: Job, gpu: GPU, tp: int, engine: EngineProfile, sequences: int
) -> tuple[float, float]:
    """How far a served rate may move with the engine's own buffers: where ``sequences``, the
    replica's batch, is the KV pool's (fewer than the engine's cap), a pool
    :data:`~whichgpu.estimate.assumptions.BUFFER_SPREAD_GIB` a GPU smaller or larger holds
    that many fewer or more, and the rate moves at most as the batch does (a step's time
    grows with its batch); else (1, 1). Ratios to the rate."""
    _used, budget, one = _pool(arch, job, gpu, tp, engine)
    held = int(budget // one) if budget > 0 and one > 0 else 0
    if held <= 0 or held >= sequence_cap(job, gpu, tp, engine) or sequences < held:
        return 1.0, 1.0  # no pool, the engine's cap binds, or the run holds fewer
    spread = BUFFER_SPREAD_GIB * BYTES_PER_GIB * tp
    return max(budget - spread, one) / budget, (budget + spread) / budget


def replica_bytes_per_gpu(
    arch: ModelArch, job: Job, gpu: GPU, tp: int, engine: EngineProfile, sequences: float
) -> float:
    """What a replica holds per GPU with ``sequences`` in flight: its share of the weights,
    activations and context, and of those sequences' KV blocks (the engine reserves its whole
    pool up front; this is the part in use)."""
    used, _budget, one = _pool(arch, job, gpu, tp, engine)
    return (used + one * sequences) / tp
