"""Pydantic models of the HTTP API: the compare request, and the responses (the ``--json``
documents of docs/json.md, described for the OpenAPI document; large nested parts are open
objects). The other request bodies are the library's request types, validated by the
library and described by :func:`whichgpu.web.api.request_schemas`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Market = Literal["on-demand", "spot", "marketplace", "serverless"]
Feature = Literal["mig", "nvlink", "rt", "fp64", "display", "ecc", "nvenc", "nvdec", "cuda"]


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
    memory_gib: float
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
    paged_gib: float
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
    regime: str
    harness: str
    throughput: RateDoc
    time_s: float | None
    bound: str
    mfu: float | None
    ttft_s: float | None
    tokens_per_s_per_sequence: float | None
    efficiency: float | None
    efficiency_provenance: str | None
    memory_gib: float | None = None
    fits: bool | None = None


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
