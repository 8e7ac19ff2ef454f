"""The batch a published TensorRT-LLM maximum-throughput run ran at when its command gave
none: ``trtllm-bench`` then sets ``max_batch_size`` from a heuristic of its own, and the
engine batches no more sequences than that, whatever its KV cache would hold.

NVIDIA/TensorRT-LLM ``tensorrt_llm/bench/build/tuning.py`` (``calc_engine_setting`` and
``finetune_setting``, v0.15 to v1.2; ``bench/benchmark/utils/general.py`` ``get_settings``
calls it for the PyTorch flow): the KV cache a token takes is counted as multi-head
attention's, ``2 · layers · max(tp, num_key_value_heads) · head_size · bytes``, with
``head_size`` the config's ``head_dim`` or ``hidden_size / num_attention_heads``; the engine
as the checkpoint's safetensors element count times its format's bytes; the requests that
fit ``fraction`` of what the GPUs' total memory leaves, capped at 4,096, then rounded *up*
to a multiple of 32 (at least 64), 128 from 256 and 256 from 1,024. Two quirks follow from
the checkpoint as it is stored, and both were fixed only after the published overviews
were measured (pull requests #13498, 2026-04, and #16707, 2026-07): an NVFP4 checkpoint's
packed weights count two values an element and were charged half a byte each, so its engine
reads half its bytes (the pull request measured 183.70 GB against 386.54 on DeepSeek-V3.2's
NVFP4 checkpoint); and MLA's one compressed latent a token
(DeepSeek-V3) was counted as 128 heads of ``hidden / heads``, 25 times its size. Under
attention data parallelism the figure, computed for the whole group, limits each rank
(ai-dynamo/dynamo#11982 traced the PyTorch executor: ``max_batch_size`` is a rank's)."""

from __future__ import annotations

import math

from whichgpu.catalog.records import GPU
from whichgpu.estimate.memory import linear_params
from whichgpu.estimate.parallel import usable_bytes
from whichgpu.job import QUANT_BITS, Job
from whichgpu.models.arch import ModelArch

#: ``BYTES_PER_ELEM`` in tuning.py: the formats its heuristic knows; any other checkpoint
#: (INT4 AWQ, INT8) runs at the LLM API's default ``max_batch_size``
TUNED_BYTES = {"fp8": 1.0, "nvfp4": 0.5, None: 2.0}
#: ``TorchLlmArgs.max_batch_size`` (and ``BuildConfig``'s): what an untuned format gets
DEFAULT_MAX_BATCH = 2048
#: ``finetune_setting``: "Cap total batch size to avoid decoder buffer size becoming too large"
REQUEST_CAP = 4096
#: ``trtllm-bench throughput --kv_cache_free_gpu_mem_fraction`` default, passed to the heuristic
BENCH_KV_FRACTION = 0.90


def checkpoint_elements(arch: ModelArch, job: Job) -> float:
    """The elements a checkpoint's safetensors header counts (``parameter_count``, what
    ``ModelConfig.get_param_count`` sums over dtypes): a 16-bit or FP8 tensor one a weight; a
    4-bit format's bytes (two packed values a ``U8`` element, plus its ``F8`` scales)."""
    total = float(arch.total_params)
    if not job.quantised or job.quant is None:
        return total
    quantised = linear_params(arch, set(job.quant_roles))
    return quantised * min(QUANT_BITS[job.quant] / 8, 1.0) + (total - quantised)


def bench_requests(arch: ModelArch, job: Job, gpu: GPU, tp: int, fraction: float) -> float:
    """``kv_cache_max_requests`` in ``calc_engine_setting``: the requests of ``prompt +
    generate`` tokens its KV estimate fits in ``fraction`` of the ``tp`` GPUs' memory left
    after the engine."""
    quant = job.quant if job.quantised else None
    mla = arch.attention == "mla"
    heads = arch.n_heads if mla else arch.n_kv_heads
    head_size = arch.hidden_size // max(arch.n_heads, 1) if mla else arch.head_dim
    kv_bytes = 1.0 if job.kv_dtype == "fp8" else 2.0
    per_token = 2 * arch.n_layers * max(tp, heads) * head_size * kv_bytes
    engine = checkpoint_elements(arch, job) * TUNED_BYTES.get(quant, 2.0)
    left = usable_bytes(gpu) * tp - engine
    return left * fraction / (per_token * (job.prompt + job.generate))


def bench_max_batch(
    arch: ModelArch, job: Job, gpu: GPU, tp: int, fraction: float = BENCH_KV_FRACTION
) -> int:
    """``max_batch_size`` as ``trtllm-bench`` sets it for ``job``'s lengths on ``tp`` GPUs
    (``finetune_setting`` with optimistic tuning, one pipeline stage); 0 where the engine
    does not fit."""
    quant = job.quant if job.quantised else None
    if quant not in TUNED_BYTES:
        return DEFAULT_MAX_BATCH
    requests = bench_requests(arch, job, gpu, tp, fraction)
    if requests < 1:
        return 0
    raw = min(requests, REQUEST_CAP)
    if raw < 256:
        return max(64, 32 * math.ceil(raw / 32))
    if raw < 1024:
        return 128 * math.ceil(raw / 128)
    return 256 * math.ceil(raw / 256)
