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

#: CUDA context, cuBLAS/cuDNN workspaces and kernels loaded by PyTorch on first use: memory
#: that nvidia-smi shows but torch.cuda.memory_allocated() does not.
CUDA_CONTEXT_GIB = 0.5

#: The caching allocator keeps freed blocks reserved; reserved exceeds allocated by a few
#: percent in steady training (fragmentation). Applied to the tensor total.
ALLOCATOR_RESERVE_FRACTION = 0.05

#: vLLM's PagedAttention allocates the KV cache in blocks of 16 tokens (Kwon et al., 2023, §4.1).
PAGED_BLOCK_TOKENS = 16

#: bitsandbytes 8-bit Adam keeps both moments in 8 bits, with one fp32 scale per block of
#: 2,048 values (Dettmers et al., 2022, "8-bit Optimizers via Block-wise Quantization").
ADAM_8BIT_BYTES_PER_PARAM = 2 * (1 + 4 / 2048)

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
