"""Named defaults and factors the estimators assume, each with its reason. Shown to users.

Nothing here is tuned to one case: each value is a documented property of the software
(PyTorch, CUDA, transformers, vLLM) that the estimate describes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Assumption:
    name: str
    value: float
    unit: str
    why: str


#: PyTorch's CUDA caching allocator rounds every block up to 512 bytes
#: (c10/cuda/CUDACachingAllocator.cpp, kMinBlockSize).
ALLOCATION_ROUNDING_BYTES = 512

#: CUDA context, cuBLAS workspace and the kernels PyTorch loads on first use: memory the
#: driver counts in use but torch.cuda.memory_reserved() does not. Measured on an H200
#: (torch 2.11.0, CUDA 13.0, lazy module loading; validation/measured_context.csv): 0.60
#: GiB after the first tensor, 0.68 once a BF16 matmul and SDPA attention have run.
CUDA_CONTEXT_GIB = 0.68
#: What a process in an NCCL group holds once its first collective has run (the
#: communicator's buffers; NCCL creates them lazily, so a tensor-parallel group of one GPU
#: has none): 0.54 GiB more in the same measurement.
NCCL_BUFFERS_GIB = 0.54

#: The caching allocator keeps freed blocks reserved; reserved exceeds allocated by a few
#: percent in steady training (fragmentation). Applied to the tensor total.
ALLOCATOR_RESERVE_FRACTION = 0.05
#: Headroom under which a fit is flagged as tight, and which a setting whichgpu chooses (a
#: micro-batch, recomputation) keeps where it can: allocator fragmentation and the CUDA
#: context vary by a few percent between versions (validation/README.md), and the memory
#: estimate is within 8.5 % of measured runs (docs/memory-accuracy.md)
TIGHT_HEADROOM = 0.05

#: A KV-cache pool under this share of a replica's memory is flagged: the engine's own
#: buffers, which move by GiBs between releases, then decide how many sequences run. NVIDIA
#: measured Llama 3.1 70B in FP8 on one H100 (a pool of about 11 % of its memory) at 410
#: tokens/s with TensorRT-LLM v0.14 and 742 with v0.20 (validation/published_serving.csv,
#: s87 and s146); its 2 × A100 PCIe row at 1000/1000 (14 %) came out 47 % below whichgpu's
#: estimate, while pools of 45 % (70B FP8 on one H200) stay within 20 to 26 %.
TIGHT_KV_SHARE = 0.2
#: How far an engine release's own buffers (its profiling pass, CUDA graphs, workspaces) may
#: sit from the ones whichgpu counts, a GPU, either way: half the spread of that published
#: pair. Where throughput follows the pool, 742 over 410 tokens/s is a pool 1.81 times
#: another; around whichgpu's 8.65 GiB for that job the two are 6.16 and 11.14 GiB, 4.98
#: apart, so 2.5 (one pair: the only same-job, same-GPU comparison across releases the
#: calibration holds). A KV-bound plan's range widens by it (kv_pool.pool_band).
BUFFER_SPREAD_GIB = 2.5

#: vLLM's PagedAttention allocates the KV cache in blocks of 16 tokens (Kwon et al., 2023, §4.1).
PAGED_BLOCK_TOKENS = 16

#: bitsandbytes 8-bit Adam keeps both moments in 8 bits, with one fp32 scale per block of
#: 2,048 values (Dettmers et al., 2022, "8-bit Optimizers via Block-wise Quantization").
ADAM_8BIT_BYTES_PER_PARAM = 2 * (1 + 4 / 2048)

#: ResNet-50's parameter count (torchvision ``ResNet50_Weights.IMAGENET1K_V2``: num_params
#: 25,557,032; the catalog's preset reproduces it): other ResNets' FLOPs scale from it.
RESNET50_PARAMS = 25_557_032

#: CNN inference keeps no activations for a backward pass; freed layer by layer, the live
#: set is a fraction of what training saves. A prior, not a measurement: the memory
#: validation covers transformer inference, not CNN inference (docs/memory-accuracy.md).
CNN_INFERENCE_LIVE_FRACTION = 0.25

#: Price listings older than this many months are flagged (GPU rental prices moved by
#: 30–50 % within a year in 2023–2025: prices.csv's own dated rows).
STALE_PRICE_MONTHS = 12

#: The pick's price range is worth a warning when its high end is this much above its low:
#: a 25 % spread in price moves the cost more than the throughput estimate's median
#: leave-one-out error (10.6 %, docs/perf-accuracy.md) does.
PRICE_RANGE_WARN_RATIO = 1.25

#: The typical (median absolute) error of a throughput estimate from its 10th–90th
#: percentile error band, for a normal spread: the band is ±1.2816 σ wide, the median
#: absolute error 0.6745 σ, so typical = 0.6745 / (2 · 1.2816) × (high − low) of the band.
MEDIAN_ERROR_PER_BAND = 0.6745 / (2 * 1.2816)
#: Options a ranking calls equivalent at most: the closest few, named in the answer.
MAX_TIED = 3

DEFAULTS: tuple[Assumption, ...] = (
    Assumption("cuda_context", CUDA_CONTEXT_GIB, "GiB", "CUDA context and library workspaces"),
    Assumption(
        "allocator_reserve",
        ALLOCATOR_RESERVE_FRACTION,
        "fraction",
        "memory the caching allocator reserves beyond live tensors",
    ),
    Assumption(
        "vram_is_binary",
        1.0,
        "",
        "a GPU's '80 GB' is 80 GiB of DRAM (an A100 80GB reports 81,920 MiB); the usable "
        "part is that less the CUDA context",
    ),
)

#: torchtune's CEWithChunkedOutputLoss splits the output into 8 chunks (its
#: ``num_output_chunks`` default, torchtune/modules/loss/ce_chunked_output_loss.py).
LOSS_CHUNKS = 8

#: Layers whose weights (parameter offload) or saved activations (activation offloading)
#: are on the GPU at once: the one computing and the one being fetched or stored (DeepSpeed
#: ZeRO-Infinity and FSDP prefetch one module ahead; torchtune's activation offloading
#: overlaps one layer's copy with the next one's compute).
OFFLOAD_RESIDENT_LAYERS = 2

#: The share of a served model's capacity its demand is planned to use: the rest is headroom
#: for bursts above the mean rate and for the estimate's own error. Knative's autoscaler adds
#: a replica when the requests in flight reach 70 % of what a replica takes
#: (config-autoscaler ``container-concurrency-target-percentage``, default 70); Google's
#: load-balancing autoscaler keeps 80 % (``utilization_target``, default 0.8).
TARGET_UTILIZATION = 0.7
