"""On a CUDA GPU: the memory a process holds outside PyTorch's caching allocator (the CUDA
context, the kernels loaded on first use, cuBLAS's workspace, NCCL's buffers), stage by
stage as a serving engine's process reaches them, and the memory the driver reports in all.

The driver's view is ``torch.cuda.mem_get_info()`` (free and total, cudaMemGetInfo); what
PyTorch holds is ``torch.cuda.memory_reserved()``; the difference is what whichgpu's
``CUDA_CONTEXT_GIB`` stands for (whichgpu.estimate.assumptions). The machine runs nothing
else, so every byte in use is this process's.

    python3 validation/measure_context.py validation/measured_context.csv
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch

GIB = 2**30


def _row(stage: str) -> dict[str, object]:
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    reserved = torch.cuda.memory_reserved()
    used = total - free
    return {
        "stage": stage,
        "total_gib": round(total / GIB, 3),
        "driver_used_gib": round(used / GIB, 3),
        "torch_reserved_gib": round(reserved / GIB, 3),
        "outside_torch_gib": round((used - reserved) / GIB, 3),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "module_loading": os.environ.get("CUDA_MODULE_LOADING", "LAZY (default)"),
    }


def main(out: Path) -> int:
    import csv

    rows = []
    torch.cuda.init()
    x = torch.ones(1, device="cuda")
    rows.append(_row("context: first tensor"))
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    (a @ a).sum().item()
    rows.append(_row("cuBLAS: one bf16 matmul"))
    q = torch.randn(8, 32, 2048, 128, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(8, 8, 2048, 128, device="cuda", dtype=torch.bfloat16)
    torch.nn.functional.scaled_dot_product_attention(q, kv, kv, is_causal=True, enable_gqa=True)
    rows.append(_row("attention: SDPA (flash) with GQA"))
    lin = torch.nn.Linear(4096, 14336, bias=False, device="cuda", dtype=torch.bfloat16)
    torch.nn.functional.silu(lin(a[:256])).sum().item()
    rows.append(_row("MLP: linear + SiLU"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    import torch.distributed as dist

    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    y = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(y)
    rows.append(_row("NCCL: process group + one all-reduce"))
    static = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        lin(static)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(graph):
        lin(static)
    graph.replay()
    rows.append(_row("CUDA graph: one captured linear"))
    dist.destroy_process_group()
    del x
    for row in rows:
        print(row, flush=True)
    with out.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "measured_context.csv")))
