"""vLLM's question: with ``--gpu-memory-utilization U`` on a GPU, how many sequences of a
given length fit in the KV cache at once?

vLLM reserves ``U × total memory`` for itself; from it, it subtracts the weights, the peak
activations of a profiling forward pass over ``max_num_batched_tokens`` tokens, and non-torch
memory (CUDA context); the rest becomes KV-cache blocks of 16 tokens (Kwon et al., 2023,
§4; vLLM ``Worker.determine_num_available_blocks``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from whichgpu.catalog.records import GPU
from whichgpu.estimate.assumptions import PAGED_BLOCK_TOKENS
from whichgpu.estimate.kv_cache import kv_cache_bytes
from whichgpu.estimate.kv_pool import outside_kv_bytes
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch
from whichgpu.units import BYTES_PER_GIB


@dataclass(frozen=True)
class ServingCapacity:
    gpu: GPU
    utilization: float
    kv_budget_gib: float
    tokens_per_block: int
    blocks: int
    sequence_tokens: int
    max_concurrent_sequences: int


def serving_capacity(arch: ModelArch, job: Job, gpu: GPU, utilization: float) -> ServingCapacity:
    from whichgpu.estimate.parallel import usable_bytes

    total = usable_bytes(gpu) * job.tp
    used = outside_kv_bytes(arch, job, job.tp, nccl=job.tp > 1)
    budget = max(0.0, utilization * total - used)
    # a block on every GPU that holds a copy of it (kv_cache_bytes is a GPU's share)
    one_block = kv_cache_bytes(arch, replace(job, batch=1), tokens=PAGED_BLOCK_TOKENS)
    one_block *= max(job.tp, 1)
    blocks = int(budget // one_block) if one_block else 0
    per_sequence = math.ceil(job.tokens / PAGED_BLOCK_TOKENS)
    return ServingCapacity(
        gpu=gpu,
        utilization=utilization,
        kv_budget_gib=budget / BYTES_PER_GIB,
        tokens_per_block=PAGED_BLOCK_TOKENS,
        blocks=blocks,
        sequence_tokens=job.tokens,
        max_concurrent_sequences=blocks // per_sequence if per_sequence else 0,
    )
