"""Image generation with a diffusion pipeline: memory on the GPU (and in host memory when
components are offloaded) and the time of one pipeline call, from the components' walks
(:mod:`whichgpu.models.diffusion`) and the GPU's roofline.

One call of a diffusers text-to-image pipeline (``StableDiffusionPipeline.__call__`` and its
SDXL, SD3 and FLUX siblings) encodes the prompt (and, with classifier-free guidance, the
negative prompt: Ho & Salimans, 2022), runs the denoiser ``steps`` times on the latents (on a
doubled batch under guidance), and decodes the latents with the VAE. Its time is

    t = t_text + steps · t_step + t_decode (+ weight transfers when offloaded),

each stage a roofline ``max(FLOPs / peak, bytes / bandwidth)`` (Williams et al., 2009) over
the fitted efficiency of its software (:mod:`whichgpu.estimate.efficiency`), plus the
memory-bound kernels between the convolutions and GEMMs (norms, activations, residual adds:
their traffic over the bandwidth, a fitted number of times); attention that is not fused
(PyTorch 1.x diffusers without xformers) writes and reads its score matrices through DRAM, a
memory-bound term added to each step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal, Protocol

from whichgpu.catalog.records import GPU
from whichgpu.estimate.parallel import host_link_gb_per_s
from whichgpu.job import QUANT_BITS, QuantizeOn
from whichgpu.models.diffusion import DiffusionComponent, DiffusionPipeline, Walk, walk
from whichgpu.units import BYTES_PER_GIB

ImagePrecision = Literal["16-true", "bf16-true", "32-true", "tf32"]
#: ``model``: diffusers' ``enable_model_cpu_offload`` (each component moved to the GPU when
#: it runs, back after); ``sequential``: ``enable_sequential_cpu_offload`` (each submodule's
#: weights streamed in as it runs, accelerate's hooks)
ImageOffload = Literal["none", "model", "sequential"]
IMAGE_OFFLOADS: tuple[str, ...] = ("none", "model", "sequential")
IMAGE_PRECISIONS: tuple[str, ...] = ("16-true", "bf16-true", "32-true", "tf32")
#: FP32 weights and activations: PyTorch's defaults (``32-true``), or with its matmuls on
#: TF32 tensor cores (``tf32``: ``torch.set_float32_matmul_precision("high")``)
FP32_PRECISIONS = frozenset({"32-true", "tf32"})
#: Weight formats a denoiser (and a T5 encoder) is loaded in: fp8 and int8 (torchao's
#: float8/int8 weight-only configs through diffusers' TorchAoConfig; ComfyUI's e4m3
#: checkpoints), bitsandbytes NF4 (diffusers' BitsAndBytesConfig), GGUF k-quants
#: (diffusers' GGUFQuantizationConfig, city96's FLUX.1 GGUF files): weight-only, computed
#: in 16 bits after dequantisation
IMAGE_QUANTS: tuple[str, ...] = (
    "fp8", "int8", "nf4", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0",
)  # fmt: skip
#: Score matrices through DRAM in eager attention: the QKᵀ product written, the softmax
#: read and written, read again by the weighted sum
EAGER_SCORE_PASSES = 4
#: diffusers' VAE tiling: tiles of the VAE config's ``sample_size`` pixels, overlapping by
#: a quarter (``AutoencoderKL.tile_overlap_factor``)
TILE_OVERLAP = 0.25
#: The roles whose weights a quantised load applies to: the denoiser and a T5 encoder,
#: what diffusers' quantization guides quantise (the CLIP encoders and the VAE stay 16-bit)
QUANTISED_KINDS = frozenset({"unet", "mmdit", "flux", "t5"})
#: GGUF files hold the denoiser alone (diffusers' GGUF guide loads the transformer with
#: ``from_single_file``; the text encoders come from the pipeline's repository in 16 bits)
GGUF_QUANTS = frozenset({"q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0"})
#: bitsandbytes keeps a transformers model's ``_keep_in_fp32_modules`` in fp32 (its
#: quantizers set ``use_keep_in_fp32_modules``): T5's ``wo``, each FFN's output projection
BNB_QUANTS = frozenset({"nf4"})


@dataclass(frozen=True)
class ImageJob:
    """One pipeline call, repeated: ``batch`` images of ``resolution``² pixels in ``steps``
    denoising steps."""

    resolution: int
    steps: int
    batch: int = 1
    precision: ImagePrecision = "16-true"
    quant: str | None = None
    #: Where the quantised weights are made (:data:`whichgpu.job.QuantizeOn`): as they load,
    #: or on the GPU after a 16-bit load (torchao's ``quantize_`` after ``pipe.to("cuda")``)
    quantize_on: QuantizeOn = "load"
    offload: ImageOffload = "none"
    vae_tiling: bool = False
    #: classifier-free guidance; None: the pipeline's (off for guidance-distilled models)
    cfg: bool | None = None
    #: attention through a fused kernel (SDPA, xformers, FlashAttention) or materialised
    fused_attention: bool = True


def guided(pipeline: DiffusionPipeline, job: ImageJob) -> int:
    """Denoiser passes per image a step: 2 under classifier-free guidance, else 1."""
    cfg = pipeline.cfg if job.cfg is None else job.cfg
    return 2 if cfg else 1


def context_tokens(pipeline: DiffusionPipeline) -> int:
    """Text tokens the denoiser attends to: the UNet's CLIP states (77), MMDiT's CLIP and T5
    states joined (77 + 256), FLUX's T5 states (512; the CLIP output is pooled)."""
    tokens = pipeline.text_tokens
    if pipeline.denoiser.kind == "unet":
        return max(tokens.values())
    if pipeline.denoiser.kind == "flux":
        return sum(v for k, v in tokens.items() if pipeline.component(k).kind == "t5")
    clip = max((v for k, v in tokens.items() if pipeline.component(k).kind == "clip"), default=0)
    return clip + sum(v for k, v in tokens.items() if pipeline.component(k).kind == "t5")


@lru_cache(maxsize=512)
def component_walk(pipeline: DiffusionPipeline, role: str, latent: int) -> Walk:
    """A component's walk at a square ``latent``-side latent (text encoders at their own
    token counts)."""
    component = pipeline.component(role)
    if role.startswith("text_encoder"):
        return walk(component, latent, latent, pipeline.text_tokens[role])
    return walk(component, latent, latent, context_tokens(pipeline))


def bytes_per_weight(component: DiffusionComponent, job: ImageJob) -> float:
    """Bytes a weight of ``component`` takes as loaded: the job's precision, or its
    quantised format for the denoiser and T5."""
    if not quantised(component, job):
        return 4.0 if job.precision in FP32_PRECISIONS else 2.0
    stored = QUANT_BITS[str(job.quant)] / 8
    if component.kind == "t5" and job.quant in BNB_QUANTS:
        c = component.config
        fp32 = int(c["d_ff"]) * int(c["d_model"]) * int(c["num_layers"]) / component.params
        return fp32 * 4.0 + (1 - fp32) * stored
    return stored


def quantised(component: DiffusionComponent, job: ImageJob) -> bool:
    """Whether ``component``'s weights are held in the job's weight format."""
    if job.quant is None or component.kind not in QUANTISED_KINDS:
        return False
    return not (job.quant in GGUF_QUANTS and component.kind == "t5")


def compute_bytes(precision: str) -> float:
    """Bytes an activation takes: FP32 work, or the 16-bit dtype."""
    return 4.0 if precision in FP32_PRECISIONS else 2.0


def _vae_bytes(pipeline: DiffusionPipeline, job: ImageJob) -> float:
    """The VAE decodes in FP32 when the pipeline upcasts it (SDXL in FP16)."""
    return (
        4.0 if pipeline.vae_upcast and job.precision == "16-true" else compute_bytes(job.precision)
    )


def tile_latent(pipeline: DiffusionPipeline) -> int:
    return int(pipeline.component("vae").config.get("sample_size", 512)) // pipeline.vae_scale


@dataclass(frozen=True)
class ImageMemory:
    """Bytes on the GPU at the pipeline's peak stage, by part, and in host memory."""

    parts: dict[str, float]
    stage: str
    host_bytes: float

    @property
    def tensor_bytes(self) -> float:
        return sum(v for k, v in self.parts.items() if k != "overhead")

    @property
    def total_bytes(self) -> float:
        return sum(self.parts.values())

    @property
    def total_gib(self) -> float:
        return self.total_bytes / BYTES_PER_GIB


def stage_activations(pipeline: DiffusionPipeline, job: ImageJob) -> dict[str, float]:
    """Bytes of activations alive at each stage's peak: the text encoders' at ``guided ×
    batch`` prompts, the denoiser's at as many latents (skip connections and one block's
    working set; eager attention's score matrices), the VAE decoder's at full resolution
    (or one tile) with the decoded images in FP32."""
    latent = pipeline.latent_side(job.resolution)
    act = compute_bytes(job.precision)
    den = component_walk(pipeline, "denoiser", latent)
    passes = guided(pipeline, job) * job.batch
    denoise_act = den.activation_elements * passes * act
    if not job.fused_attention:
        denoise_act += 2 * den.score_elements * passes * act
    text_act = max(
        component_walk(pipeline, c.role, latent).activation_elements
        for c in pipeline.text_encoders
    ) * guided(pipeline, job) * job.batch * act  # fmt: skip
    decode_latent = latent
    if job.vae_tiling and latent > tile_latent(pipeline):
        decode_latent = tile_latent(pipeline)
    vae = component_walk(pipeline, "vae", decode_latent)
    decode_act = vae.activation_elements * job.batch * _vae_bytes(pipeline, job)
    decode_act += 3 * job.resolution**2 * job.batch * 4  # the decoded images, in FP32
    return {"text encoding": text_act, "denoising": denoise_act, "VAE decode": decode_act}


@lru_cache(maxsize=4096)
def image_memory(pipeline: DiffusionPipeline, job: ImageJob) -> ImageMemory:
    """Peak GPU memory of a pipeline call: the weights resident at each stage (all of them
    without offload; the running component's with model offload; the largest submodule's with
    sequential offload) plus that stage's activations — the denoiser's at ``guided × batch``
    latents (skip connections and one block's working set; eager attention's score matrices),
    the text encoders', the VAE decoder's at full resolution (or one tile)."""
    from whichgpu.estimate.memory import overhead_bytes

    latent = pipeline.latent_side(job.resolution)
    weights = {
        c.role: c.params * (
            _vae_bytes(pipeline, job) if c.kind == "vae" else bytes_per_weight(c, job)
        )
        for c in pipeline.components
    }  # fmt: skip
    running = {
        "text encoding": tuple(c.role for c in pipeline.text_encoders),
        "denoising": ("denoiser",),
        "VAE decode": ("vae",),
    }
    host = 0.0
    best: tuple[float, str, dict[str, float]] | None = None
    for stage, activations in stage_activations(pipeline, job).items():
        roles = running[stage]
        if job.offload == "none":
            resident = sum(weights.values())
        elif job.offload == "model":
            resident = sum(weights[r] for r in roles)
        else:
            resident = max(
                component_walk(pipeline, r, latent).largest_module
                * (weights[r] / max(pipeline.component(r).params, 1))
                for r in roles
            )
        parts = {"weights": resident, "activations": activations}
        total = resident + activations
        if best is None or total > best[0]:
            best = (total, stage, parts)
    if job.quant is not None and job.quantize_on == "gpu":
        # the pipeline moved to the GPU in 16 bits before quantize_ runs: every weight held
        # at once, the quantised components' in their 16-bit dtype, no activation yet
        sixteen = replace(job, quant=None)
        loading = sum(
            c.params * bytes_per_weight(c, sixteen) if quantised(c, job)
            else weights[c.role]
            for c in pipeline.components
        )  # fmt: skip
        if best is None or loading > best[0]:
            best = (loading, "loading", {"weights": loading, "activations": 0.0})
    assert best is not None
    if job.offload != "none":
        host = sum(weights.values())
    parts = dict(best[2])
    parts["overhead"] = overhead_bytes(sum(parts.values()))
    return ImageMemory(parts, best[1], host)


@dataclass(frozen=True)
class ImageTimes:
    """A pipeline call's ideal seconds (η = 1) by stage, the bound of its denoising step,
    and the seconds spent moving offloaded weights over the host link (not scaled by η)."""

    text_s: float
    step_s: float
    decode_s: float
    steps: int
    bound: str
    transfer_s: float = 0.0
    #: Seconds a step's (and the decode's) memory-bound kernels take at full bandwidth: the
    #: elements its norms, activation functions, residual adds, modulations, resampling and
    #: concatenations read and write (:attr:`~whichgpu.models.diffusion.Walk.
    #: elementwise_elements`). They run apart from the convolutions and GEMMs, so a GPU with
    #: more FLOPs per byte spends more of its step on them (Williams et al., 2009); how many
    #: times their traffic the kernels really move is fitted (``diffusion:passes``, as a
    #: CNN's ``cnn:passes_infer``).
    step_stream_s: float = 0.0
    decode_stream_s: float = 0.0

    @property
    def compute_s(self) -> float:
        return self.text_s + self.steps * self.step_s + self.decode_s


def peak_flops(gpu: GPU, precision: str, fp32_work: bool, conv: bool = False) -> float:
    """FLOP/s a stage's math runs at: 16-bit tensor cores; for FP32 work, the convolutions
    on TF32 tensor cores where the GPU has them (cuDNN's, ``torch.backends.cudnn.allow_tf32``
    is True by default) and the matmuls (linear layers, attention) on the FP32 cores unless
    TF32 is asked for (``tf32``): PyTorch's ``torch.backends.cuda.matmul.allow_tf32`` is
    False by default since 1.12 (``set_float32_matmul_precision("highest")``; its CUDA
    semantics notes, "TensorFloat-32 (TF32) on Ampere (and later) devices"), and neither
    diffusers' pipelines nor its training scripts turn it on (their ``--allow_tf32`` is off
    by default)."""
    from whichgpu.estimate.perf import tensor_tflops

    if not fp32_work:
        return tensor_tflops(gpu, "bf16-true" if precision == "bf16-true" else "16-true") * 1e12
    if conv or precision == "tf32":
        return (gpu.tf32_tensor_dense_tflops or gpu.fp32_tflops) * 1e12
    return gpu.fp32_tflops * 1e12


class FlopCount(Protocol):
    """A forward's FLOPs and their convolutions' part (a :class:`Walk`, a walk's tally)."""

    @property
    def flops(self) -> float: ...

    @property
    def conv_flops(self) -> float: ...


def math_seconds(w: FlopCount, passes: float, gpu: GPU, precision: str, fp32_work: bool) -> float:
    """Seconds of ``passes`` forwards of a walk's math at peak: its convolutions and its
    GEMMs and attention each at the rate :func:`peak_flops` gives them."""
    conv = w.conv_flops * passes / peak_flops(gpu, precision, fp32_work, conv=True)
    rest = (w.flops - w.conv_flops) * passes / peak_flops(gpu, precision, fp32_work)
    return conv + rest


def dequant_s(component: DiffusionComponent, job: ImageJob, gpu: GPU) -> float:
    """The seconds one forward of ``component`` spends turning its quantised weights back
    into 16 bits before the matmuls use them: the loaders quantise the weights only and
    compute in 16 bits (bitsandbytes' ``matmul_4bit`` calls ``dequantize_4bit`` and then
    ``torch.nn.functional.linear`` for any input of more than one row; diffusers' GGUF
    layers call ``dequantize_gguf_tensor`` before ``F.linear``; a float8 weight-only or
    layerwise-cast weight is upcast by ``.to(bfloat16)``): a memory-bound pass that reads
    the stored weight and writes its 16-bit copy, before the matmul reads that copy
    (Williams et al., 2009: bytes over bandwidth). Zero for an unquantised component."""
    if not quantised(component, job):
        return 0.0
    moved = component.params * (bytes_per_weight(component, job) + 2.0)
    return moved / (gpu.memory_bandwidth_gb_per_s * 1e9)


def matmul_weight_bytes(component: DiffusionComponent, job: ImageJob) -> float:
    """Bytes of weights a forward's matmuls read: the 16-bit copy of a quantised weight
    (:func:`dequant_s`), else the weights as loaded."""
    if quantised(component, job):
        return component.params * 2.0
    return component.params * bytes_per_weight(component, job)


def _stage_s(w: Walk, passes: float, gpu: GPU, job: ImageJob, fp32: bool, weight_b: float) -> float:
    compute = math_seconds(w, passes, gpu, job.precision, fp32)
    memory = weight_b / (gpu.memory_bandwidth_gb_per_s * 1e9)
    return max(compute, memory)


@lru_cache(maxsize=4096)
def image_times(pipeline: DiffusionPipeline, job: ImageJob, gpu: GPU) -> ImageTimes:
    """The ideal seconds of one pipeline call of ``job.batch`` images on ``gpu``."""
    latent = pipeline.latent_side(job.resolution)
    fp32 = job.precision in FP32_PRECISIONS
    prompts = guided(pipeline, job) * job.batch
    bandwidth = gpu.memory_bandwidth_gb_per_s * 1e9
    text = 0.0
    for c in pipeline.text_encoders:
        w = component_walk(pipeline, c.role, latent)
        text += _stage_s(w, prompts, gpu, job, fp32, matmul_weight_bytes(c, job))
        text += dequant_s(c, job, gpu)
    den = component_walk(pipeline, "denoiser", latent)
    den_bytes = pipeline.denoiser.params * bytes_per_weight(pipeline.denoiser, job)
    compute = math_seconds(den, prompts, gpu, job.precision, fp32)
    memory = matmul_weight_bytes(pipeline.denoiser, job) / bandwidth
    step = max(compute, memory) + dequant_s(pipeline.denoiser, job, gpu)
    if not job.fused_attention:
        scores = den.score_total * prompts * compute_bytes(job.precision) * EAGER_SCORE_PASSES
        step += scores / bandwidth
    bound = "compute" if compute >= memory else "memory bandwidth"
    vae_fp32 = fp32 or _vae_bytes(pipeline, job) == 4.0
    decode_latent = latent
    tiles = 1.0
    if job.vae_tiling and latent > tile_latent(pipeline):
        tile = tile_latent(pipeline)
        stride = tile * (1 - TILE_OVERLAP)
        tiles = max(1.0, -(-(latent - tile) // stride) + 1) ** 2
        decode_latent = tile
    vae = component_walk(pipeline, "vae", decode_latent)
    vae_c = pipeline.component("vae")
    decode = tiles * _stage_s(vae, job.batch, gpu, job, vae_fp32, vae_c.params * 4.0)
    step_stream = den.elementwise_elements * prompts * compute_bytes(job.precision) / bandwidth
    decode_stream = (
        tiles * vae.elementwise_elements * job.batch * _vae_bytes(pipeline, job) / bandwidth
    )
    transfer = 0.0
    if job.offload != "none":
        link = host_link_gb_per_s(gpu) * 1e9
        moved = sum(c.params * bytes_per_weight(c, job) for c in pipeline.components)
        if job.offload == "sequential":
            moved += den_bytes * (job.steps - 1)
        transfer = moved / link
    return ImageTimes(text, step, decode, job.steps, bound, transfer, step_stream, decode_stream)


#: Images a call when the batch is left open: the largest power of two up to this that
#: fits (diffusers' ``num_images_per_prompt``); batching amortises each step's launches.
MAX_AUTO_IMAGE_BATCH = 8


def fitting_image_job(
    pipeline: DiffusionPipeline, job: ImageJob, capacity_bytes: float, batch_open: bool,
    offload_open: bool, tiling_open: bool,
) -> tuple[ImageJob, list[str]]:  # fmt: skip
    """The job as a skilled user would set what was left open for a GPU of
    ``capacity_bytes``: the largest batch up to :data:`MAX_AUTO_IMAGE_BATCH` that fits
    whole; else, one image with the VAE tiled, then model CPU offload, then sequential
    offload (the order of diffusers' memory guide: cheapest in time first). Returns the
    job and the names of the settings chosen."""

    def fits(j: ImageJob) -> bool:
        return image_memory(pipeline, j).total_bytes <= capacity_bytes

    chosen: list[str] = []
    loading = image_memory(pipeline, replace(job, batch=1))
    if loading.stage == "loading" and loading.total_bytes > capacity_bytes:
        return job, chosen  # the 16-bit pipeline before quantize_: no setting lowers it
    if batch_open:
        batch = MAX_AUTO_IMAGE_BATCH
        while batch > 1 and not fits(replace(job, batch=batch)):
            batch //= 2
        job = replace(job, batch=batch)
        chosen.append("batch")
    if fits(job):
        return job, chosen
    if tiling_open and not job.vae_tiling and fits(replace(job, vae_tiling=True)):
        return replace(job, vae_tiling=True), [*chosen, "vae_tiling"]
    if offload_open:
        for offload in ("model", "sequential"):
            for tiled in (job.vae_tiling, True) if tiling_open else (job.vae_tiling,):
                candidate = replace(job, offload=offload, vae_tiling=tiled)
                if fits(candidate):
                    extra = ["vae_tiling"] if tiled and not job.vae_tiling else []
                    return candidate, [*chosen, "cpu_offload", *extra]
    # nothing fits: the least memory the open settings allow, for the answer to show
    least = replace(
        job,
        offload="sequential" if offload_open else job.offload,
        vae_tiling=True if tiling_open else job.vae_tiling,
    )
    return least, [
        *chosen, *(["cpu_offload"] if offload_open else []),
        *(["vae_tiling"] if tiling_open else []),
    ]  # fmt: skip


def make_image_job(
    pipeline: DiffusionPipeline,
    gpu: GPU | None,
    *,
    resolution: int | None = None,
    steps: int | None = None,
    batch: int | None = None,
    precision: str | None = None,
    quant: str | None = None,
    quantize_on: str | None = None,
    offload: str | None = None,
    vae_tiling: bool | None = None,
) -> ImageJob:
    """An :class:`ImageJob` from user settings; what is left open takes the pipeline's
    defaults (its resolution, steps, dtype: FP16 where the GPU has no BF16 tensor cores, as
    diffusers' docs advise for such cards)."""
    from whichgpu.errors import InvalidInput, Ref

    if precision is not None and precision not in IMAGE_PRECISIONS:
        raise InvalidInput(
            "image_precision",
            field=("precision",),
            precision=precision,
            valid=", ".join(IMAGE_PRECISIONS),
        )
    if quantize_on == "gpu" and quant is None:
        raise InvalidInput("quantize_on_without_quant", field=("quantize_on",),
                           quant=Ref(("quant",)))  # fmt: skip
    chosen = precision or pipeline.default_precision
    no_bf16 = gpu is not None and gpu.bf16_tensor_dense_tflops is None
    if precision is None and chosen == "bf16-true" and no_bf16:
        chosen = "16-true"
    return ImageJob(
        resolution=resolution or pipeline.default_resolution,
        steps=steps or pipeline.default_steps,
        batch=batch or 1,
        precision=chosen,  # type: ignore[arg-type]
        quant=quant,
        quantize_on=quantize_on or "load",  # type: ignore[arg-type]
        offload=offload or "none",  # type: ignore[arg-type]
        vae_tiling=bool(vae_tiling),
    )
