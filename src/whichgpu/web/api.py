"""The HTTP API, ``/api/v1/``: thin routes over :class:`~whichgpu.web.core.Service`; each
returns the same JSON document as the matching command's ``--json``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from whichgpu.web import schemas
from whichgpu.web.core import Problem, Service, json_bytes, memo_key
from whichgpu.web.pool import run_call
from whichgpu.web.schemas import ErrorResponse

PREFIX = "/api/v1"

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorResponse, "description": "An unknown GPU or model (closest matches)."},
    422: {"model": ErrorResponse, "description": "Bad input: the field and what is valid."},
}
BODY_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    413: {"model": ErrorResponse, "description": "The request body is over 64 KiB."},
}

#: The pydantic request model of each route that has one (the others are the library's
#: request types): unknown fields are reported with the valid ones.
BODY_MODELS: dict[str, type[BaseModel]] = {}


def error_response(problem: Problem) -> Response:
    return Response(json_bytes(problem.doc()), problem.status, media_type="application/json")


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def language_of(request: Request) -> str:
    language: str = request.state.language
    return language


async def answer(request: Request, key: tuple[object, ...], method: str, *args: Any) -> Response:
    """The document ``Service.method(*args)`` builds, memoised by ``key``, the language and
    the date; computed off the event loop (in the compute pool's processes where the server
    has one), within the time limit."""
    service = service_of(request)
    language = language_of(request)
    full = memo_key(*key, language, service.today().isoformat())
    body = service.memo.get(full)
    if body is None:
        body, problem = await run_call(service, language, method, args)
        if problem is not None:
            return error_response(problem)
        assert body is not None  # a computation answers its document or a problem
        service.memo.put(full, body)
    return Response(body, media_type="application/json")


router = APIRouter(prefix=PREFIX, tags=["api"])


@router.get(
    "/gpus",
    response_model=schemas.GpuListDoc,
    responses=ERRORS,
    summary="The GPU catalog (whichgpu gpus --json)",
)
async def list_gpus(
    request: Request,
    min_vram: Annotated[
        float | None, Query(ge=0, le=1e6, description="At least this much VRAM, GB.")
    ] = None,
    arch: Annotated[
        str | None, Query(max_length=100, description="Architecture: Ampere, Hopper, Ada…")
    ] = None,
    feature: Annotated[
        list[schemas.Feature] | None, Query(description="Required features (repeatable).")
    ] = None,
) -> Response:
    features = list(feature or [])
    return await answer(
        request,
        ("gpus", min_vram, arch, features),
        "gpus_doc",
        min_vram,
        arch,
        features,
    )


@router.get(
    "/models",
    responses=ERRORS,
    summary="The model presets (whichgpu models --json)",
)
async def list_models(
    request: Request,
    family: Annotated[
        str | None, Query(max_length=40, description="A family or its prefix: llama, qwen…")
    ] = None,
    min_params: Annotated[
        float | None, Query(ge=0, le=1e13, description="At least this many parameters.")
    ] = None,
    max_params: Annotated[
        float | None, Query(ge=0, le=1e13, description="At most this many parameters.")
    ] = None,
) -> Response:
    return await answer(
        request,
        ("models", family, min_params, max_params),
        "models_doc",
        family,
        min_params,
        max_params,
    )


@router.get(
    "/gpus/{gpu}",
    response_model=schemas.ShowDoc,
    responses=ERRORS,
    summary="One GPU with every source and price (whichgpu show --json)",
)
async def show_gpu(
    request: Request,
    gpu: Annotated[str, Path(max_length=200, description="A GPU name: a100, rtx-a6000…")],
) -> Response:
    return await answer(request, ("gpu", gpu), "show_doc", gpu)


@router.get(
    "/compare",
    response_model=schemas.CompareDoc,
    responses=ERRORS,
    summary="GPUs side by side (whichgpu compare --json)",
)
async def compare_get(
    request: Request,
    gpu: Annotated[
        list[str],
        Query(min_length=1, max_length=16, description="GPU names; the first is the baseline."),
    ],
    market: Annotated[list[schemas.Market] | None, Query(description="Markets to price.")] = None,
) -> Response:
    markets = list(market or [])
    return await answer(
        request,
        ("compare", gpu, markets),
        "compare_doc",
        gpu,
        markets,
    )


@router.post(
    "/compare",
    response_model=schemas.CompareDoc,
    responses=BODY_ERRORS,
    summary="GPUs side by side (whichgpu compare --json)",
)
async def compare_post(request: Request, body: schemas.CompareRequest) -> Response:
    markets = list(body.markets or [])
    return await answer(
        request,
        ("compare", body.gpus, markets),
        "compare_doc",
        list(body.gpus),
        markets,
    )


BODY_MODELS[f"{PREFIX}/compare"] = schemas.CompareRequest


def body_route(
    path: str, schema: str, summary: str, response: Any
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A POST route whose JSON body is one of the library's request types: the library
    validates it (the same rules and error codes as the CLI and the workload files), and the
    OpenAPI document describes it from the same declaration (:func:`request_schemas`)."""
    extra = {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
        }
    }
    return router.post(
        path, response_model=response, responses=BODY_ERRORS, summary=summary, openapi_extra=extra
    )


async def body_answer(request: Request, name: str) -> Response:
    """The document ``Service.<name>_doc(body)`` builds from the request's JSON object."""
    body, problem = await _body(request)
    if problem is not None:
        return error_response(problem)
    return await answer(request, (name, body), f"{name}_doc", body)


@body_route("/fit", "FitRequest", "Will it fit? (whichgpu fit --json)", schemas.FitDoc)
async def fit(request: Request) -> Response:
    return await body_answer(request, "fit")


@body_route(
    "/estimate",
    "EstimateRequest",
    "How fast, how long? (whichgpu estimate --json)",
    schemas.EstimateDoc,
)
async def estimate(request: Request) -> Response:
    return await body_answer(request, "estimate")


@body_route(
    "/recommend",
    "RecommendRequest",
    "Which GPU, how many, how long, what cost (whichgpu recommend --json)",
    schemas.RecommendDoc,
)
async def recommend(request: Request) -> Response:
    return await body_answer(request, "recommend")


@body_route(
    "/mig",
    "MigRequest",
    "Pack services onto MIG instances, or check a profile mix (whichgpu mig --json)",
    schemas.MigDoc | schemas.MigCheckDoc,
)
async def mig(request: Request) -> Response:
    return await body_answer(request, "mig")


async def _body(request: Request) -> tuple[dict[str, Any], Problem | None]:
    """The request's JSON object, or the problem with it (in the request's language)."""
    from whichgpu.errors import WhichGPUError, api_name, naming_fields
    from whichgpu.i18n import speaking
    from whichgpu.web.core import body_object, problem_of, read_json

    try:
        return body_object(read_json(await request.body())), None
    except WhichGPUError as error:
        with speaking(language_of(request)), naming_fields(api_name):
            return {}, problem_of(error)


def request_schemas() -> dict[str, Any]:
    """The JSON Schemas of the request types, for the OpenAPI document's components."""
    from whichgpu.inputs import json_schema
    from whichgpu.inputs.mig_requests import MigOptions, ServiceRequest
    from whichgpu.inputs.requests import (
        MAX_COMPONENTS,
        MAX_SERVICES,
        Component,
        Constraints,
        EstimateRequest,
        FitRequest,
        Ranking,
    )

    config = {
        "type": "object",
        "description": "A Hugging Face config.json object, parsed as data (never executed).",
    }

    def ref(name: str) -> dict[str, str]:
        return {"$ref": f"#/components/schemas/{name}"}

    fit = json_schema(FitRequest)
    fit["properties"]["config"] = config
    estimate = json_schema(EstimateRequest)
    estimate["properties"]["config"] = config
    component = json_schema(Component, "ComponentIn")
    component["properties"]["config"] = config
    ranking = json_schema(Ranking)
    recommend = {
        "type": "object",
        "title": "RecommendRequest",
        "description": "A workload (as a workload file: name, constraints, components) and "
        "how to rank.",
        "properties": {
            "name": {"type": "string", "maxLength": 200},
            "constraints": ref("ConstraintsIn"),
            "components": {
                "type": "array",
                "items": ref("ComponentIn"),
                "minItems": 1,
                "maxItems": MAX_COMPONENTS,
            },
            **ranking["properties"],
        },
        "required": ["components"],
        "additionalProperties": False,
        "examples": [
            {
                "name": "LoRA on Llama 2 7B",
                "constraints": {"budget_usd": 500},
                "components": [{"kind": "lora", "model": "llama-2-7b", "tokens": "1e8"}],
                "objective": "cost",
            }
        ],
    }
    mig = json_schema(MigOptions, "MigRequest")
    mig["description"] = "Services to pack (a plan), or profiles on one gpu (a check of that mix)."
    mig["properties"]["services"] = {
        "type": "array",
        "items": ref("ServiceIn"),
        "minItems": 1,
        "maxItems": MAX_SERVICES,
    }
    fit["examples"] = [{"model": "llama-3.1-8b", "task": "lora", "gpu": "a6000"}]
    estimate["examples"] = [{"model": "llama-3.1-8b", "gpu": "a100", "tokens": 1e6}]
    mig["examples"] = [{"services": [{"model": "llama-3.1-8b", "replicas": 3}]}]
    return {
        "FitRequest": fit,
        "EstimateRequest": estimate,
        "ComponentIn": component,
        "ConstraintsIn": json_schema(Constraints, "ConstraintsIn"),
        "RecommendRequest": recommend,
        "ServiceIn": json_schema(ServiceRequest, "ServiceIn"),
        "MigRequest": mig,
    }
