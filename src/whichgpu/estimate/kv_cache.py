"""A decoder's KV cache: its bytes a GPU (Kwon et al., 2023, vLLM §2: keys and values of
every layer and position; MLA's compressed latent, DeepSeek-V2 §2.1.2) and the copies a
tensor-parallel replica holds and reads of it (:func:`kv_copies`)."""

from __future__ import annotations

import math

from whichgpu.estimate.assumptions import PAGED_BLOCK_TOKENS
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch


def kv_cache_bytes(
    arch: ModelArch, job: Job, tokens: int | None = None, paged: bool = False
) -> float:
    """``2 · layers · kv_heads · head_dim · tokens · batch · bytes`` (MLA: its latent; a
    sliding-window layer keeps at most its window: :meth:`ModelArch.layer_positions`)."""
    if arch.kind != "decoder" or job.training:
        return 0.0
    tokens = job.tokens if tokens is None else tokens
    if paged:
        tokens = math.ceil(tokens / PAGED_BLOCK_TOKENS) * PAGED_BLOCK_TOKENS
    per_elem = 1.0 if job.kv_dtype == "fp8" else (4.0 if job.precision == "32-true" else 2.0)
    dim = arch.kv_dim * kv_copies(arch, job.tp, job.attention_dp) / max(job.tp, 1)  # a GPU's
    return arch.layer_positions(tokens) * dim * job.batch * per_elem


def kv_copies(arch: ModelArch, tp: int, attention_dp: bool = False) -> float:
    """How many copies of each token's KV cache ``tp`` tensor-parallel GPUs hold and read:
    Megatron-style attention splits the KV heads over the GPUs, so a model with fewer KV
    heads than GPUs keeps each head on ``tp / kv_heads`` of them (vLLM and TensorRT-LLM
    replicate a KV head where ``tp > num_key_value_heads``: ``ceil(kv_heads / tp)`` heads a
    GPU); MLA's one compressed latent is every head's, so each GPU holds all of it
    (DeepSeek-V2, arXiv:2405.04434, §2.1.2; Modular MAX's
    ``TensorParallelLatentAttentionWithRope``: "using tensor parallelism for MLA will cause
    the KV-cache to be duplicated across all devices", which is what data-parallel
    attention avoids: Ray Serve's "Data parallel attention" page). 1 on one GPU, and under
    data-parallel attention (``attention_dp``), where each GPU holds its own sequences'."""
    if tp <= 1 or arch.kind != "decoder" or attention_dp:
        return 1.0
    if arch.attention == "mla":
        return float(tp)
    heads = max(arch.n_kv_heads, 1)
    return tp * math.ceil(heads / tp) / heads
