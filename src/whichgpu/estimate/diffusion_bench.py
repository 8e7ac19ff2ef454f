"""Image-generation measurements (``diffusion-infer`` rows of ``benchmarks.csv``) as the
efficiency fit sees them: the pipeline and job a row describes, its ideal rate at η = 1, and
its units per denoising step (what a harness's per-step overhead divides); the roofline
itself is :mod:`whichgpu.estimate.diffusion`'s."""

from __future__ import annotations

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.estimate.diffusion import ImageJob, image_times
from whichgpu.job import QUANT_BITS
from whichgpu.models.diffusion import DiffusionPipeline

#: Image-generation harnesses whose attention materialises its score matrices: diffusers
#: on PyTorch 1.x without xformers (its default ``AttnProcessor``); every other harness runs
#: a fused kernel (PyTorch 2's SDPA, xformers, TensorRT's, AITemplate's)
EAGER_ATTENTION_HARNESSES = frozenset({"diffusers-eager"})
#: Benchmark model names of image pipelines whose architecture a preset has
PIPELINE_ALIASES = {"sd-1.4": "sd-1.5"}


def image_job_of(bench: Benchmark) -> tuple[DiffusionPipeline, ImageJob] | None:
    """The pipeline and image job a diffusion measurement describes (its resolution and
    steps, else the pipeline's defaults)."""
    from whichgpu.models.pipelines import find_pipeline, is_pipeline

    name = PIPELINE_ALIASES.get(bench.model, bench.model)
    if not is_pipeline(name):
        return None
    pipeline = find_pipeline(name)
    precision = bench.precision or "16-true"
    quant = precision if precision in QUANT_BITS else None
    job = ImageJob(
        resolution=bench.resolution or pipeline.default_resolution,
        steps=bench.steps or pipeline.default_steps,
        batch=bench.batch or 1,
        precision="16-true" if quant else precision,  # type: ignore[arg-type]
        quant=quant,
        fused_attention=bench.harness not in EAGER_ATTENTION_HARNESSES,
    )
    return pipeline, job


def diffusion_units_per_step(bench: Benchmark) -> float:
    """Units of a diffusion measurement per denoising step (the step is what launches the
    denoiser's kernels, the overhead a harness pays): a step for ``it/s``, ``1 / steps`` of a
    pipeline call for a latency, ``batch / steps`` images for images per second."""
    found = image_job_of(bench)
    if found is None:
        return float("inf")
    _pipeline, job = found
    if bench.unit == "it/s":
        return 1.0
    if bench.unit == "images/s":
        return job.batch / job.steps
    return 1.0 / job.steps


def diffusion_ideal(bench: Benchmark, gpu: GPU) -> tuple[float, str] | None:
    """A diffusion measurement's ideal rate and bound (:func:`~whichgpu.estimate.diffusion.
    image_times` at η = 1): pipeline calls per second for a latency in seconds, images per
    second, or denoising steps per second (``it/s``, the denoiser alone)."""
    found = image_job_of(bench)
    if found is None:
        return None
    pipeline, job = found
    times = image_times(pipeline, job, gpu)
    if bench.unit == "it/s":
        return 1 / times.step_s, times.bound
    if bench.unit == "s":
        return 1 / times.compute_s, times.bound
    if bench.unit == "images/s":
        return job.batch / times.compute_s, times.bound
    return None


def diffusion_stream_s(bench: Benchmark, gpu: GPU) -> float:
    """A diffusion measurement's memory-bound kernels' traffic at full bandwidth, per unit
    (:attr:`~whichgpu.estimate.diffusion.ImageTimes.step_stream_s`): a step's for ``it/s``,
    a pipeline call's (every step and the decode) for a latency, an image's for images per
    second."""
    found = image_job_of(bench)
    if found is None:
        return 0.0
    pipeline, job = found
    times = image_times(pipeline, job, gpu)
    call = job.steps * times.step_stream_s + times.decode_stream_s
    if bench.unit == "it/s":
        return times.step_stream_s
    if bench.unit == "images/s":
        return call / job.batch
    return call
