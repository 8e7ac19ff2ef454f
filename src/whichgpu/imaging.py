"""``estimate --task image`` and the recommender's image jobs: a pipeline call timed by the
efficiency model fitted on published image-generation runs, the user's job described as a
measurement (:func:`~whichgpu.estimate.efficiency.observe`) as the calibration set is, so
what is validated is what users get; its memory from :mod:`whichgpu.estimate.diffusion`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.catalog.records import GPU
from whichgpu.estimate.diffusion import (
    IMAGE_QUANTS,
    ImageJob,
    ImageMemory,
    image_memory,
    image_times,
)
from whichgpu.models.diffusion import DiffusionPipeline

#: The harness a user's image job is assumed to run like: diffusers on PyTorch 2 (fused
#: SDPA attention, no compilation), what the pipelines' documentation runs.
DEFAULT_IMAGE_HARNESS = "diffusers"


@dataclass(frozen=True)
class ImageEstimate:
    """An image job on ``count`` GPUs, each running its own pipeline on its share of the
    images: memory, time per call and per image, and the rate of all GPUs."""

    pipeline: DiffusionPipeline
    job: ImageJob
    count: int
    memory: ImageMemory
    seconds_per_call: float
    seconds_per_step: float
    transfer_s: float
    harness: str
    efficiency: float
    provenance: str
    bound: str
    #: The settings whichgpu chose where the user left them open (batch, offload, vae_tiling)
    chosen: tuple[str, ...] = ()

    @property
    def seconds_per_image(self) -> float:
        """Seconds an image takes on one GPU (a call's time over its batch)."""
        return self.seconds_per_call / self.job.batch

    @property
    def images_per_s(self) -> float:
        return self.count / self.seconds_per_image


def check_image_job(pipeline: DiffusionPipeline, job: ImageJob, gpu: GPU) -> None:
    """What an image job must satisfy: a side that is a multiple of the pipeline's stride
    (the VAE's 8 times the denoiser's down-samplings or patch), a precision the GPU's tensor
    cores run, a weight format the tools offer."""
    from whichgpu.errors import InvalidInput
    from whichgpu.estimate.perf import check_math_unit

    stride = pipeline.stride_px
    if job.resolution % stride:
        low = job.resolution // stride * stride
        raise InvalidInput(
            "image_resolution_stride",
            field=("resolution",),
            resolution=job.resolution,
            model=pipeline.name,
            stride=stride,
            low=max(low, stride),
            high=low + stride,
        )
    if job.quant is not None and job.quant not in IMAGE_QUANTS:
        raise InvalidInput(
            "image_quant", field=("quant",), quant=job.quant, valid=", ".join(IMAGE_QUANTS)
        )
    check_math_unit(gpu, job.precision)


def _bench(pipeline: DiffusionPipeline, job: ImageJob, gpu: GPU, unit: str, harness: str) -> Any:
    from whichgpu.catalog.records import Benchmark

    return Benchmark(
        id="user-job",
        gpu=gpu.id,
        gpus=1,
        regime="diffusion-infer",
        model=pipeline.id,
        precision=job.quant or job.precision,
        batch=job.batch,
        metric="latency" if unit == "s" else "throughput",
        value=1.0,
        unit=unit,
        harness=harness,
        source="whichgpu",
        as_of="undated",
        resolution=job.resolution,
        steps=job.steps,
    )


def estimate_image(
    pipeline: DiffusionPipeline,
    job: ImageJob,
    gpu: GPU,
    count: int = 1,
    harness: str = DEFAULT_IMAGE_HARNESS,
) -> ImageEstimate:
    """``job`` on ``count`` × ``gpu``: the calibrated seconds of a pipeline call (the user's
    job described as a measurement and timed by the fitted model, as the calibration set is:
    :func:`~whichgpu.estimate.efficiency.observe`), plus offloaded weights' transfers."""
    from whichgpu.errors import InvalidInput
    from whichgpu.estimate.efficiency import load_efficiency, observe

    check_image_job(pipeline, job, gpu)
    model, _spread = load_efficiency()
    call = observe(_bench(pipeline, job, gpu, "s", harness), gpu)
    step = observe(_bench(pipeline, job, gpu, "it/s", harness), gpu)
    if call is None or step is None:
        raise InvalidInput("no_throughput_model", regime="diffusion-infer", gpu=gpu.name)
    eta, provenance = model.efficiency(
        call.group, call.factor, call.unit, call.power_w_per_tflops, call.memory
    )
    transfer = image_times(pipeline, job, gpu).transfer_s
    return ImageEstimate(
        pipeline=pipeline,
        job=job,
        count=count,
        memory=image_memory(pipeline, job),
        seconds_per_call=model.seconds_per_unit(call) + transfer,
        seconds_per_step=model.seconds_per_unit(step),
        transfer_s=transfer,
        harness=harness,
        efficiency=eta,
        provenance=provenance,
        bound="host link" if transfer > model.seconds_per_unit(call) else call.bound,
    )
