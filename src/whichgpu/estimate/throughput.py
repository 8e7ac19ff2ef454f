"""``estimate``: throughput and time of a job on a GPU (or several), with a range from the
calibration residuals and the bound (compute, memory bandwidth, interconnect).

The user's job is expressed as a measurement would be (regime, model, precision, batch,
sequence) and goes through the same roofline and fitted efficiencies as the calibration set
(:mod:`whichgpu.estimate.efficiency`), so what is validated is what users get.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

import msgspec

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.errors import InvalidInput, Ref
from whichgpu.estimate.collectives import LAYER_SPLIT_HARNESSES
from whichgpu.estimate.efficiency import Observation, observe, serve_prefill_ideal_s
from whichgpu.estimate.efficiency_model import load_efficiency
from whichgpu.estimate.perf import check_math_unit, tensor_tflops, train_flops_per_token
from whichgpu.frozen import evolve
from whichgpu.job import Attention, Checkpointing, Job, Math, MemoryFormat, Precision, Task
from whichgpu.models.arch import ModelArch

if TYPE_CHECKING:
    from whichgpu.estimate.imaging import ImageEstimate, ImageTrainEstimate
    from whichgpu.estimate.serving_types import ServingPlan
    from whichgpu.estimate.training import Step
    from whichgpu.notes import Note

#: The harness a user's job is assumed to run like, per regime: the best-covered,
#: well-tuned software of each kind in the calibration set.
DEFAULT_HARNESS = {
    "llm-train": "mosaicml-llmfoundry",
    "llm-prefill": "trtllm",
    "llm-decode": "llamacpp",
    "llm-serve": "trtllm",
    "cnn-train": "nvidia-dle-pytorch",
    "cnn-infer": "nvidia-dle-pytorch",
    "transformer-train": "lambda-dle-v1",
    "render": "blender-opendata",
    "fp64": "torch-matmul",
}


class Rate(msgspec.Struct, frozen=True):
    """A rate and its 10th–90th band, in ``unit`` (a C-built record: the layout search makes
    hundreds a request)."""

    value: float
    unit: str
    low: float
    high: float


def likely_rate(
    value: float,
    unit: str,
    regime: str,
    provenance: str = "",
    band: tuple[float, float] | None = None,
) -> Rate:
    """``value`` and its likely band: the regime's held-out error of the efficiency fit (its
    10th and 90th percentiles, ``catalog/data/efficiency.csv``; all regimes' where the regime
    has none), the one band every estimate states (estimate, fit and recommend); widened,
    where the estimate rests on a factor nobody measured for its GPU and work
    (:func:`~whichgpu.estimate.efficiency_model.extrapolated`), by how far a regime's own
    factor sits from an architecture's shared one (:func:`~whichgpu.estimate.
    efficiency_model.inherited_band`); ``band``: the held-out errors of a factor the
    estimate also rests on, where they are wider; and the early builds' errors where the
    engine release's MLA kernels are as old (:func:`~whichgpu.estimate.efficiency_model.
    early_build_band`), in place of the inherited widening."""
    low_ratio, high_err, high_ratio, low_err = _band_terms(regime, provenance, band)
    return Rate(value, unit, value * low_ratio / (1 + high_err), value * high_ratio / (1 + low_err))


@lru_cache(maxsize=4096)
def _band_terms(
    regime: str, provenance: str, band: tuple[float, float] | None
) -> tuple[float, float, float, float]:
    """:func:`likely_rate`'s terms, once per (regime, provenance, band): the layout search
    states hundreds of rates a request, of few provenances."""
    from whichgpu.estimate.efficiency_model import (
        early_build_band,
        extrapolated,
        inherited_band,
        load_efficiency,
    )

    _model, spread = load_efficiency()
    low_err, high_err = spread.get(regime, spread["*"])
    early = early_build_band(provenance)
    for wider in (band, early):
        if wider is not None:
            low_err, high_err = min(low_err, wider[0]), max(high_err, wider[1])
    # the early builds' errors were read against this same estimate, its inherited factors
    # in it: they are that range, not one more on top of it
    inherited = extrapolated(provenance) and early is None
    low_ratio, high_ratio = inherited_band() if inherited else (1.0, 1.0)
    return low_ratio, high_err, high_ratio, low_err


class ThroughputEstimate(msgspec.Struct, frozen=True):
    """One job's estimate on ``count`` × ``gpu``: rate, bound, efficiency and provenance."""

    gpu: GPU
    count: int
    regime: str
    harness: str
    throughput: Rate
    bound: str
    mfu: float | None
    time_s: float | None
    ttft_s: float | None
    tokens_per_s_per_sequence: float | None
    efficiency: float
    provenance: str
    #: Training: one optimizer step, term by term (compute, bubble, communication, offload)
    step: Step | None = None
    #: Training: the job as estimated (its layout, micro-batch and accumulation)
    job: Job | None = None
    #: Serving: the planner's replicas, capacity under the targets and operating point
    serving: ServingPlan | None = None
    #: Serving: the requests per second asked for
    demand_rps: float | None = None
    #: Image generation: the pipeline's memory, per-call and per-step times
    image: ImageEstimate | None = None
    #: Fine-tuning an image pipeline's denoiser: memory, step time, what trains
    image_training: ImageTrainEstimate | None = None
    #: A model's job: its memory per GPU at the peak, and whether the GPU holds it
    memory_gib: float | None = None
    fits: bool | None = None
    #: What was chosen where the request left it open, and what the reader must know
    notes: tuple[Note, ...] = ()


def regime_of(arch: ModelArch, job: Job, count: int = 1) -> str:
    """The calibrated regime a job runs like (vision models: images per second, calibrated
    on ResNet-50 and counted in their own FLOPs). Inference on several GPUs is tensor-parallel
    serving (TensorRT-LLM's harness): llama.cpp's single-stream decode splits layers, so its
    GPUs work in turn and are no faster than one."""
    if arch.kind in ("cnn", "vit"):  # images per second, whatever the network
        return "cnn-train" if job.training else "cnn-infer"
    if arch.kind == "encoder":  # trained on sequences; at inference one forward pass each
        return "transformer-train" if job.training else "llm-prefill"
    if job.training:
        return "llm-train"
    return "llm-serve" if job.batch > 1 or count > 1 else "llm-decode"


def job_size(
    arch: ModelArch,
    job: Job,
    tokens: float | None = None,
    images: float | None = None,
    epochs: float = 1.0,
) -> float | None:
    """The job size in the throughput's unit: tokens (LLMs), sequences (encoders trained on
    ``job.seq``-token sequences: tokens ÷ seq), images (CNNs, ViTs), over ``epochs`` passes
    of training (a data set of 1e8 tokens read 3 times is 3e8). A size in the other unit is
    refused: tokens for an image model, images for a language model."""
    images_model = arch.kind in ("cnn", "vit")
    if tokens is not None and images_model:
        raise InvalidInput(
            "images_model",
            field=("tokens",),
            model=arch.name,
            images=Ref(("images",)),
            tokens=Ref(("tokens",)),
        )
    if images is not None and not images_model:
        raise InvalidInput(
            "tokens_model",
            field=("images",),
            model=arch.name,
            images=Ref(("images",)),
            tokens=Ref(("tokens",)),
        )
    passes = epochs if job.training else 1.0
    if tokens is not None and arch.kind == "encoder" and job.training:
        return tokens / job.seq * passes
    size = tokens if tokens is not None else images
    return None if size is None else size * passes


def _bench(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    regime: str,
    harness: str,
    unit: str,
    seq: int | None,
    generate: int | None,
) -> Benchmark:
    precision = job.quant or job.math_precision
    return Benchmark(
        id="user-job",
        gpu=gpu.id,
        gpus=count,
        regime=regime,  # type: ignore[arg-type]
        model=arch.id,
        precision=precision,
        batch=job.batch,
        seq=seq,
        generate=generate,
        metric="throughput",
        value=1.0,
        unit=unit,
        harness=harness,
        nvlink_bridge=job.nvlink_bridge,
        kv_dtype=job.kv_dtype,
        attention_dp=job.attention_dp,
        moe_kernels=job.moe_kernels,
        memory_format=job.memory_format or _cnn_layout(arch, job),
        source="whichgpu",
        as_of="undated",
    )


def _cnn_layout(arch: ModelArch, job: Job) -> MemoryFormat | None:
    """A CNN's training layout where the job leaves it open: its recipe's
    (:func:`~whichgpu.job.recipes.recipe_memory_format`), as a planned job takes it."""
    if arch.kind != "cnn" or not job.training:
        return None
    from whichgpu.job.recipes import recipe_memory_format

    return recipe_memory_format(job)


def estimate_image_job(
    pipeline_name: str,
    gpu: GPU,
    task: str,
    count: int = 1,
    images: float | None = None,
    **settings: object,
) -> ThroughputEstimate:
    """``estimate --task image|image-lora|image-finetune``: a pipeline's images a second on
    ``count`` × ``gpu`` (each GPU its own pipeline: images generated apart, or data-parallel
    training), the range from the regime's leave-one-out errors, the time for ``images``,
    and what was chosen where the settings were left open."""
    from whichgpu.estimate.imaging import plan_image, plan_image_training
    from whichgpu.models.pipelines import find_pipeline

    pipeline = find_pipeline(pipeline_name)
    image = training = None
    if task == "image":
        image = plan_image(pipeline, gpu, count, dict(settings))
        est: ImageEstimate | ImageTrainEstimate = image
    else:
        method = "full" if task == "image-finetune" else "lora"
        training = plan_image_training(pipeline, gpu, count, method, dict(settings))
        est = training
    rate = est.images_per_s
    return ThroughputEstimate(
        gpu=gpu,
        count=count,
        regime="diffusion-infer" if image is not None else "diffusion-train",
        harness=est.harness,
        # the generation fit's band for both (no fine-tuning run has its own)
        throughput=likely_rate(rate, "images/s", "diffusion-infer"),
        bound=est.bound,
        mfu=None,
        time_s=None if images is None else images / rate,
        ttft_s=None,
        tokens_per_s_per_sequence=None,
        efficiency=est.efficiency,
        provenance=est.provenance,
        image=image,
        image_training=training,
    )


def _roofline(
    arch: ModelArch, job: Job | None, gpu: GPU, bench: Benchmark
) -> tuple[float, str, float, str]:
    """η, its provenance, the calibrated seconds per unit and the bound of a measurement on
    its GPUs. ``job``: a training job's own work (LoRA skips the frozen weights' gradients,
    recomputation adds a forward); the benchmark record only picks the calibrated η."""
    model, _spread = load_efficiency()
    obs = observe(bench, gpu, arch, job)
    if obs is None:
        raise InvalidInput("no_throughput_model", regime=bench.regime, gpu=arch.id)
    eta, provenance = model.of(obs)
    return eta, provenance, model.seconds_per_unit(obs), obs.bound


def _model_recompute_layers(arch: ModelArch, job: Job) -> int:
    """The layers of the whole model ``job``'s partial recomputation recomputes
    (:attr:`~whichgpu.job.Job.recompute_layers` of each of the pipeline's chunks), 0 for
    every layer or none."""
    if job.checkpointing != "full" or not job.recompute_layers:
        return 0
    from whichgpu.estimate.activations import recomputed_share

    return max(1, round(recomputed_share(arch, job) * arch.n_layers))


@lru_cache(maxsize=4096)
def _training_compute(
    arch: ModelArch,
    gpu: GPU,
    regime: str,
    harness: str,
    unit: str,
    seq: int | None,
    task: Task,
    checkpointing: Checkpointing,
    precision: Precision,
    math: Math | None,
    quant: str | None,
    batch: int,
    attention: Attention,
    recompute_layers: int = 0,
    memory_format: MemoryFormat | None = None,
) -> tuple[float, str, float, str]:
    """:func:`_roofline` of one GPU's training compute, once per (model, GPU, work): the
    layouts the recommender compares share it, and differ only in what spreading costs.
    ``recompute_layers``: the model's layers partial recomputation recomputes (a chunk's
    times the chunks: one pipeline stage here); ``memory_format``: a CNN's activations'."""
    job = Job(
        task=task,
        checkpointing=checkpointing,
        recompute_layers=recompute_layers,
        precision=precision,
        math=math,
        quant=quant,
        batch=batch,
        seq=seq or Job.seq,
        attention=attention,
        memory_format=memory_format,
    )
    return _roofline(arch, job, gpu, _bench(arch, job, gpu, 1, regime, harness, unit, seq, None))


def check_runnable(arch: ModelArch, job: Job, gpu: GPU) -> None:
    """What ``job`` must satisfy to be estimated on ``gpu``: a model, sequences its positions
    take, a layout that splits it, and the tensor-core format its precision needs."""
    check_model_runnable(arch, job)
    check_math_unit(gpu, job.math_precision)


def check_model_runnable(arch: ModelArch, job: Job) -> None:
    """:func:`check_runnable`'s checks of the model and the job, whatever the GPU."""
    if not arch.id:
        raise InvalidInput(
            "estimate_needs_model", field=("model",), model=Ref(("model",)), params=Ref(("params",))
        )
    from whichgpu.estimate.parallel import check_layout
    from whichgpu.job import check_lengths

    check_lengths(arch, job)
    check_layout(arch, job)


def estimate_throughput(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int = 1,
    harness: str | None = None,
    work: float | None = None,
    framework: str | None = None,
) -> ThroughputEstimate:
    """Throughput of ``job`` on ``count`` × ``gpu``; ``work`` is the job size in the
    throughput's unit (tokens, images, generated tokens) for a time estimate; a training
    job run with ``framework`` takes that framework's fitted speed factor, where it has one
    (:mod:`whichgpu.estimate.published_factors`)."""
    check_runnable(arch, job, gpu)
    return checked_throughput(arch, job, gpu, count, harness, work, framework)


def checked_throughput(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int = 1,
    harness: str | None = None,
    work: float | None = None,
    framework: str | None = None,
) -> ThroughputEstimate:
    """:func:`estimate_throughput` of a job :func:`check_runnable` has passed (the layout
    search checks its model, sequence and GPU once, and builds only valid layouts)."""
    if job.training and job.pp > 1 and not job.vp:
        from whichgpu.estimate.pipeline import virtual_stages

        job = replace(job, vp=virtual_stages(arch, job))  # the chunks chosen, shown
    model, _spread = load_efficiency()
    regime = regime_of(arch, job, count)
    harness = harness or DEFAULT_HARNESS[regime]
    seq: int | None
    if regime in ("cnn-train", "cnn-infer"):
        unit, seq, generate = "images/s", None, None
    elif regime == "transformer-train":
        unit, seq, generate = "sequences/s", job.seq, None
    elif regime == "llm-train":
        unit, seq, generate = "tokens/s", job.seq, None
    else:
        unit, seq, generate = "tokens/s", job.prompt or job.seq, max(job.generate, 1)
    training = regime in ("llm-train", "transformer-train", "cnn-train")
    # training: one GPU's compute, then what spreading the step over the GPUs costs
    # (whichgpu.estimate.training); inference: the calibrated multi-GPU serving rate
    if training:
        eta, provenance, seconds, bound = _training_compute(
            arch, gpu, regime, harness, unit, seq, job.task, job.checkpointing,
            job.precision, job.math, job.quant, job.batch, job.attention,
            _model_recompute_layers(arch, job), job.memory_format,
        )  # fmt: skip
    else:
        bench = _bench(arch, job, gpu, count, regime, harness, unit, seq, generate)
        eta, provenance, seconds, bound = _roofline(arch, None, gpu, bench)
    rate = 1 / seconds
    step = None
    band = None  # a factor's held-out range wider than the regime's (published_factors)
    spread_job = job
    if training:
        from whichgpu.estimate.training import step_time

        per_micro = float(job.batch) * (seq or 1) if unit == "tokens/s" else float(job.batch)
        spread_job = job if job.gpus == count else replace(job, gpus=count)
        memory = None
        if job.optimizer == "paged-adamw-8bit" or job.activation_offload:
            from whichgpu.estimate.memory import memory_of

            memory = memory_of(arch, spread_job)
        if job.compiled and regime == "llm-train":
            # fused elementwise kernels: a shorter compute step (its communication unchanged)
            from whichgpu.estimate.compile_speed import compile_speedup, width_constant

            faster = compile_speedup(arch)
            seconds /= faster
            provenance += (
                f"; × {faster:.2f} for torch.compile, fitted on "
                f"{width_constant()[1]} sources' paired runs"
            )
        step = step_time(arch, spread_job, gpu, per_micro * seconds, memory)
        units = per_micro * spread_job.dp * max(spread_job.grad_accum, 1)
        rate = units / step.seconds
        if regime == "llm-train":  # the factors fitted on published training runs
            from whichgpu.estimate.published_factors import training_factors

            rate, step, provenance, band = training_factors(
                gpu, job, framework, rate, step, provenance, arch.n_layers
            )
        if step.bound == "interconnect":
            bound = "interconnect"
    throughput = likely_rate(rate, unit, regime, provenance, band)
    mfu = None
    if regime == "llm-train":
        peak = tensor_tflops(gpu, job.math_precision) * 1e12 * count
        mfu = rate * train_flops_per_token(arch, job, seq or 2048) / peak
    ttft = per_sequence = None
    if regime in ("llm-decode", "llm-serve"):
        # a request's first token: its prompt's prefill alone
        prefill_obs = _prefill(arch, job, gpu, count, DEFAULT_HARNESS["llm-prefill"], 1)
        if prefill_obs is not None:
            ttft = model.seconds_per_unit(prefill_obs)
            ttft *= cached_share(arch, job, gpu, count, DEFAULT_HARNESS["llm-prefill"], ttft)
        per_sequence = rate / job.batch
    time_s = work / rate if work else None
    return ThroughputEstimate(
        gpu=gpu,
        count=count,
        regime=regime,
        harness=harness,
        throughput=throughput,
        bound=bound,
        mfu=mfu,
        time_s=time_s,
        ttft_s=ttft,
        tokens_per_s_per_sequence=per_sequence,
        efficiency=eta,
        provenance=provenance,
        step=step,
        job=spread_job if training else None,
    )


@lru_cache(maxsize=4096)
def prefill_seconds(
    arch: ModelArch, job: Job, gpu: GPU, count: int, harness: str, prompts: int = 1
) -> float:
    """One prompt's calibrated prefill (``job.prompt`` tokens, one request) on ``count`` ×
    ``gpu``: the same at every batch of a serving curve, computed once per curve; or, with
    ``prompts``, a prompt's share of ``prompts`` prefilled together in one pass (a static
    batch's: the pass takes ``prompts`` times that). Memoised: an engine's curves on one
    GPU ask it again (a full-catalog serving recommend: 319 asks, 181 distinct)."""
    model, _spread = load_efficiency()
    prefill_obs = _prefill(arch, job, gpu, count, harness, prompts)
    if prefill_obs is None:
        raise InvalidInput("no_throughput_model", regime="llm-prefill", gpu=gpu.name)
    return model.seconds_per_unit(prefill_obs)


def cached_share(
    arch: ModelArch, job: Job, gpu: GPU, count: int, harness: str, full_s: float
) -> float:
    """The share of a prompt's prefill time (``full_s``) left when its shared prefix is in
    the engine's cache: its FLOPs' share (:func:`~whichgpu.estimate.perf.cached_prefill_share`),
    and no less than a prefill of the other tokens alone takes (its weights are read, its
    kernels launched, however few the tokens); 1 without a shared prefix."""
    if not job.shared_prefix or full_s <= 0:
        return 1.0
    from whichgpu.estimate.perf import cached_prefill_share

    rest = (job.prompt or job.seq) - job.shared_prefix
    alone = 0.0
    if rest > 0:
        alone = prefill_seconds(arch, evolve(job, prompt=rest, shared_prefix=0), gpu, count,
                                harness)  # fmt: skip
    return min(1.0, max(cached_prefill_share(arch, job), alone / full_s))


def _prefill(
    arch: ModelArch, job: Job, gpu: GPU, count: int, harness: str, prompts: int
) -> Observation | None:
    """A prefill of ``job``'s prompt as a measurement (one prompt's share of a pass of
    ``prompts``), or None where no roofline describes it."""
    one = evolve(job, batch=prompts)
    prefill = _bench(arch, one, gpu, count, "llm-prefill", harness, "ms", job.prompt or job.seq, 1)
    return observe(prefill, gpu, arch)


@lru_cache(maxsize=8192)
def serving_seconds(
    arch: ModelArch, job: Job, gpu: GPU, count: int, harness: str, prefill_s: float
) -> tuple[float, float, str, float]:
    """A served model's calibrated times on ``count`` × ``gpu`` with ``job.batch`` sequences
    in flight, ``job.prompt`` tokens in and ``job.generate`` out, given one prompt's prefill
    (:func:`prefill_seconds`): seconds per output token over a whole batch cycle (its
    prompts' prefills included, as the fitted maximum-load runs measure it) and the η of the
    cycle. llama.cpp's harness is calibrated on decode steps and prefills apart: its cycle is
    ``B`` prefills and ``O`` decode steps of ``B`` sequences. Then the roofline's bound at
    that batch, and the prefill time a request takes inside the fitted cycle (its ideal
    prefill over the cycle's η), which a decode step is what is left of the cycle without."""
    prompt, out = job.prompt or job.seq, max(job.generate, 1)
    if harness in LAYER_SPLIT_HARNESSES:
        decode = _bench(arch, job, gpu, count, "llm-decode", harness, "tokens/s", prompt, out)
        eta, _provenance, per_token_s, bound = _roofline(arch, None, gpu, decode)
        step_s = per_token_s * job.batch
        cycle_s = job.batch * prefill_s + out * step_s
        return cycle_s / (job.batch * out), eta, bound, prefill_s
    serve = _bench(arch, job, gpu, count, "llm-serve", harness, "tokens/s", prompt, out)
    eta, _provenance, per_token_s, bound = _roofline(arch, None, gpu, serve)
    in_cycle_s = serve_prefill_ideal_s(serve, gpu, arch) / eta
    return per_token_s, eta, bound, in_cycle_s
