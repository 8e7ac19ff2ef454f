"""What a user asks each command, as typed request types: the one declaration of every field
(kind, range or choices, default, help, CLI flag) that the CLI's options, the workload files,
the web form and the HTTP API's schema are all built from (:mod:`whichgpu.inputs`).

* :class:`FitRequest` — ``whichgpu fit`` / ``POST /api/v1/fit``
* :class:`EstimateRequest` — ``whichgpu estimate`` / ``POST /api/v1/estimate``
* :class:`Workload` of :class:`Component` and :class:`Constraints`, ranked by a
  :class:`Ranking` — ``whichgpu recommend`` / workload files / ``POST /api/v1/recommend``
* :class:`~whichgpu.inputs.mig_requests.ServiceRequest` and
  :class:`~whichgpu.inputs.mig_requests.MigOptions` — ``whichgpu mig`` / ``POST /api/v1/mig``
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from whichgpu.errors import InvalidInput, Ref
from whichgpu.i18n import N_
from whichgpu.inputs import Input, given
from whichgpu.inputs.mig_requests import MigOptions, ServiceRequest
from whichgpu.inputs.request_fields import (
    ACCEPTANCE,
    ACTIVATION_OFFLOAD,
    ATTENTION,
    BATCH,
    CACHE_LATENTS,
    CHOSEN_BATCH,
    CHOSEN_CHECKPOINTING,
    CHOSEN_CP,
    CHOSEN_PRECISION,
    CHOSEN_PRECISION_IMAGE,
    CHUNKED_LOSS,
    COMPILED,
    CP,
    CPU_OFFLOAD,
    DRAFT_TOKENS,
    EPOCHS,
    FRAMES,
    FRAMEWORK,
    GENERATE,
    GLOBAL_BATCH,
    GPU_COUNT,
    GPU_NAME,
    GPUS_PER_INSTANCE,
    HOURS,
    IMAGES,
    LORA_RANK,
    LORA_TARGETS,
    MARKET_NAMES,
    MEMORY_FORMAT,
    MODEL,
    NETWORK,
    NETWORK_GBIT,
    NVLINK_BRIDGE,
    OFFLOAD,
    OPTIMIZER,
    OPTIMIZER_IN_BACKWARD,
    PACKING,
    PARAMS,
    PERCENTILE,
    PP,
    PROMPT,
    QUANT,
    QUANTIZE_ON,
    RECOMPUTE_LAYERS,
    REQUEST_RATE,
    RESOLUTION,
    SAMPLES,
    SCENE,
    SEQ,
    SERVE_ENGINE,
    SERVE_KV_DTYPE,
    SERVE_LAYOUT,
    SERVE_LENGTHS,
    SERVICES,
    SHARED_PREFIX,
    SPECULATIVE,
    STEPS,
    TFLOP,
    TOKENS,
    TP,
    TP_OVERLAP,
    TPOT,
    TTFT,
    VAE_TILING,
    VP,
    ZERO,
)
from whichgpu.inputs.request_fields import DEFAULT_MARKETS as DEFAULT_MARKETS
from whichgpu.inputs.request_fields import MARKETS as MARKETS
from whichgpu.inputs.request_fields import QUANTS as QUANTS
from whichgpu.job import (
    TASKS,
    Checkpointing,
    KvDtype,
    Runtime,
)
from whichgpu.job.length_presets import DEFAULT_GENERATE
from whichgpu.job.recipes import default_precision
from whichgpu.models.arch import ModelArch

Kind = Literal[
    "train", "finetune", "lora", "qlora", "inference", "image", "image-lora", "image-finetune",
    "render", "fp64",
]  # fmt: skip
#: Image generation and the fine-tuning of an image pipeline's denoiser
IMAGE_KINDS: tuple[str, ...] = ("image", "image-lora", "image-finetune")
#: The settings only image jobs read
IMAGE_FIELDS: tuple[str, ...] = ("resolution", "steps", "cpu_offload", "vae_tiling",
                                 "cache_latents")  # fmt: skip
Objective = Literal["cost", "time", "value"]
Mode = Literal["rent", "buy"]
Capability = Literal["rt", "display", "ecc", "fp64", "nvlink", "mig", "nvenc", "nvdec", "cuda"]
CatalogName = Literal["full", "article"]

KINDS: tuple[str, ...] = get_args(Kind)
OBJECTIVES: tuple[str, ...] = get_args(Objective)
MODES: tuple[str, ...] = get_args(Mode)
CAPABILITIES: tuple[str, ...] = get_args(Capability)
CATALOGS: tuple[str, ...] = get_args(CatalogName)
CONFIDENCES: tuple[str, ...] = ("likely", "point")

#: Samples a rendered frame takes when the user does not say: Blender's benchmark scenes
#: render at this order (its score is samples per minute over those scenes).
DEFAULT_SAMPLES_PER_FRAME = 1024

# -- how a training job is run: shared by fit, estimate and recommend ---------------------


@dataclass(frozen=True, kw_only=True)
class TrainingSettings:
    """How a training job runs: a framework's recipe, and the settings that override it
    (None: the recipe's, else PyTorch's own default)."""

    framework: str | None = given(None, FRAMEWORK)
    optimizer: str | None = given(None, OPTIMIZER)
    lora_rank: int | None = given(None, LORA_RANK)
    lora_targets: str | None = given(None, LORA_TARGETS)
    global_batch: int | None = given(None, GLOBAL_BATCH)
    optimizer_in_backward: bool | None = given(None, OPTIMIZER_IN_BACKWARD)
    offload: str | None = given(None, OFFLOAD)
    activation_offload: bool | None = given(None, ACTIVATION_OFFLOAD)
    tp_overlap: bool | None = given(None, TP_OVERLAP)
    chunked_loss: bool | None = given(None, CHUNKED_LOSS)
    compiled: bool | None = given(None, COMPILED)
    network: str | None = given(None, NETWORK)
    network_gbit: float | None = given(None, NETWORK_GBIT)
    attention: str | None = given(None, ATTENTION)
    vp: int | None = given(None, VP)
    recompute_layers: int | None = given(None, RECOMPUTE_LAYERS)
    nvlink_bridge: bool | None = given(None, NVLINK_BRIDGE)
    quantize_on: str | None = given(None, QUANTIZE_ON)
    packing: bool | None = given(None, PACKING)
    memory_format: str | None = given(None, MEMORY_FORMAT)

    def settings(self) -> dict[str, Any]:
        """These fields, for :func:`~whichgpu.inputs.job_input.make_job` (None: left to the
        recipe)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(TrainingSettings)}

    def hardware(self) -> dict[str, Any]:
        """The fields that apply to any job, trained or served (the GPUs' links, where
        quantised weights are made), for :func:`~whichgpu.inputs.job_input.make_job`."""
        return {"nvlink_bridge": self.nvlink_bridge, "quantize_on": self.quantize_on}


# -- fit -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FitRequest(TrainingSettings):
    """Will it fit? A model's job, and the GPU you have in mind."""

    model: str | None = given(None, MODEL)
    params: str | None = given(None, PARAMS)
    task: str = given(
        "inference",
        Input(
            "choice",
            N_("inference, train, finetune, lora, qlora, image, image-lora or image-finetune."),
            choices=(*TASKS, *IMAGE_KINDS),
        ),
    )
    precision: str | None = given(None, CHOSEN_PRECISION)
    runtime: str | None = given(
        None,
        Input(
            "choice",
            N_("Training runtime: torch, deepspeed or megatron (default: the framework's, "
               "else torch)."),
            choices=get_args(Runtime),
        ),
    )  # fmt: skip
    quant: str | None = given(None, QUANT)
    batch: int | None = given(
        None,
        replace(
            BATCH,
            help=N_(
                "Sequences per GPU, the micro-batch (default: chosen per GPU, the largest that "
                "fits of up to the framework's or the HF Trainer's 8)."
            ),
        ),
    )
    seq: int | None = given(
        None,
        replace(SEQ, help=N_("Tokens per sequence (default: the framework's, else 2048).")),
    )
    prompt: int = given(0, PROMPT)
    generate: int = given(0, GENERATE)
    checkpointing: bool | None = given(None, CHOSEN_CHECKPOINTING)
    recompute: str | None = given(
        None,
        Input(
            "choice",
            N_("Activation recomputation: none, selective or full."),
            choices=get_args(Checkpointing),
        ),
    )
    attention: str = given("sdpa", ATTENTION)
    zero: int | None = given(None, ZERO)
    tp: int = given(1, TP)
    pp: int = given(1, PP)
    cp: int = given(1, CP)
    gpus: int = given(1, Input("int", N_("GPUs the job runs on."), low=1, high=100_000))
    kv_dtype: str = given(
        "auto", Input("choice", N_("KV cache: auto, fp16, bf16 or fp8."), choices=get_args(KvDtype))
    )
    resolution: int | None = given(None, RESOLUTION)
    steps: int | None = given(None, STEPS)
    cpu_offload: str | None = given(None, CPU_OFFLOAD)
    vae_tiling: bool | None = given(None, VAE_TILING)
    cache_latents: bool | None = given(None, CACHE_LATENTS)
    gpu: str | None = given(None, GPU_NAME)
    gpu_memory_utilization: float | None = given(
        None,
        Input(
            "number",
            N_("Serving: vLLM's memory fraction; prints concurrent sequences."),
            low=1e-3,
            high=1.0,
        ),
    )

    def job_fields(self) -> dict[str, Any]:
        """The fields of the :class:`~whichgpu.job.Job` (checkpointing as a mode)."""
        skip = {"model", "params", "gpu", "gpu_memory_utilization", "checkpointing", "recompute",
                *IMAGE_FIELDS}  # fmt: skip
        values = {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in skip
        }
        given = None if self.checkpointing is None else ("full" if self.checkpointing else "none")
        if given is not None and self.recompute is not None and self.recompute != given:
            raise InvalidInput(
                "recompute_contradicts",
                field=("recompute",),
                checkpointing=Ref(("checkpointing",)),
                recompute=Ref(("recompute",)),
                given=given,
                mode=self.recompute,
            )
        values["checkpointing"] = self.recompute or given
        values["precision"] = default_precision(self.precision, self.task, self.framework)
        return values


# -- estimate ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EstimateRequest(TrainingSettings):
    """How fast, how long? A model's job (or render/FP64 work) on a GPU, and its size."""

    model: str | None = given(None, MODEL)
    params: str | None = given(None, PARAMS)
    task: str = given(
        "inference",
        Input(
            "choice",
            N_(
                "inference, train, finetune, lora, qlora, image, image-lora, image-finetune, "
                "render or fp64."
            ),
            choices=KINDS,
        ),
    )
    gpu: str = given("a100", replace(GPU_NAME, help=N_("The GPU.")))
    count: int = given(1, GPU_COUNT)
    gpus_per_instance: int | None = given(None, GPUS_PER_INSTANCE)
    precision: str | None = given(None, CHOSEN_PRECISION_IMAGE)
    quant: str | None = given(None, QUANT)
    batch: int | None = given(None, CHOSEN_BATCH)
    seq: int | None = given(
        None,
        replace(
            SEQ,
            help=N_(
                "Tokens per sequence, training or prompt (default: the framework's, else 2048)."
            ),
        ),
    )
    prompt: int = given(0, PROMPT)
    generate: int = given(DEFAULT_GENERATE, GENERATE)
    shared_prefix: int = given(0, SHARED_PREFIX)
    speculative: str | None = given(None, SPECULATIVE)
    layout: str | None = given(None, SERVE_LAYOUT)
    draft_tokens: int | None = given(None, DRAFT_TOKENS)
    acceptance: float | None = given(None, ACCEPTANCE)
    lengths: str | None = given(None, SERVE_LENGTHS)
    kv_dtype: str = given("auto", SERVE_KV_DTYPE)
    checkpointing: bool | None = given(None, CHOSEN_CHECKPOINTING)
    tp: int | None = given(None, replace(TP, help=N_("Tensor-parallel degree (default: chosen).")))
    pp: int | None = given(
        None, replace(PP, help=N_("Pipeline-parallel degree (default: chosen)."))
    )
    cp: int | None = given(None, CHOSEN_CP)
    tokens: float | None = given(
        None, replace(TOKENS, help=N_("Job size: tokens to train on or to generate."))
    )
    images: float | None = given(None, replace(IMAGES, help=N_("Job size: images.")))
    epochs: float | None = given(None, EPOCHS)  # (1 pass where a size is given)
    frames: float | None = given(None, FRAMES)
    samples_per_frame: int = given(DEFAULT_SAMPLES_PER_FRAME, SAMPLES)
    scene_gib: float | None = given(None, SCENE)
    tflop: float | None = given(None, replace(TFLOP, help=N_("FP64: work in TFLOP.")))
    resolution: int | None = given(None, RESOLUTION)
    steps: int | None = given(None, STEPS)
    cpu_offload: str | None = given(None, CPU_OFFLOAD)
    vae_tiling: bool | None = given(None, VAE_TILING)
    cache_latents: bool | None = given(None, CACHE_LATENTS)
    engine: str | None = given(None, SERVE_ENGINE)
    request_rate: float | None = given(None, REQUEST_RATE)
    ttft: float | None = given(None, TTFT)
    tpot: float | None = given(None, TPOT)
    percentile: str = given("p50", PERCENTILE)

    def serves(self, model_kind: str) -> bool:
        """Inference of a ``model_kind`` model sized by the serving planner
        (:func:`planned_service`)."""
        return planned_service(self.task, self.engine, self.request_rate, self.ttft, self.tpot,
                               self.tokens, self.batch, self.generate, model_kind)  # fmt: skip

    @property
    def uses_model(self) -> bool:
        """A language or vision model (:class:`~whichgpu.models.arch.ModelArch`); image
        generation names a pipeline instead."""
        return self.task not in ("render", "fp64", *IMAGE_KINDS)


# -- recommend -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Component(TrainingSettings):
    """One piece of the workload. Job size: ``tokens`` (train on, or generate), ``images`` ×
    ``epochs``, ``frames`` (render), ``tflop`` (FP64 work) or ``hours`` of use (serving at
    ``request_rate`` requests/s, or interactive work)."""

    kind: str = given(
        dataclasses.MISSING,
        Input(
            "choice",
            N_(
                "train, finetune, lora, qlora, inference, image, image-lora, image-finetune, "
                "render or fp64."
            ),
            choices=KINDS,
            flag="task",
        ),
    )
    name: str = given("", Input("text", N_("A name for this component.")))
    model: str | None = given(None, MODEL)
    params: str | None = given(None, PARAMS)
    #: None: the framework's, else as whichgpu.job.recipes.default_precision sets it
    precision: str | None = given(None, CHOSEN_PRECISION)
    quant: str | None = given(None, QUANT)
    #: None: chosen per candidate (training: the largest micro-batch that fits, up to a
    #: recipe's; serving at a request rate: the concurrency that sustains it; else one
    #: sequence); see whichgpu.plan.settings
    batch: int | None = given(None, CHOSEN_BATCH)
    seq: int | None = given(None, SEQ)
    #: 0: the sequence given, else 512 tokens (whichgpu.job.default_prompt)
    prompt: int = given(0, PROMPT)
    generate: int = given(DEFAULT_GENERATE, GENERATE)
    shared_prefix: int = given(0, SHARED_PREFIX)
    speculative: str | None = given(None, SPECULATIVE)
    layout: str | None = given(None, SERVE_LAYOUT)
    draft_tokens: int | None = given(None, DRAFT_TOKENS)
    acceptance: float | None = given(None, ACCEPTANCE)
    lengths: str | None = given(None, SERVE_LENGTHS)
    kv_dtype: str = given("auto", SERVE_KV_DTYPE)
    #: None: off, unless a training job fits no other way (then full checkpointing)
    checkpointing: bool | None = given(None, CHOSEN_CHECKPOINTING)
    tokens: float | None = given(None, TOKENS)
    images: float | None = given(None, IMAGES)
    epochs: float = given(1.0, EPOCHS)
    frames: float | None = given(None, FRAMES)
    samples_per_frame: int = given(DEFAULT_SAMPLES_PER_FRAME, SAMPLES)
    scene_gib: float | None = given(None, SCENE)
    tflop: float | None = given(None, TFLOP)
    resolution: int | None = given(None, RESOLUTION)
    steps: int | None = given(None, STEPS)
    cpu_offload: str | None = given(None, CPU_OFFLOAD)
    vae_tiling: bool | None = given(None, VAE_TILING)
    cache_latents: bool | None = given(None, CACHE_LATENTS)
    hours: float | None = given(None, HOURS)
    request_rate: float | None = given(None, REQUEST_RATE)
    engine: str | None = given(None, SERVE_ENGINE)
    ttft: float | None = given(None, TTFT)
    tpot: float | None = given(None, TPOT)
    percentile: str = given("p50", PERCENTILE)
    services: int = given(1, SERVICES)
    #: A model parsed by the caller (a config.json), in place of ``model``/``params``.
    arch: ModelArch | None = field(default=None, compare=False, repr=False)

    @property
    def training(self) -> bool:
        return self.kind in ("train", "finetune", "lora", "qlora")

    @property
    def uses_model(self) -> bool:
        """A language or vision model (:class:`~whichgpu.models.arch.ModelArch`); image
        generation names a pipeline instead."""
        return self.kind not in ("render", "fp64", *IMAGE_KINDS)

    @property
    def label(self) -> str:
        return self.name or (f"{self.kind} {self.model or self.params or ''}".strip())


@dataclass(frozen=True)
class Constraints:
    """Limits on the whole workload: money, time, GPUs, markets and capabilities."""

    budget_usd: float | None = given(
        None, Input("number", N_("Total budget in US$."), low=1e-2, high=1e10, flag="budget")
    )
    budget_usd_per_h: float | None = given(
        None,
        Input("number", N_("Budget in US$ per hour."), low=1e-3, high=1e6, flag="budget-per-h"),
    )
    deadline_h: float | None = given(
        None,
        Input("duration", N_("Deadline: 48h, 3d, 90min."), low=1e-3, high=1e7, flag="deadline"),
    )
    max_gpus: int = given(8, Input("int", N_("At most this many GPUs."), low=1, high=1024))
    mode: str = given("rent", Input("choice", N_("rent or buy."), choices=MODES))
    markets: tuple[str, ...] = given(DEFAULT_MARKETS, MARKET_NAMES)
    requires: tuple[str, ...] = given(
        (),
        Input(
            "names",
            N_("Required: rt, display, ecc, fp64, nvlink, mig, nvenc, nvdec, cuda."),
            choices=CAPABILITIES,
        ),
    )
    electricity_usd_per_kwh: float | None = given(
        None,
        Input(
            "number",
            N_("Buying: electricity price in US$ per kWh."),
            low=0.0,
            high=10.0,
            flag="electricity",
        ),
    )
    hours_per_month: float = given(
        730.0,
        Input(
            "number", N_("Buying: hours of use a month for the break-even."), low=1.0, high=744.0
        ),
    )
    amortize_months: float = given(
        36.0,
        Input(
            "number", N_("Buying: months the cards are written off over (36)."), low=1.0, high=240.0
        ),
    )
    #: Where in an estimate's likely range a deadline or a budget is held: "likely" at its
    #: conservative end (the throughput's 10th percentile of held-out error: 9 in 10 runs
    #: like it finish in time), "point" at its middle.
    confidence: str = given(
        "likely",
        Input(
            "choice",
            N_(
                "Deadline, budget and latency targets met at the slow end of the "
                "estimate's likely range (likely), or at its middle (point)."
            ),
            choices=CONFIDENCES,
        ),
    )


@dataclass(frozen=True)
class Workload:
    components: tuple[Component, ...]
    constraints: Constraints = field(default_factory=Constraints)
    name: str = ""


@dataclass(frozen=True)
class Ranking:
    """How ``recommend`` ranks, on which catalog, against which GPU."""

    objective: str = given("cost", Input("choice", N_("cost, time or value."), choices=OBJECTIVES))
    catalog: str = given(
        "full",
        Input("choice", N_("full, or article: its three GPUs at its prices."), choices=CATALOGS),
    )
    baseline: str | None = given(
        None, Input("text", N_("A GPU you had in mind: is it over-provisioned?"))
    )


#: Limits on one request's size (work is bounded before it starts).
MAX_COMPONENTS = 16
MAX_SERVICES = 64
#: Every request type, for what covers them all (naming fields by their CLI flags).
REQUEST_TYPES: tuple[type, ...] = (
    FitRequest,
    EstimateRequest,
    ServiceRequest,
    MigOptions,
    Component,
    Constraints,
    Ranking,
)


def planned_service(
    kind: str,
    engine: str | None,
    rate: float | None,
    ttft: float | None,
    tpot: float | None,
    tokens: float | None,
    batch: int | None,
    generate: int,
    model_kind: str | None,
) -> bool:
    """Inference the serving planner sizes: an engine, a request rate or a latency target
    given, or, for a decoder that generates, a job of ``tokens`` to generate with no batch of
    the user's (an offline batch of requests, run as engines run one: every slot busy, then
    the drain, :mod:`whichgpu.estimate.burst`). Interactive use (hours, or one batch the user
    fixes), a prefill alone (``generate`` 0) and an encoder's tokens keep the one-copy
    estimate."""
    if kind != "inference":
        return False
    if any(v is not None for v in (engine, rate, ttft, tpot)):
        return True
    return tokens is not None and batch is None and generate > 0 and model_kind == "decoder"
