"""The HTTP API, ``/api/v1/``: thin routes over :class:`~whichgpu.web.core.Service`; each
returns the same JSON document as the matching command's ``--json``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from whichgpu.web import schemas
from whichgpu.web.core import Problem, Service, json_bytes, memo_key, run
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

#: The request model of each route with a body: unknown fields are reported with the valid ones.
BODY_MODELS: dict[str, type[BaseModel]] = {}


def error_response(problem: Problem) -> Response:
    return Response(json_bytes(problem.doc()), problem.status, media_type="application/json")


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def language_of(request: Request) -> str:
    language: str = request.state.language
    return language


def answer(request: Request, key: tuple[object, ...], compute: Callable[[], Any]) -> Response:
    """The document ``compute()`` builds, memoised by ``key``, the language and the date."""
    service = service_of(request)
    language = language_of(request)
    full = memo_key(*key, language, service.today().isoformat())
    body = service.memo.get(full)
    if body is None:
        doc, problem = run(language, compute)
        if problem is not None:
            return error_response(problem)
        body = json_bytes(doc)
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
    return answer(
        request,
        ("gpus", min_vram, arch, features),
        lambda: service_of(request).gpus_doc(min_vram, arch, features),
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
    return answer(request, ("gpu", gpu), lambda: service_of(request).show_doc(gpu))


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
    return answer(
        request,
        ("compare", gpu, markets),
        lambda: service_of(request).compare_doc(gpu, markets),
    )


@router.post(
    "/compare",
    response_model=schemas.CompareDoc,
    responses=BODY_ERRORS,
    summary="GPUs side by side (whichgpu compare --json)",
)
async def compare_post(request: Request, body: schemas.CompareRequest) -> Response:
    markets = list(body.markets or [])
    return answer(
        request,
        ("compare", body.gpus, markets),
        lambda: service_of(request).compare_doc(body.gpus, markets),
    )


BODY_MODELS[f"{PREFIX}/compare"] = schemas.CompareRequest


@router.post(
    "/fit",
    response_model=schemas.FitDoc,
    responses=BODY_ERRORS,
    summary="Will it fit? (whichgpu fit --json)",
)
async def fit(request: Request, body: schemas.FitRequest) -> Response:
    fields = body.model_dump(exclude_none=True)
    return answer(request, ("fit", fields), lambda: service_of(request).fit_doc(fields))


BODY_MODELS[f"{PREFIX}/fit"] = schemas.FitRequest


@router.post(
    "/estimate",
    response_model=schemas.EstimateDoc,
    responses=BODY_ERRORS,
    summary="How fast, how long? (whichgpu estimate --json)",
)
async def estimate(request: Request, body: schemas.EstimateRequest) -> Response:
    fields = body.model_dump(exclude_none=True)
    return answer(request, ("estimate", fields), lambda: service_of(request).estimate_doc(fields))


BODY_MODELS[f"{PREFIX}/estimate"] = schemas.EstimateRequest


@router.post(
    "/recommend",
    response_model=schemas.RecommendDoc,
    responses=BODY_ERRORS,
    summary="Which GPU, how many, how long, what cost (whichgpu recommend --json)",
)
async def recommend(request: Request, body: schemas.RecommendRequest) -> Response:
    raw = body.model_dump(exclude_none=True, include={"name", "constraints", "components"})

    def compute() -> dict[str, Any]:
        from whichgpu.recommender.spec import Where, make_workload
        from whichgpu.render.recommend_out import recommend_doc
        from whichgpu.web.core import model_arch

        for component in raw["components"]:
            config = component.pop("config", None)
            if config is not None:  # a config.json object, parsed as data
                component["arch"] = model_arch(component.pop("model", None),
                                               component.pop("params", None), config)  # fmt: skip
        workload = make_workload(raw, Where("body"))
        service = service_of(request)
        return recommend_doc(
            service.recommendation(workload, body.objective, body.catalog, body.baseline)
        )

    key = ("recommend", raw, body.objective, body.catalog, body.baseline)
    return answer(request, key, compute)


BODY_MODELS[f"{PREFIX}/recommend"] = schemas.RecommendRequest


@router.post(
    "/mig",
    response_model=schemas.MigDoc | schemas.MigCheckDoc,
    responses=BODY_ERRORS,
    summary="Pack services onto MIG instances, or check a profile mix (whichgpu mig --json)",
)
async def mig(request: Request, body: schemas.MigRequest) -> Response:
    fields = body.model_dump(exclude_none=True)
    return answer(request, ("mig", fields), lambda: service_of(request).mig_doc(fields))


BODY_MODELS[f"{PREFIX}/mig"] = schemas.MigRequest
