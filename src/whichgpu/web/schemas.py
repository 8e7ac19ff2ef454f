"""Pydantic models of the HTTP API: requests (validated before the library sees them) and
responses (the ``--json`` documents of docs/json.md, described for the OpenAPI document;
large nested parts are open objects)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Task = Literal["inference", "train", "finetune", "lora", "qlora"]
Kind = Literal["train", "finetune", "lora", "qlora", "inference", "render", "fp64"]
Precision = Literal[
    "32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true", "tf32", "fp8-mixed"
]
Quant = Literal[
    "fp8", "int8", "int4", "nf4", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0", "q3_k_m", "q2_k"
]
Market = Literal["on-demand", "spot", "marketplace", "serverless"]
Capability = Literal["rt", "display", "ecc", "fp64", "nvlink", "mig"]
Feature = Literal["mig", "nvlink", "rt", "fp64", "display", "ecc"]
Count = float | str  # 1e9, "2B", "350M"

NAME = Field(default=None, max_length=200)
MODEL = Field(
    default=None,
    max_length=200,
    description="A model preset (llama-3.1-8b, resnet-50…), forgiving names accepted.",
    examples=["llama-3.1-8b"],
)
PARAMS = Field(
    default=None,
    max_length=40,
    description="A generic transformer of this size: 7B, 350M, 1.5e9.",
    examples=["7B"],
)
CONFIG = Field(
    default=None,
    description="A Hugging Face config.json object, parsed as data (never executed).",
)
GPU_NAME = Field(
    default=None, max_length=200, description="A GPU name: a100, rtx-a6000, h100-pcie…"
)


class Closed(BaseModel):
    """Unknown fields are an error naming the valid ones."""

    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    """A response object: the listed fields at least (more may come in later versions)."""

    model_config = ConfigDict(extra="allow")


# -- requests ------------------------------------------------------------------------------


class CompareRequest(Closed):
    gpus: list[str] = Field(
        min_length=1,
        max_length=16,
        description="GPU names; the first is the baseline.",
        examples=[["a100-80gb-sxm", "rtx-a6000", "rtx-a2000"]],
    )
    markets: list[Market] | None = Field(
        default=None, max_length=4, description="Markets to price (default: rental markets)."
    )


class FitRequest(Closed):
    model: str | None = MODEL
    params: str | None = PARAMS
    config: dict[str, Any] | None = CONFIG
    task: Task = "inference"
    precision: Precision = "bf16-true"
    engine: Literal["torch", "deepspeed", "megatron"] = "torch"
    quant: Quant | None = None
    batch: int = Field(default=1, ge=1, le=1_000_000)
    seq: int = Field(default=2048, ge=1, le=10_000_000)
    prompt: int = Field(default=0, ge=0, le=10_000_000)
    generate: int = Field(default=0, ge=0, le=10_000_000)
    optimizer: Literal["adamw", "adamw-8bit", "sgd", "adafactor"] = "adamw"
    checkpointing: bool = False
    recompute: Literal["none", "selective", "full"] | None = None
    attention: Literal["sdpa", "eager"] = "sdpa"
    lora_rank: int = Field(default=16, ge=1, le=65_536)
    lora_targets: Literal["attention", "all-linear"] = "attention"
    zero: int = Field(default=0, ge=0, le=3)
    tp: int = Field(default=1, ge=1, le=1024)
    pp: int = Field(default=1, ge=1, le=1024)
    gpus: int = Field(default=1, ge=1, le=100_000)
    kv_dtype: Literal["auto", "fp16", "bf16", "fp8"] = "auto"
    gpu: str | None = GPU_NAME
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"model": "llama-3.1-8b", "task": "lora", "gpu": "a6000"}]},
    )


class EstimateRequest(Closed):
    model: str | None = MODEL
    params: str | None = PARAMS
    config: dict[str, Any] | None = CONFIG
    task: Literal["inference", "train", "finetune", "lora", "qlora", "render", "fp64"] = "inference"
    gpu: str = Field(default="a100", max_length=200, description="The GPU.")
    count: int = Field(default=1, ge=1, le=100_000, description="How many (data parallel).")
    precision: Precision = "bf16-true"
    quant: Quant | None = None
    batch: int = Field(default=1, ge=1, le=1_000_000)
    seq: int = Field(default=2048, ge=1, le=10_000_000)
    prompt: int = Field(default=0, ge=0, le=10_000_000)
    generate: int = Field(default=256, ge=0, le=10_000_000)
    checkpointing: bool = False
    tokens: float | None = Field(default=None, gt=0, le=1e18)
    images: float | None = Field(default=None, gt=0, le=1e15)
    epochs: float = Field(default=1.0, gt=0, le=1e6)
    frames: float | None = Field(default=None, gt=0, le=1e9, description="Render: frames.")
    samples_per_frame: int = Field(default=1024, ge=1, le=1_000_000)
    tflop: float | None = Field(default=None, gt=0, le=1e15, description="FP64: TFLOP.")

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"model": "llama-3.1-8b", "gpu": "a100", "tokens": 1e6}]},
    )


class ComponentIn(Closed):
    """One component of a workload (the ``[[components]]`` table of a workload file)."""

    kind: Kind
    name: str | None = NAME
    model: str | None = MODEL
    params: str | None = PARAMS
    precision: Precision | None = None
    quant: Quant | None = None
    batch: int | None = Field(default=None, ge=1, le=1_000_000)
    seq: int | None = Field(default=None, ge=1, le=10_000_000)
    prompt: int | None = Field(default=None, ge=0, le=10_000_000)
    generate: int | None = Field(default=None, ge=0, le=10_000_000)
    checkpointing: bool | None = None
    tokens: Count | None = Field(default=None, description="Tokens to train on or generate.")
    images: Count | None = Field(default=None, description="Images per epoch.")
    epochs: float | None = Field(default=None, ge=1e-3, le=1e6)
    frames: Count | None = Field(default=None, description="Render: frames.")
    samples_per_frame: int | None = Field(default=None, ge=1, le=1_000_000)
    tflop: Count | None = Field(default=None, description="FP64: work in TFLOP.")
    hours: Count | None = Field(default=None, description="Hours of use.")
    request_rate: float | None = Field(default=None, ge=1e-6, le=1e6)
    services: int | None = Field(default=None, ge=1, le=10_000)
    config: dict[str, Any] | None = CONFIG


class ConstraintsIn(Closed):
    """The ``[constraints]`` table of a workload file."""

    budget_usd: float | None = Field(default=None, ge=1e-2, le=1e10)
    budget_usd_per_h: float | None = Field(default=None, ge=1e-3, le=1e6)
    deadline_h: float | None = Field(default=None, ge=1e-3, le=1e7)
    max_gpus: int | None = Field(default=None, ge=1, le=1024)
    mode: Literal["rent", "buy"] | None = None
    markets: list[Market] | None = Field(default=None, max_length=4)
    requires: list[Capability] | None = Field(default=None, max_length=6)
    electricity_usd_per_kwh: float | None = Field(default=None, ge=0, le=10)
    hours_per_month: float | None = Field(default=None, ge=1, le=744)


class RecommendRequest(Closed):
    """A workload (as a workload file: name, constraints, components) and how to rank."""

    name: str | None = NAME
    constraints: ConstraintsIn = Field(default_factory=ConstraintsIn)
    components: list[ComponentIn] = Field(min_length=1, max_length=16)
    objective: Literal["cost", "time", "value"] = "cost"
    catalog: Literal["full", "article"] = Field(
        default="full", description="full, or article: its three GPUs at its prices."
    )
    baseline: str | None = Field(
        default=None, max_length=200, description="A GPU you had in mind: over-provisioned?"
    )

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "name": "LoRA on Llama 2 7B",
                    "constraints": {"budget_usd": 500},
                    "components": [{"kind": "lora", "model": "llama-2-7b", "tokens": "1e8"}],
                    "objective": "cost",
                }
            ]
        },
    )


class ServiceIn(Closed):
    """An inference service to place on MIG instances (a ``[[services]]`` table)."""

    name: str | None = NAME
    model: str | None = MODEL
    params: str | None = PARAMS
    memory_gib: float | None = Field(default=None, gt=0, le=10_000)
    precision: Precision | None = None
    quant: Quant | None = None
    batch: int | None = Field(default=None, ge=1, le=1_000_000)
    prompt: int | None = Field(default=None, ge=0, le=10_000_000)
    generate: int | None = Field(default=None, ge=0, le=10_000_000)
    replicas: int = Field(default=1, ge=1, le=1000)
    profile: str | None = Field(default=None, max_length=40, description="A MIG profile.")


class MigRequest(Closed):
    """Services to pack (a plan), or ``profiles`` on one ``gpu`` (a check of that mix)."""

    services: list[ServiceIn] | None = Field(default=None, min_length=1, max_length=64)
    gpu: str | None = GPU_NAME
    profiles: list[str] | None = Field(
        default=None, min_length=1, max_length=8, examples=[["1g.10gb", "2g.20gb", "3g.40gb"]]
    )
    markets: list[Market] | None = Field(default=None, max_length=4)

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"services": [{"model": "llama-3.1-8b", "replicas": 3}]}]},
    )


# -- responses -----------------------------------------------------------------------------


class ErrorBody(BaseModel):
    code: str = Field(
        description="invalid_input, unknown_name, ambiguous_name, invalid_data, too_large, "
        "not_found"
    )
    message: str = Field(description="What is wrong and what is valid, one line.")
    field: str | None = Field(description="The request field at fault, where known.")
    closest: list[str] = Field(description="For an unknown name: the closest known names.")


class ErrorResponse(BaseModel):
    error: ErrorBody


class NoteDoc(Open):
    code: str
    params: dict[str, Any]
    text: str


class GpuSpecDoc(Open):
    id: str
    name: str
    vram_gb: float
    sources: list[dict[str, Any]]
    field_notes: dict[str, str]


class PriceRangeDoc(Open):
    low: float
    high: float


class ListedGpuDoc(GpuSpecDoc):
    price_usd_per_h: PriceRangeDoc | None


class GpuListDoc(Open):
    schema_version: int
    kind: Literal["gpus"]
    gpus: list[ListedGpuDoc]


class ShownGpuDoc(GpuSpecDoc):
    prices: list[dict[str, Any]]
    purchase_usd: list[dict[str, Any]]


class ShowDoc(Open):
    schema_version: int
    kind: Literal["gpu"]
    gpu: ShownGpuDoc


class CorrectionDoc(Open):
    gpu: str
    field: str
    code: str
    params: dict[str, Any]


class ComparedGpuDoc(GpuSpecDoc):
    price_usd_per_h: PriceRangeDoc | None
    prices_by_market: dict[str, dict[str, Any] | None]
    purchase_usd: list[dict[str, Any]]
    derived: dict[str, Any]


class CompareDoc(Open):
    schema_version: int
    kind: Literal["compare"]
    baseline: str
    markets: list[str]
    gpus: list[ComparedGpuDoc]
    corrections: list[CorrectionDoc]


class FitGpuDoc(Open):
    id: str
    fits: bool
    min_count: int | None
    strategy: str
    headroom_gib: float
    needed_gib: float


class FitDoc(Open):
    schema_version: int
    kind: Literal["fit"]
    model: dict[str, Any]
    job: dict[str, Any]
    parameters: int
    phase: str
    total_gib: float
    tensor_gib: float
    breakdown_gib: dict[str, float]
    gpus: list[FitGpuDoc]
    target: str | None
    changes: list[dict[str, Any]]
    serving: dict[str, Any] | None
    assumptions: list[dict[str, Any]]


class RateDoc(Open):
    value: float
    unit: str
    low: float
    high: float


class EstimateDoc(Open):
    schema_version: int
    kind: Literal["estimate"]
    gpu: str
    count: int
    workload: str
    harness: str
    throughput: RateDoc
    time_s: float | None
    bound: str
    mfu: float | None
    ttft_s: float | None
    tokens_per_s_per_sequence: float | None
    efficiency: float | None
    efficiency_provenance: str | None


class OptionDoc(Open):
    gpu: str
    count: int
    per_service_count: int
    services: int
    mig_profile: str | None
    market: str | None
    fits: bool
    feasible: bool
    throughput: dict[str, Any] | None
    time_s: float | None
    usd_per_h: float | None
    cost_usd: float | None
    score: float | None
    pareto: bool
    components: list[dict[str, Any]]
    blockers: list[NoteDoc]


class RecommendDoc(Open):
    schema_version: int
    kind: Literal["recommend"]
    workload: str | None
    objective: str
    pick: OptionDoc | None
    options: list[OptionDoc]
    reasons: list[NoteDoc]
    warnings: list[NoteDoc]
    assumptions: list[NoteDoc]
    infeasible: list[NoteDoc]
    baseline: OptionDoc | None
    unpriced: list[str]


class MigPickDoc(Open):
    gpu: str
    gpus: int
    usd_per_h: float | None
    plan: dict[str, Any]
    commands: list[str]
    mig_parted: str
    kubernetes: dict[str, dict[str, int]]


class MigDoc(Open):
    schema_version: int
    kind: Literal["mig"]
    services: list[dict[str, Any]]
    pick: MigPickDoc | None
    options: list[dict[str, Any]]
    whole_cards: list[dict[str, Any]]


class MigCheckDoc(Open):
    kind: Literal["mig-check"]
    gpu: str
    profiles: list[str]
    valid: bool
    reason: NoteDoc | None
