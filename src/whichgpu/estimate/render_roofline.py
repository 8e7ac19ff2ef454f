"""Path-tracing render scores (Blender, OctaneBench, V-Ray) against a roofline: the rate a
GPU's FP32 cores and RT cores allow at η = 1, for the efficiency fit
(:mod:`whichgpu.estimate.efficiency`)."""

from __future__ import annotations

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.estimate.assumptions import CUDA_CONTEXT_GIB

#: Render benchmarks publish a score (a rate in an arbitrary unit): samples per minute
#: summed over Blender's scenes, OctaneBench points (GTX 980 = 102), V-Ray vpaths.
SCORE_METRICS = {"score"}
#: Score per FP32 TFLOPS at η = 1, per render unit: a fixed normalisation (not fitted) that
#: keeps η of a score in (0, 1]; only ratios between GPUs of one harness carry meaning.
RENDER_SCORE_PER_TFLOPS = {"samples/min": 1000.0, "score": 100.0, "vpaths": 100.0}
#: Share of a software path tracer's time spent in BVH traversal and ray/triangle tests, the
#: work RT cores take over (Aila & Laine, "Understanding the efficiency of ray traversal on
#: GPUs", HPG 2009: traversal and intersection dominate; 0.5 is an assumption, not a fit).
RENDER_TRAVERSAL_SHARE = 0.5
#: Traversal speedup of an RT core generation over the same GPU's CUDA cores: Turing
#: whitepaper (2018): 10 Giga Rays/s on RTX 2080 Ti vs ~1.1 in software on GTX 1080 Ti
#: (≈ 10×); Ampere GA102 whitepaper: 2× Turing's ray/triangle intersection rate; Ada
#: whitepaper: 2× Ampere's. The per-generation factors ``rt:<gen>`` fitted on published
#: scores correct these vendor peaks.
RT_TRAVERSAL_SPEEDUP = {1: 10.0, 2: 20.0, 3: 40.0}


def rt_traversal_speedup(gpu: GPU) -> float:
    """How much faster the GPU traverses rays than its CUDA cores would: 1 without RT cores."""
    if not gpu.rt_cores or gpu.rt_core_gen is None:
        return 1.0
    return RT_TRAVERSAL_SPEEDUP.get(gpu.rt_core_gen, max(RT_TRAVERSAL_SPEEDUP.values()))


def render_ideal(bench: Benchmark, gpu: GPU) -> tuple[float, str] | None:
    """Path tracing from first principles: each sample is BVH traversal + ray/triangle tests
    (on RT cores where the GPU has them, else on CUDA cores) plus shading on the FP32 cores.
    Time per sample ∝ ``(1 − τ) + τ / s`` over the FP32 rate, with τ the traversal share of a
    software tracer and ``s`` the RT-core speedup of traversal (1 without RT cores, so such a
    GPU comes out about twice as slow per FP32 TFLOPS — slower, never impossible). The
    ideal rate in the score's unit, and the bound."""
    scale = RENDER_SCORE_PER_TFLOPS.get(bench.unit)
    if scale is None:
        return None
    tau = RENDER_TRAVERSAL_SHARE
    per_tflops = scale / ((1 - tau) + tau / rt_traversal_speedup(gpu))
    return gpu.fp32_tflops * bench.gpus * per_tflops, "compute"


def render_memory_gib(scene_gib: float) -> float:
    """GiB a GPU needs to path-trace a scene: the scene as the renderer reports its device
    memory (Blender's status bar shows Cycles' peak: geometry, BVH, textures and the film)
    and the CUDA context beside it. Every GPU holds the whole scene: Cycles duplicates it
    on each device (Blender manual, Preferences › System, "Distribute Memory Across
    Devices": sharing it instead needs GPUs joined by NVLink, which no option here is
    planned on), and frames parallelise over GPUs."""
    return scene_gib + CUDA_CONTEXT_GIB
