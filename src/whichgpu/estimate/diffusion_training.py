"""Fine-tuning a diffusion pipeline's denoiser as diffusers' training scripts run it
(train_text_to_image, train_dreambooth_lora): the memory of a training step and its ideal
time, from the same walks as generation (:mod:`whichgpu.estimate.diffusion`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from whichgpu.catalog.records import GPU
from whichgpu.estimate.diffusion import (
    FP32_PRECISIONS,
    ImageMemory,
    ImagePrecision,
    component_walk,
    compute_bytes,
    math_seconds,
)
from whichgpu.job import QUANT_BITS
from whichgpu.models.diffusion import DEFAULT_LORA_TARGETS, DiffusionPipeline, lora_params
from whichgpu.models.diffusion_walks import walk_vae

ImageTrainMethod = Literal["lora", "full"]
#: Images per GPU a step when the batch is left open: the largest that fits up to the
#: diffusers DreamBooth scripts' ``--train_batch_size`` default (4)
MAX_AUTO_TRAIN_BATCH = 4
#: Bytes of optimizer state per trainable parameter: AdamW's two fp32 moments, or
#: bitsandbytes' 8-bit ones (``--use_8bit_adam``)
OPTIMIZER_STATE_BYTES = {"adamw": 8.0, "adamw-8bit": 2.0}


@dataclass(frozen=True)
class ImageTrainJob:
    """Fine-tuning a pipeline's denoiser on ``batch`` images a GPU step (diffusers'
    train_text_to_image / train_dreambooth_lora scripts): LoRA on the default targets, or
    every weight; frozen parts in the mixed precision's 16-bit dtype; trainable weights,
    their gradients and AdamW's moments in FP32 (accelerate's mixed precision)."""

    method: ImageTrainMethod
    resolution: int
    batch: int = 1
    precision: ImagePrecision = "bf16-true"
    lora_rank: int = 4
    optimizer: str = "adamw"
    checkpointing: bool = False
    #: latents and text embeddings computed once beforehand (``--cache_latents``; the
    #: FLUX QLoRA recipe): no encoders resident, no encoding a step
    cached: bool = False
    #: the frozen base's format for LoRA (QLoRA's NF4, an FP8 base)
    quant: str | None = None
    #: LoRA target modules (PEFT's suffix match); None: the diffusers script's
    targets: tuple[str, ...] | None = None


def trainable_params(pipeline: DiffusionPipeline, job: ImageTrainJob) -> int:
    den = pipeline.denoiser
    if job.method == "full":
        return den.params
    return lora_params(den, job.lora_rank, job.targets or DEFAULT_LORA_TARGETS[den.kind])


@lru_cache(maxsize=4096)
def image_train_memory(pipeline: DiffusionPipeline, job: ImageTrainJob) -> ImageMemory:
    """Peak GPU memory of a fine-tuning step: the frozen encoders (unless cached; the VAE in
    FP32 where the pipeline upcasts it, as the SDXL scripts keep it), the denoiser (FP32 and
    trainable for a full fine-tune; its 16-bit or quantised base plus FP32 adapters for
    LoRA), gradients and optimizer states of what trains, and the activations the backward
    needs (each checkpointed unit's input plus one unit's with gradient checkpointing)."""
    from whichgpu.estimate.memory import overhead_bytes

    den = pipeline.denoiser
    latent = pipeline.latent_side(job.resolution)
    frozen = 0.0
    if not job.cached:
        for c in pipeline.components:
            if c.role.startswith("text_encoder"):
                frozen += c.params * 2.0
            elif c.kind == "vae":
                frozen += c.params * (4.0 if pipeline.vae_upcast else 2.0)
    trainable = trainable_params(pipeline, job)
    states = OPTIMIZER_STATE_BYTES.get(job.optimizer, 8.0)
    if job.method == "full":
        base = den.params * 4.0
    else:
        bits = QUANT_BITS[job.quant] if job.quant else 16.0
        base = den.params * bits / 8 + trainable * 4.0
    w = component_walk(pipeline, "denoiser", latent)
    per_image = w.checkpointed_elements if job.checkpointing else w.saved_elements
    activations = per_image * job.batch * compute_bytes(job.precision)
    parts = {
        "weights": frozen + base,
        "gradients": trainable * 4.0,
        "optimizer": trainable * states,
        "activations": activations,
    }
    if not job.cached:  # the VAE encodes the batch before the denoiser's forward
        enc = walk_vae(pipeline.component("vae").config, latent, latent, "encoder")
        encode = enc.working * job.batch * (4.0 if pipeline.vae_upcast else 2.0)
        parts["activations"] = max(activations, encode)
    parts["overhead"] = overhead_bytes(sum(parts.values()))
    return ImageMemory(parts, "backward", 0.0)


@dataclass(frozen=True)
class ImageTrainTimes:
    """A fine-tuning step's ideal seconds (η = 1): encoding the batch, the denoiser's
    forward and backward (and recomputation), and the denoiser passes it launches."""

    encode_s: float
    denoiser_s: float
    optimizer_s: float
    passes: int
    bound: str
    #: the denoiser's memory-bound kernels at full bandwidth (ImageTimes.step_stream_s): the
    #: forward's traffic, twice it in the backward (each op reads its input and the output's
    #: gradient, writes the input's), once more when checkpointing recomputes the forward
    stream_s: float = 0.0

    @property
    def compute_s(self) -> float:
        return self.encode_s + self.denoiser_s + self.optimizer_s


@lru_cache(maxsize=4096)
def image_train_times(pipeline: DiffusionPipeline, job: ImageTrainJob, gpu: GPU) -> ImageTrainTimes:
    """The backward costs twice the forward (the gradients of activations and of weights,
    Kaplan et al., 2020), once for LoRA (frozen weights need no gradient; the adapters'
    are small); checkpointing adds a forward. The optimizer step reads and writes each
    trainable weight, gradient and state once (memory-bound). The text encoders and the VAE
    encoder run forward on the batch unless cached."""
    latent = pipeline.latent_side(job.resolution)
    fp32 = job.precision in FP32_PRECISIONS
    w = component_walk(pipeline, "denoiser", latent)
    passes = (3 if job.method == "full" else 2) + (1 if job.checkpointing else 0)
    denoiser = math_seconds(w, job.batch * passes, gpu, job.precision, fp32)
    encode = 0.0
    if not job.cached:
        vae = walk_vae(pipeline.component("vae").config, latent, latent, "encoder")
        encode = math_seconds(vae, job.batch, gpu, job.precision, fp32)
        encode += sum(
            math_seconds(component_walk(pipeline, c.role, latent), job.batch, gpu,
                         job.precision, fp32)
            for c in pipeline.text_encoders
        )  # fmt: skip
    trainable = trainable_params(pipeline, job)
    states = OPTIMIZER_STATE_BYTES.get(job.optimizer, 8.0)
    moved = trainable * (4.0 + 4.0 + states) * 2
    bandwidth = gpu.memory_bandwidth_gb_per_s * 1e9
    optimizer = moved / bandwidth
    traffic = w.elementwise_elements * job.batch * compute_bytes(job.precision)
    stream = traffic * (3 + (1 if job.checkpointing else 0)) / bandwidth
    return ImageTrainTimes(encode, denoiser, optimizer, passes, "compute", stream)


def make_train_job(
    pipeline: DiffusionPipeline,
    gpu: GPU | None,
    method: str,
    *,
    resolution: int | None = None,
    batch: int | None = None,
    precision: str | None = None,
    lora_rank: int | None = None,
    optimizer: str | None = None,
    checkpointing: bool | None = None,
    cached: bool | None = None,
    quant: str | None = None,
    lora_targets: str | None = None,
) -> ImageTrainJob:
    """An :class:`ImageTrainJob` from user settings; left open: the pipeline's resolution,
    LoRA rank 4 (the scripts' ``--rank``), AdamW, BF16 mixed precision (FP16 where the GPU
    has no BF16)."""
    from whichgpu.errors import InvalidInput

    if optimizer is not None and optimizer not in OPTIMIZER_STATE_BYTES:
        raise InvalidInput(
            "image_optimizer",
            field=("optimizer",),
            optimizer=optimizer,
            valid=", ".join(OPTIMIZER_STATE_BYTES),
        )
    # tf32: FP32 training with TF32 matmuls (the scripts' --allow_tf32)
    mixed = {"bf16-mixed": "bf16-true", "16-mixed": "16-true", "32-true": "32-true",
             "tf32": "tf32"}  # fmt: skip
    if precision is not None and precision not in mixed:
        raise InvalidInput(
            "image_precision", field=("precision",), precision=precision,
            valid=", ".join(mixed),
        )  # fmt: skip
    chosen = mixed[precision] if precision else "bf16-true"
    if precision is None and gpu is not None and gpu.bf16_tensor_dense_tflops is None:
        chosen = "16-true"
    if quant is not None and method == "full":
        raise InvalidInput("image_quant_full", field=("quant",), quant=quant)
    return ImageTrainJob(
        method="full" if method == "full" else "lora",
        resolution=resolution or pipeline.default_resolution,
        batch=batch or 1,
        precision=chosen,  # type: ignore[arg-type]
        lora_rank=lora_rank or 4,
        optimizer=optimizer or "adamw",
        checkpointing=bool(checkpointing),
        cached=bool(cached),
        quant=quant,
        targets=None
        if lora_targets in (None, "peft-default")
        else tuple(t.strip() for t in str(lora_targets).split(",") if t.strip()),
    )


def fitting_train_job(
    pipeline: DiffusionPipeline, job: ImageTrainJob, capacity_bytes: float, batch_open: bool,
    checkpointing_open: bool,
) -> tuple[ImageTrainJob, list[str]]:  # fmt: skip
    """What a skilled user sets when left open for a GPU of ``capacity_bytes``: the largest
    batch up to :data:`MAX_AUTO_TRAIN_BATCH` that fits, without checkpointing where that
    fits (it costs a forward), else with it."""

    def fits(j: ImageTrainJob) -> bool:
        return image_train_memory(pipeline, j).total_bytes <= capacity_bytes

    options = [job.checkpointing] if not checkpointing_open else [False, True]
    for ckpt in options:
        halvings = MAX_AUTO_TRAIN_BATCH.bit_length()
        batches = [MAX_AUTO_TRAIN_BATCH >> k for k in range(halvings)] if batch_open else [
            job.batch]  # fmt: skip
        for batch in batches:
            candidate = replace(job, batch=batch, checkpointing=ckpt)
            if fits(candidate):
                chosen = (["batch"] if batch_open else []) + (
                    ["checkpointing"] if checkpointing_open else [])  # fmt: skip
                return candidate, chosen
    # nothing fits: the least memory the open settings allow, for the answer to show
    smallest = replace(job, batch=1 if batch_open else job.batch,
                       checkpointing=True if checkpointing_open else job.checkpointing)  # fmt: skip
    return smallest, (["batch"] if batch_open else []) + (
        ["checkpointing"] if checkpointing_open else [])  # fmt: skip
