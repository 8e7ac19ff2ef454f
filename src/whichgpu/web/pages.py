"""The server-rendered pages (recommend, compare, catalog, one GPU): their routes, the
frame every page shares (languages, navigation) and the context each template gets."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import UploadFile

from whichgpu.errors import naming_fields
from whichgpu.i18n import _, speaking
from whichgpu.render.chart_data import by_time
from whichgpu.web.contexts import (
    catalog_context,
    compare_context,
    estimate_context,
    fit_context,
    gpu_context,
    mig_context,
    recommend_context,
    rows_of,
    summary_of,
)
from whichgpu.web.core import (
    LANGUAGES,
    MAX_CONFIG_BYTES,
    Problem,
    Service,
    memo_key,
    recommend_form,
    too_large,
)
from whichgpu.web.core import run_off_loop as run_in_worker
from whichgpu.web.labels import page_field_name
from whichgpu.web.templating import render


async def run_off_loop(language: str, compute: Callable[[], Any]) -> tuple[Any, Problem | None]:
    """The computation of a page, its messages naming fields by the form's labels."""
    return await run_in_worker(language, compute, namer=page_field_name)


def error_page(problem: Problem, language: str) -> str:
    return render("error.html", problem=problem, **chrome(language, "/", {}))


def chrome(language: str, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """What every page's frame needs: languages with links, navigation."""
    links = {}
    for code in LANGUAGES:
        kept = {k: v for k, v in query.items() if k != "lang"}
        kept["lang"] = [code]
        links[code] = f"{path}?{urlencode(kept, doseq=True)}"
    return {"language": language, "languages": LANGUAGES, "language_links": links, "path": path}


def query_fields(request: Request) -> dict[str, str]:
    """A GET form's fields as typed (the last value of each, empty ones and the language
    switch left out)."""
    fields = {k: v[-1] for k, v in parse_qs(request.url.query).items() if v[-1].strip()}
    fields.pop("lang", None)
    return fields


def _answer_page(
    request: Request,
    template: str,
    problem: Problem | None,
    context: Callable[[], dict[str, Any]],
) -> HTMLResponse:
    """A page in the request's language (its context built in it: labels are translated),
    with the problem, and its status, if there is one."""
    with speaking(request.state.language), naming_fields(page_field_name):
        status = problem.status if problem else 200
        return _page(request, template, status=status, problem=problem, **context())


def _page(
    request: Request,
    template: str,
    status: int = 200,
    query: dict[str, list[str]] | None = None,
    **context: Any,
) -> HTMLResponse:
    """A page; its language links carry ``query`` (default: the URL's), so that switching
    language keeps what the form asked."""
    language = request.state.language
    if query is None:
        query = parse_qs(request.url.query)
    with speaking(language), naming_fields(page_field_name):
        html = render(template, **chrome(language, request.url.path, query), **context)
    return HTMLResponse(html, status)


def add_pages(app: FastAPI) -> None:
    """The server-rendered pages: recommend (and /), compare, catalog, one GPU."""

    @app.get("/", include_in_schema=False)
    async def home(request: Request) -> Response:
        return await recommend_page(request)

    @app.get("/recommend", include_in_schema=False)
    @app.post("/recommend", include_in_schema=False)
    async def recommend_page(request: Request) -> Response:
        fields: dict[str, str] = {}
        lists: dict[str, list[str]] = {}
        config: str | None = None
        config_name = ""
        problem: Problem | None = None
        if request.method == "POST":
            form = await request.form(max_files=1, max_fields=80)
            for key, value in form.multi_items():
                if isinstance(value, UploadFile):
                    if key == "config" and value.filename:
                        data = await value.read(MAX_CONFIG_BYTES + 1)
                        if len(data) > MAX_CONFIG_BYTES:
                            with speaking(request.state.language):
                                problem = too_large("/recommend", MAX_CONFIG_BYTES)
                        elif data.strip():
                            config_name = value.filename
                            try:
                                config = data.decode("utf-8")
                            except UnicodeDecodeError:
                                with speaking(request.state.language):
                                    problem = Problem(
                                        422,
                                        "invalid_input",
                                        _("config: a config.json is UTF-8 JSON text"),
                                        "config",
                                    )
                    continue
                lists.setdefault(key, []).append(value)
                fields[key] = value
            await form.close()
        else:
            for key, values in parse_qs(request.url.query).items():
                lists[key] = values
                fields[key] = values[-1]
        computing = request.method == "POST" or "task" in fields
        service: Service = request.app.state.service
        language = request.state.language
        digest = hashlib.sha256((config or "").encode()).hexdigest()
        # the file's name reaches the page ("uploaded: NAME"): it is part of the key, so
        # one user's name is never shown to another who uploads the same content
        key = memo_key(
            "page-recommend", fields, lists, digest, config_name, language, service.today()
        )
        if computing and problem is None:
            cached = service.memo.get(key)
            if cached is not None:
                return HTMLResponse(cached)
        result: Any = None
        charts: Any = None
        built_form: Any = None
        if computing and problem is None:

            def compute() -> Any:
                built = recommend_form(fields, lists, config, config_name)
                found = service.recommendation(built.workload, built.ranking)
                from whichgpu.web.charts import recommendation_charts

                return built, found, recommendation_charts(found)

            value, problem = await run_off_loop(language, compute)
            if value is not None:
                built_form, result, charts = value
        if problem is not None and problem.status == 413:
            return HTMLResponse(error_page(problem, language), 413)
        with speaking(language), naming_fields(page_field_name):
            # a posted form's fields ride on the language links (not an uploaded file)
            posted = {k: [v for v in vs if v.strip()] for k, vs in lists.items()}
            response = _page(
                request,
                "recommend.html",
                status=problem.status if problem is not None else 200,
                query={k: vs for k, vs in posted.items() if vs},
                **recommend_context(service, fields, lists, config_name),
                problem=problem,
                form=built_form,
                result=result,
                rows=rows_of(result, bool(fields.get("all"))) if result is not None else [],
                summary=summary_of(result),
                charts=charts,
                charts_by_time=result is not None and by_time(result),
            )
        if result is not None:
            service.memo.put(key, bytes(response.body))
        return response

    @app.get("/compare", include_in_schema=False)
    async def compare_page(request: Request) -> Response:
        service: Service = request.app.state.service
        query = parse_qs(request.url.query)
        names = [n for n in query.get("gpu", []) if n.strip()]
        markets = [m for m in query.get("market", []) if m.strip()]
        if not names:
            from whichgpu.article import article_gpu_ids

            names = article_gpu_ids(service.catalog())
        value, problem = await run_off_loop(
            request.state.language, lambda: service.comparison(names, markets or None)
        )
        return _answer_page(
            request,
            "compare.html",
            problem,
            lambda: compare_context(service, value, names, markets),
        )

    @app.get("/catalog", include_in_schema=False)
    async def catalog_page(request: Request) -> Response:
        service: Service = request.app.state.service
        query = parse_qs(request.url.query)
        min_vram = (query.get("min_vram") or [""])[-1].strip()
        arch = (query.get("arch") or [""])[-1].strip()
        features = [f for f in query.get("feature", []) if f.strip()]

        def compute() -> Any:
            from whichgpu.catalog.filters import filter_gpus
            from whichgpu.inputs import Input, value_of

            rule = Input("number", "", low=0.0)
            vram = value_of(rule, min_vram, ("min_vram",), text=True) if min_vram else None
            return filter_gpus(service.catalog(), vram, arch or None, features)

        found, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(
            request,
            "catalog.html",
            problem,
            lambda: {
                **catalog_context(service, found or []),
                "filters": {"min_vram": min_vram, "arch": arch, "features": features},
            },
        )

    @app.get("/fit", include_in_schema=False)
    async def fit_page(request: Request) -> Response:
        """Will it fit? The memory at the job's peak by component, and every GPU: fits on
        one, headroom, the fewest that hold it (``whichgpu fit`` on one screen)."""
        service: Service = request.app.state.service
        fields = query_fields(request)
        values = {"model": "llama-3.1-8b", "task": "lora", **fields}
        result = None
        problem = None
        if "model" in fields or "params" in fields:

            def compute() -> Any:
                from whichgpu.fitting import fit_request
                from whichgpu.inputs import check_fields, parse, take
                from whichgpu.requests import FitRequest
                from whichgpu.web.core import model_arch

                request_fields = take(FitRequest, dict(fields))
                check_fields((FitRequest, request_fields), text=True)  # every field at once
                parsed: FitRequest = parse(FitRequest, request_fields, text=True)
                from whichgpu.requests import IMAGE_KINDS

                if parsed.task in IMAGE_KINDS:
                    from whichgpu.fitting import fit_image_request

                    return fit_image_request(service.catalog(), parsed)
                arch = model_arch(parsed.model, parsed.params, None)
                return fit_request(service.catalog(), arch, parsed)[0]

            result, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(
            request,
            "fit.html",
            problem,
            lambda: fit_context(service, values, result),
        )

    @app.get("/estimate", include_in_schema=False)
    async def estimate_page(request: Request) -> Response:
        """How fast, how long? A job on one GPU model: the throughput with its range, the
        bound, the time for a size, the MFU (``whichgpu estimate`` on one screen)."""
        service: Service = request.app.state.service
        fields = query_fields(request)
        values = {"model": "llama-3.1-8b", "task": "lora", "gpu": "rtx-a6000", **fields}
        result = None
        problem = None
        if "gpu" in fields:

            def compute() -> Any:
                from whichgpu.inputs import check_fields, parse, take
                from whichgpu.requests import EstimateRequest
                from whichgpu.sizing import estimate_job
                from whichgpu.web.core import model_arch

                raw = take(EstimateRequest, dict(fields))
                check_fields((EstimateRequest, raw), text=True)  # every field at once
                parsed: EstimateRequest = parse(EstimateRequest, raw, text=True)
                arch = model_arch(parsed.model, parsed.params, None) if parsed.uses_model else None
                return estimate_job(service.catalog().resolve(parsed.gpu), arch, parsed)

            result, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(
            request, "estimate.html", problem, lambda: estimate_context(service, values, result)
        )

    @app.get("/mig", include_in_schema=False)
    async def mig_page(request: Request) -> Response:
        """MIG: isolated services packed onto the fewest MIG GPUs, the plan per GPU, the
        commands that create it, and whole smaller cards priced beside it."""
        service: Service = request.app.state.service
        fields = query_fields(request)
        values = {"model": "llama-3.1-8b", "quant": "int4", "replicas": "7", **fields}
        result = None
        problem = None
        if "model" in fields or "memory_gib" in fields:

            def compute() -> Any:
                from whichgpu.inputs import check_fields
                from whichgpu.mig_planner import make_services, plan_mig
                from whichgpu.requests import ServiceRequest

                wanted = ("model", "quant", "replicas", "memory_gib", "precision")
                spec = {k: fields[k] for k in wanted if k in fields}
                check_fields((ServiceRequest, spec), text=True)  # every field at once
                return plan_mig(service.catalog(), make_services([spec], text=True))

            result, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(request, "mig.html", problem, lambda: mig_context(values, result))

    @app.get("/catalog/{gpu}", include_in_schema=False)
    async def gpu_page(request: Request, gpu: str) -> Response:
        service: Service = request.app.state.service
        found, problem = await run_off_loop(
            request.state.language, lambda: service.catalog().resolve(gpu)
        )
        return _answer_page(
            request,
            "gpu.html",
            problem,
            lambda: gpu_context(service, found),
        )
