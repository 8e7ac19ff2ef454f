#!/usr/bin/env python3
"""What is alive at the peak of a VAE decode: the allocations PyTorch's caching allocator
holds at the moment ``torch.cuda.max_memory_allocated`` is reached, each with the diffusers
line that made it (``torch.cuda.memory._record_memory_history``).

Explains ``validation/measured_diffusion.csv``'s decode peaks, which whichgpu's
``image_memory`` reads low. Usage: ``python validation/trace_vae_peak.py`` on a CUDA machine
with diffusers (prints a table; seconds on an H200).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_diffusion import DTYPES, build, config

CASES = [
    ("sdxl", 1024, 1, "32-true"),
    ("sd-1.5", 512, 1, "16-true"),
    ("flux.1-dev", 1024, 1, "bf16-true"),
]


def where(frames: list[dict]) -> str:  # type: ignore[type-arg]
    """The innermost diffusers or torch.nn.functional frame that made an allocation."""
    for f in frames:
        name = f.get("filename", "")
        if "diffusers" in name or "functional" in name:
            return f"{name.rsplit('/', 2)[-2]}/{name.rsplit('/', 1)[-1]}:{f['line']} {f['name']}"
    return frames[0].get("name", "?") if frames else "?"


def trace(pipeline: str, px: int, batch: int, precision: str) -> None:
    dtype = DTYPES[precision]
    cfg = config(pipeline, "vae")
    vae = build(cfg, dtype)
    channels = cfg.get("latent_channels", 4)
    z = torch.randn(batch, channels, px // 8, px // 8, device="cuda", dtype=dtype)
    with torch.inference_mode():
        vae.decode(z, return_dict=False)  # warm-up: cuDNN's choices made
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        torch.cuda.memory._record_memory_history(max_entries=200_000)
        vae.decode(z, return_dict=False)
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
    peak = torch.cuda.max_memory_allocated()
    alive: dict[int, tuple[int, str]] = {}
    now = best = 0
    at_best: dict[int, tuple[int, str]] = {}
    for event in snap["device_traces"][torch.cuda.current_device()]:
        action, addr, size = event["action"], event["addr"], event["size"]
        if action == "alloc":
            alive[addr] = (size, where(event.get("frames", [])))
            now += size
            if now > best:
                best, at_best = now, dict(alive)
        elif action in ("free_requested",) and addr in alive:
            now -= alive.pop(addr)[0]
    print(
        f"== {pipeline} decode {px}px batch {batch} {precision}: peak {peak / 2**30:.3f} GiB, "
        f"before the call {base / 2**30:.3f} GiB, traced peak above it {best / 2**30:.3f} GiB"
    )
    by: dict[str, int] = {}
    for size, site in at_best.values():
        by[site] = by.get(site, 0) + size
    for site, size in sorted(by.items(), key=lambda kv: -kv[1])[:14]:
        print(f"  {size / 2**30:8.3f} GiB  {site}")
    del vae, z
    torch.cuda.empty_cache()


if __name__ == "__main__":
    for case in CASES:
        trace(*case)
