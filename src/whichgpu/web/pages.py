"""The server-rendered pages' routes: each reads its request (a form, a query, an upload)
and answers the page, the computing ones (recommend, fit, estimate, MIG) rendered by
:mod:`whichgpu.web.views` in the compute pool or a worker thread, the catalog's (compare,
catalog, one GPU) here."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import UploadFile

from whichgpu.i18n import _, speaking
from whichgpu.web.contexts import catalog_context, compare_context, gpu_context
from whichgpu.web.core import (
    MAX_CONFIG_BYTES,
    Problem,
    Service,
    memo_key,
    too_large,
)
from whichgpu.web.core import run_off_loop as run_in_worker
from whichgpu.web.labels import page_field_name
from whichgpu.web.pool import run_view
from whichgpu.web.templating import render
from whichgpu.web.views import chrome, computes, html_page


async def run_off_loop(language: str, compute: Callable[[], Any]) -> tuple[Any, Problem | None]:
    """The computation of a page, its messages naming fields by the form's labels."""
    return await run_in_worker(language, compute, namer=page_field_name)


def error_page(problem: Problem, language: str) -> str:
    return render("error.html", problem=problem, **chrome(language, "/", {}))


def query_fields(request: Request) -> dict[str, str]:
    """A GET form's fields as typed (the last value of each, empty ones and the language
    switch left out)."""
    fields = {k: v[-1] for k, v in parse_qs(request.url.query).items() if v[-1].strip()}
    fields.pop("lang", None)
    return fields


async def query_view(request: Request, name: str) -> HTMLResponse:
    """A GET form's page (fit, estimate, MIG): its path, its query (for the language links)
    and its fields as typed; computed when its fields ask (:func:`whichgpu.web.views.
    computes`)."""
    fields = query_fields(request)
    args = (request.url.path, parse_qs(request.url.query), fields)
    return await view_response(request, name, args, computes(name, fields))


async def view_response(
    request: Request, name: str, args: tuple[Any, ...], computing: bool
) -> HTMLResponse:
    """The page ``name`` (:data:`whichgpu.web.views.VIEWS`), computed in the server's
    compute processes or a worker thread when it asks for a computation
    (:func:`whichgpu.web.pool.run_view`)."""
    service: Service = request.app.state.service
    status, html = await run_view(service, request.state.language, name, args, computing)
    return HTMLResponse(html, status)


def _answer_page(
    request: Request,
    template: str,
    problem: Problem | None,
    context: Callable[[], dict[str, Any]],
) -> HTMLResponse:
    """A catalog page (compare, catalog, one GPU: lookups, no computation) in the request's
    language, with the problem, and its status, if there is one."""
    query = parse_qs(request.url.query)
    status, html = html_page(
        request.state.language, request.url.path, query, template, context, problem
    )
    return HTMLResponse(html, status)


def add_pages(app: FastAPI) -> None:
    """The server-rendered pages: recommend (and /), compare, catalog, one GPU."""

    @app.get("/", include_in_schema=False)
    async def home(request: Request) -> Response:
        return await recommend_page(request)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        """The icon browsers ask for at the root (the pages link the SVG itself)."""
        from starlette.responses import RedirectResponse

        return RedirectResponse("/static/favicon.svg", status_code=301)

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
        if problem is not None and problem.status == 413:
            return HTMLResponse(error_page(problem, language), 413)
        args = (request.url.path, fields, lists, config, config_name, computing, problem)
        response = await view_response(request, "recommend", args, computing)
        if computing and problem is None and response.status_code == 200:
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
        return await query_view(request, "fit")

    @app.get("/estimate", include_in_schema=False)
    async def estimate_page(request: Request) -> Response:
        return await query_view(request, "estimate")

    @app.get("/mig", include_in_schema=False)
    async def mig_page(request: Request) -> Response:
        return await query_view(request, "mig")

    @app.get("/catalog/{gpu}", include_in_schema=False)
    async def gpu_page(request: Request, gpu: str) -> Response:
        service: Service = request.app.state.service
        from whichgpu.models import resolve_gpu

        found, problem = await run_off_loop(
            request.state.language, lambda: resolve_gpu(service.catalog(), gpu)
        )
        return _answer_page(
            request,
            "gpu.html",
            problem,
            lambda: gpu_context(service, found),
        )
