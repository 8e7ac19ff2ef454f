"""``estimate --task image`` and the recommender's image jobs: a pipeline call timed by the
efficiency model fitted on published image-generation runs, the user's job described as a
measurement (:func:`~whichgpu.estimate.efficiency.observe`) as the calibration set is, so
what is validated is what users get; its memory from :mod:`whichgpu.estimate.diffusion`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from whichgpu.catalog.records import GPU
from whichgpu.estimate.diffusion import (
    IMAGE_QUANTS,
    ImageJob,
    ImageMemory,
    image_memory,
    image_times,
)
from whichgpu.estimate.diffusion_training import (
    ImageTrainJob,
    image_train_memory,
    image_train_times,
    trainable_params,
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
    from whichgpu.estimate.efficiency import observe
    from whichgpu.estimate.efficiency_model import load_efficiency

    check_image_job(pipeline, job, gpu)
    model, _spread = load_efficiency()
    call = observe(_bench(pipeline, job, gpu, "s", harness), gpu)
    step = observe(_bench(pipeline, job, gpu, "it/s", harness), gpu)
    if call is None or step is None:
        raise InvalidInput("no_throughput_model", regime="diffusion-infer", gpu=gpu.name)
    eta, provenance = model.of(call)
    transfer = image_times(pipeline, job, gpu).transfer_s
    seconds = model.seconds_per_unit(call)
    # the memory-bound kernels (norms, activations, residual adds) can outlast the math
    streamed = model.streamed_s(call.bench.regime, call.stream_s, call.memory)
    bound = "memory bandwidth" if streamed > seconds - streamed else call.bound
    return ImageEstimate(
        pipeline=pipeline,
        job=job,
        count=count,
        memory=image_memory(pipeline, job),
        seconds_per_call=seconds + transfer,
        seconds_per_step=model.seconds_per_unit(step),
        transfer_s=transfer,
        harness=harness,
        efficiency=eta,
        provenance=provenance,
        bound="host link" if transfer > seconds else bound,
    )


@dataclass(frozen=True)
class ImageTrainEstimate:
    """Fine-tuning a pipeline's denoiser on ``count`` GPUs (data parallel: each GPU a whole
    copy, gradients all-reduced a step): memory per GPU, seconds a step, images a second."""

    pipeline: DiffusionPipeline
    job: ImageTrainJob
    count: int
    memory: ImageMemory
    seconds_per_step: float
    allreduce_s: float
    trainable_params: int
    harness: str
    efficiency: float
    provenance: str
    bound: str
    chosen: tuple[str, ...] = ()

    @property
    def images_per_s(self) -> float:
        return self.count * self.job.batch / self.seconds_per_step


#: The key of the fitted speed factor of fine-tuning an image pipeline, relative to the
#: image-generation calibration (``catalog/data/framework_efficiency.csv``, written by
#: scripts/fit_frameworks.py from validation/published_diffusion_training.csv)
IMAGE_TRAIN_FACTOR = "image-train"


def estimate_image_training(
    pipeline: DiffusionPipeline,
    job: ImageTrainJob,
    gpu: GPU,
    count: int = 1,
    harness: str = DEFAULT_IMAGE_HARNESS,
    factored: bool = True,
) -> ImageTrainEstimate:
    """A fine-tuning step timed with the efficiency fitted on ``harness``'s image-generation
    runs (no published fine-tuning run is fitted: the forward's kernels are the same, the
    backward's are taken to run as well), its memory-bound kernels' traffic at the fitted
    passes (forward, backward, recomputation), its per-step launch overhead once a denoiser pass,
    and the ring all-reduce of the trainable gradients over the GPUs' links; then, with
    ``factored``, the speed factor fitted on published fine-tuning runs (what a training
    step's backward, optimizer and data loading cost beyond that)."""
    from whichgpu.errors import InvalidInput
    from whichgpu.estimate.efficiency import observe
    from whichgpu.estimate.efficiency_model import load_efficiency, load_framework_factors

    one_image = ImageJob(job.resolution, 1, precision=job.precision)
    check_image_job(pipeline, one_image, gpu)  # the stride, and the precision's tensor cores
    model, _spread = load_efficiency()
    probe = observe(_bench(pipeline, one_image, gpu, "it/s", harness), gpu)
    if probe is None:
        raise InvalidInput("no_throughput_model", regime="diffusion-infer", gpu=gpu.name)
    eta, provenance = model.of(probe)
    times = image_train_times(pipeline, job, gpu)
    trainable = trainable_params(pipeline, job)
    launch = model.overhead_s.get(harness, 0.0) * times.passes
    stream = model.streamed_s("diffusion-infer", times.stream_s, probe.memory)
    step = times.compute_s / eta + launch + stream
    fitted = load_framework_factors().get(IMAGE_TRAIN_FACTOR) if factored else None
    if fitted is not None:
        step /= fitted[0]
        provenance += f"; × {fitted[0]:.2f} fitted on {fitted[1]} published fine-tuning runs"
    one = ImageTrainEstimate(
        pipeline=pipeline,
        job=job,
        count=1,
        memory=image_train_memory(pipeline, job),
        seconds_per_step=step,
        allreduce_s=0.0,
        trainable_params=trainable,
        harness=harness,
        efficiency=eta,
        provenance=provenance,
        bound="compute",
    )
    return on_gpus(one, count, gpu)


def on_gpus(
    one: ImageTrainEstimate, count: int, gpu: GPU, bridged: bool = False
) -> ImageTrainEstimate:
    """A one-GPU fine-tuning step data-parallel over ``count`` GPUs: each step adds the ring
    all-reduce of the trainable parameters' fp32 gradients over the GPUs' links (Patarasuk &
    Yuan, 2009; PCIe cards over NVLink where ``bridged``), and the step is interconnect-bound
    where that takes longer than the rest."""
    from dataclasses import replace

    from whichgpu.estimate.parallel import allreduce_seconds

    if count == 1:
        return one
    allreduce = allreduce_seconds(one.trainable_params * 4.0, count, gpu, bridged)
    return replace(
        one, count=count, seconds_per_step=one.seconds_per_step + allreduce,
        allreduce_s=allreduce,
        bound="interconnect" if allreduce > one.seconds_per_step else one.bound,
    )  # fmt: skip


@dataclass(frozen=True)
class PublishedImageRun:
    """A published fine-tuning run of an image pipeline, as whichgpu estimates it."""

    row: dict[str, str]
    pipeline: DiffusionPipeline
    job: ImageTrainJob
    gpu: GPU

    @property
    def source(self) -> str:
        return self.row["source_url"].split("/blob/")[0]

    @property
    def published(self) -> float:
        """GiB for a peak, optimizer steps a second for a speed."""
        value = float(self.row["value"])
        if self.row["metric"] == "peak_memory":
            return value * (1e9 / 2**30 if self.row["unit"] == "GB" else 1.0)
        return value if self.row["unit"] == "it/s" else 1 / value


def published_training_runs(text: str, catalog: Any) -> list[PublishedImageRun]:
    """The rows of ``validation/published_diffusion_training.csv`` as jobs."""
    import csv

    from whichgpu.estimate.diffusion_training import make_train_job
    from whichgpu.models.pipelines import find_pipeline

    runs = []
    for row in csv.DictReader(text.splitlines()):
        pipeline = find_pipeline(row["model"])
        gpu = catalog.gpu(row["gpu"])
        job = make_train_job(
            pipeline, gpu, row["method"], resolution=int(row["resolution"]),
            batch=int(row["batch"]), precision=row["precision"], optimizer=row["optimizer"],
            lora_rank=int(row["lora_rank"]) if row["lora_rank"] else None,
            checkpointing=row["checkpointing"] == "yes", cached=row["cache_latents"] == "yes",
            quant=row["quant"] or None, lora_targets=row["lora_targets"] or None,
        )  # fmt: skip
        runs.append(PublishedImageRun(row, pipeline, job, gpu))
    return runs


def speed_factor(runs: list[PublishedImageRun]) -> tuple[float, int]:
    """The geometric mean of published over estimated (unfactored) steps a second."""
    import math

    ratios = [
        r.published
        * estimate_image_training(r.pipeline, r.job, r.gpu, factored=False).seconds_per_step
        for r in runs
        if r.row["metric"] != "peak_memory"
    ]
    if not ratios:
        return 1.0, 0
    return math.exp(sum(math.log(x) for x in ratios) / len(ratios)), len(ratios)


def plan_image(
    pipeline: DiffusionPipeline, gpu: GPU, count: int, settings: dict[str, Any]
) -> ImageEstimate:
    """An image job as the user set it, what was left open (images a call, CPU offload, VAE
    tiling) set for ``gpu``'s memory, estimated; ``settings`` are
    :func:`~whichgpu.estimate.diffusion.make_image_job`'s."""
    from dataclasses import replace

    one = _plan_image_on_one(pipeline, gpu, tuple(sorted(settings.items())))
    return one if count == 1 else replace(one, count=count)


@lru_cache(maxsize=2048)
def _plan_image_on_one(
    pipeline: DiffusionPipeline, gpu: GPU, items: tuple[tuple[str, Any], ...]
) -> ImageEstimate:
    """:func:`plan_image` on one GPU, once per GPU and settings: each GPU of a candidate
    runs its own pipeline on a share of the images, so only the count differs between a
    GPU model's candidates."""
    from dataclasses import replace

    from whichgpu.estimate.diffusion import fitting_image_job, make_image_job
    from whichgpu.estimate.parallel import usable_bytes

    settings = dict(items)
    job = make_image_job(pipeline, gpu, **settings)
    job, chosen = fitting_image_job(
        pipeline, job, usable_bytes(gpu), settings.get("batch") is None,
        settings.get("offload") is None, settings.get("vae_tiling") is None,
    )  # fmt: skip
    return replace(estimate_image(pipeline, job, gpu, 1), chosen=tuple(chosen))


def plan_image_training(
    pipeline: DiffusionPipeline, gpu: GPU, count: int, method: str, settings: dict[str, Any]
) -> ImageTrainEstimate:
    """A fine-tuning job as the user set it, the batch and checkpointing left open set for
    ``gpu``'s memory, estimated; ``settings`` are
    :func:`~whichgpu.estimate.diffusion.make_train_job`'s."""
    bridged = bool(settings.get("nvlink_bridge"))
    dropped = ("nvlink_bridge", "lora_targets") if method == "full" else ("nvlink_bridge",)
    settings = {k: v for k, v in settings.items() if k not in dropped}
    one = _plan_training_on_one(pipeline, gpu, method, tuple(sorted(settings.items())))
    return on_gpus(one, count, gpu, bridged)


@lru_cache(maxsize=2048)
def _plan_training_on_one(
    pipeline: DiffusionPipeline, gpu: GPU, method: str, items: tuple[tuple[str, Any], ...]
) -> ImageTrainEstimate:
    """:func:`plan_image_training` on one GPU, once per GPU and settings (the counts of a
    GPU model differ only in the gradients' all-reduce: :func:`on_gpus`)."""
    from dataclasses import replace

    from whichgpu.estimate.diffusion_training import fitting_train_job, make_train_job
    from whichgpu.estimate.parallel import usable_bytes

    settings = dict(items)
    job = make_train_job(pipeline, gpu, method, **settings)
    job, chosen = fitting_train_job(
        pipeline, job, usable_bytes(gpu), settings.get("batch") is None,
        settings.get("checkpointing") is None,
    )  # fmt: skip
    return replace(estimate_image_training(pipeline, job, gpu, 1), chosen=tuple(chosen))


def image_settings(request: Any, task: str) -> dict[str, Any]:
    """The settings an image request gives (an ``estimate`` request or a ``recommend``
    component: the same field names), for :func:`plan_image` or
    :func:`plan_image_training`; None where left open."""
    if task == "image":
        return {
            "resolution": request.resolution, "steps": request.steps, "batch": request.batch,
            "precision": request.precision, "quant": request.quant,
            "quantize_on": request.quantize_on,
            "offload": request.cpu_offload, "vae_tiling": request.vae_tiling,
        }  # fmt: skip
    checkpointing = request.checkpointing
    return {
        "resolution": request.resolution, "batch": request.batch,
        "precision": request.precision, "lora_rank": request.lora_rank,
        "optimizer": request.optimizer,
        "checkpointing": None if checkpointing is None else bool(checkpointing),
        "cached": request.cache_latents, "quant": request.quant,
        "lora_targets": request.lora_targets, "nvlink_bridge": request.nvlink_bridge,
    }  # fmt: skip
