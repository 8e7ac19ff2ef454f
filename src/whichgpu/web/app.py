"""The FastAPI application: middleware (body limits, language, security headers), error
handlers, the API router and the server-rendered pages."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from markupsafe import Markup
from pydantic import BaseModel
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from whichgpu.catalog.store import Catalog
from whichgpu.i18n import _, fmt
from whichgpu.web import api
from whichgpu.web.core import (
    LANGUAGE_COOKIE,
    LANGUAGES,
    MAX_BODY_BYTES,
    MAX_CONFIG_BYTES,
    FieldError,
    Problem,
    Service,
    json_bytes,
    memo_key,
    pick_language,
    recommend_form,
    run,
    speaking,
)
from whichgpu.web.templating import render

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Paths whose bodies may carry an uploaded config.json.
UPLOAD_PATHS = ("/recommend",)

CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)


class Gate:
    """Pure ASGI middleware: the request's language (``?lang=``, cookie, Accept-Language),
    a cap on body size (413 before the body is read where Content-Length says so) and the
    security headers of every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        asked = (query.get("lang") or [None])[0]
        cookie = None
        if "cookie" in headers:
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(headers["cookie"])
            except Exception:  # a malformed Cookie header is ignored, as browsers do
                jar = SimpleCookie()
            morsel = jar.get(LANGUAGE_COOKIE)
            cookie = morsel.value if morsel is not None else None
        language = pick_language(asked, cookie, headers.get("accept-language"))
        scope.setdefault("state", {})["language"] = language
        extra = [
            (b"content-language", language.encode()),
            (b"vary", b"Accept-Language, Cookie"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"content-security-policy", CSP.encode()),
        ]
        if asked is not None and asked.strip().lower() == language:
            value = f"{LANGUAGE_COOKIE}={language}; Path=/; Max-Age=31536000; SameSite=Lax"
            extra.append((b"set-cookie", value.encode()))
        path = scope.get("path", "")
        limit = MAX_BODY_BYTES + (MAX_CONFIG_BYTES if path in UPLOAD_PATHS else 0)
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await self._too_large(scope, send, limit, extra)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413)
            return message

        async def decorated(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, limited, decorated)

    async def _too_large(self, scope: Scope, send: Send, limit: int, extra: list[Any]) -> None:
        with speaking(scope["state"]["language"]):
            problem = too_large(scope.get("path", ""), limit)
            if scope.get("path", "").startswith(api.PREFIX):
                body, kind = json_bytes(problem.doc()), b"application/json"
            else:
                body = error_page(problem, scope["state"]["language"]).encode()
                kind = b"text/html; charset=utf-8"
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), *extra]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def too_large(path: str, limit: int) -> Problem:
    if path in UPLOAD_PATHS:
        message = _("the request is too large: an uploaded config.json may be {size} KiB")
        size = MAX_CONFIG_BYTES // 1024
    else:
        message = _("the request body is too large: at most {size} KiB")
        size = limit // 1024
    return Problem(413, "too_large", message.format(size=size))


# -- errors --------------------------------------------------------------------------------


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The request model that holds the field at ``loc`` (for "valid fields" in messages)."""
    from typing import get_args

    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = current.model_fields.get(str(part))
        if info is None:
            return None
        stack, found = [info.annotation], None
        while stack:
            kind = stack.pop()
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                found = kind
                break
            stack.extend(get_args(kind))
        current = found
    return current


def validation_problem(request: Request, error: RequestValidationError) -> Problem:
    """Pydantic's errors as one line: each field's path and what is valid."""
    parts, first_field = [], None
    for item in error.errors()[:3]:
        loc = tuple(item.get("loc", ()))
        where = [str(p) for p in loc[1:]] if loc and loc[0] in ("body", "query", "path") else []
        field = ".".join(where) or (str(loc[0]) if loc else "body")
        first_field = first_field or field
        text = str(item.get("msg", ""))
        if item.get("type") == "extra_forbidden":
            model = api.BODY_MODELS.get(request.url.path)
            holder = _model_at(model, loc[1:-1]) if model is not None else None
            valid = ", ".join(holder.model_fields) if holder is not None else ""
            text = fmt(_("unknown field; valid: {valid}"), valid=valid)
        elif item.get("type") == "missing":
            text = _("required")
        elif item.get("type") == "json_invalid":
            text = _("not valid JSON")
        elif "input" in item and item.get("type") not in ("model_attributes_type", "dict_type"):
            text = fmt(_("{problem} (got {value!r})"), problem=text, value=item["input"])
        parts.append(f"{field}: {text}")
    message = "; ".join(parts) or _("invalid request")
    return Problem(422, "invalid_input", message, first_field)


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


# -- the app -------------------------------------------------------------------------------


def create_app(catalog: Catalog | None = None) -> FastAPI:
    """The web app and HTTP API over ``catalog`` (default: the shipped catalog with the
    prices of the user's config file, loaded on first use)."""
    app = FastAPI(
        title="whichgpu",
        version="1",
        summary="Which GPU should I rent or buy for this job, how many, for how long, at what "
        "cost?",
        description="The JSON of each route is the matching command's `--json` (docs/json.md).",
        docs_url=None,  # Swagger UI loads from a CDN: the app serves every asset itself
        redoc_url=None,
    )
    app.state.service = Service(catalog)
    app.add_middleware(Gate)
    app.include_router(api.router)
    static = resources.files("whichgpu.web") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        with speaking(request.state.language):
            problem = validation_problem(request, error)
            if request.url.path.startswith(api.PREFIX):
                return api.error_response(problem)
            return HTMLResponse(error_page(problem, request.state.language), 422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        language = getattr(request.state, "language", "en")
        with speaking(language):
            if error.status_code == 413:
                problem = too_large(request.url.path, MAX_BODY_BYTES)
            elif error.status_code == 400:  # a body FastAPI cannot decode (not UTF-8 JSON)
                problem = Problem(422, "invalid_input", _("body: not valid JSON"), "body")
            elif error.status_code == 404:
                problem = Problem(
                    404, "not_found", fmt(_("no such page: {path}"), path=request.url.path)
                )
            else:
                problem = Problem(error.status_code, "http_error", str(error.detail))
            if request.url.path.startswith(api.PREFIX):
                response = api.error_response(problem)
            else:
                response = HTMLResponse(error_page(problem, language), problem.status)
        if error.headers:
            response.headers.update(error.headers)
        return response

    @app.exception_handler(Exception)
    async def crash(request: Request, error: Exception) -> Response:
        problem = Problem(500, "internal_error", "internal error (a bug in whichgpu)")
        return api.error_response(problem)

    _pages(app)
    return app


def _page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    language = request.state.language
    query = parse_qs(request.url.query)
    with speaking(language):
        html = render(template, **chrome(language, request.url.path, query), **context)
    return HTMLResponse(html, status)


def _pages(app: FastAPI) -> None:
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
        key = memo_key("page-recommend", fields, lists, digest, language, service.today())
        if computing and problem is None:
            cached = service.memo.get(key)
            if cached is not None:
                return HTMLResponse(cached)
        result: Any = None
        svgs: Any = None
        built_form: Any = None
        if computing and problem is None:

            def compute() -> Any:
                built = recommend_form(fields, lists, config, config_name)
                found = service.recommendation(
                    built.workload, built.objective, built.catalog, built.baseline
                )
                from whichgpu.render.plot import recommendation_svgs

                return built, found, recommendation_svgs(found)

            value, problem = run(language, compute)
            if value is not None:
                built_form, result, svgs = value
        if problem is not None and problem.status == 413:
            return HTMLResponse(error_page(problem, language), 413)
        with speaking(language):
            response = _page(
                request,
                "recommend.html",
                status=problem.status if problem is not None else 200,
                **recommend_context(service, fields, lists, config_name),
                problem=problem,
                form=built_form,
                result=result,
                rows=rows_of(result, bool(fields.get("all"))) if result is not None else [],
                charts=None if svgs is None else tuple(Markup(s) for s in svgs),
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
        value, problem = run(
            request.state.language, lambda: service.comparison(names, markets or None)
        )
        with speaking(request.state.language):
            return _page(
                request,
                "compare.html",
                status=problem.status if problem else 200,
                **compare_context(service, value, names, markets),
                problem=problem,
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
            from whichgpu.web.core import _float

            vram = _float(min_vram, "min_vram") if min_vram else None
            return filter_gpus(service.catalog(), vram, arch or None, features)

        found, problem = run(request.state.language, compute)
        with speaking(request.state.language):
            return _page(
                request,
                "catalog.html",
                status=problem.status if problem else 200,
                **catalog_context(service, found or []),
                filters={"min_vram": min_vram, "arch": arch, "features": features},
                problem=problem,
            )

    @app.get("/catalog/{gpu}", include_in_schema=False)
    async def gpu_page(request: Request, gpu: str) -> Response:
        service: Service = request.app.state.service
        found, problem = run(request.state.language, lambda: service.catalog().resolve(gpu))
        with speaking(request.state.language):
            return _page(
                request,
                "gpu.html",
                status=problem.status if problem else 200,
                **gpu_context(service, found),
                problem=problem,
            )


# -- page contexts -------------------------------------------------------------------------


def recommend_context(
    service: Service, fields: dict[str, str], lists: dict[str, list[str]], config_name: str
) -> dict[str, Any]:
    from whichgpu.models.presets import presets
    from whichgpu.recommend.spec import CAPABILITIES, DEFAULT_MARKETS, KINDS, MARKETS, OBJECTIVES
    from whichgpu.workload import PRECISIONS, QUANT_BITS

    values = {"task": "lora", "model": "llama-2-7b", "objective": "cost", "catalog": "full"}
    values.update(fields)
    return {
        "values": values,
        "checked": {
            "markets": lists.get("markets", list(DEFAULT_MARKETS) if not fields else []),
            "requires": lists.get("requires", []),
        },
        "config_name": config_name,
        "kinds": KINDS,
        "presets": sorted((p.id, p.display_name) for p in presets().values()),
        "precisions": PRECISIONS,
        "quants": tuple(QUANT_BITS),
        "markets": MARKETS,
        "capabilities": CAPABILITIES,
        "objectives": OBJECTIVES,
        "gpus": [(g.id, g.name) for g in service.catalog().gpus],
    }


def hardware(option: Any) -> str:
    hw = option.hardware
    if hw.mig is not None:
        return f"{hw.services}× {hw.mig.profile} / {option.gpus}× {option.gpu.short_name}"
    return f"{option.gpus}× {option.gpu.short_name}"


def rows_of(result: Any, every: bool, top: int = 8) -> list[dict[str, Any]]:
    """The CLI's table: the best option per GPU (or every option), feasible first."""
    from whichgpu.render.recommend_out import best_per_gpu

    options = list(result.options) if every else best_per_gpu(result.options)
    feasible = [o for o in options if o.feasible][: top if not every else None]
    shown = feasible + [o for o in options if not o.feasible][: max(0, top - len(feasible))]
    rows = []
    for rank, option in enumerate(shown, 1):
        first = option.runs[0] if option.runs else None
        if option.feasible:
            status = (
                _("pick") if option is result.pick else (_("Pareto front") if option.pareto else "")
            )
        else:
            status = "; ".join(b.render() for b in option.blockers[:2])
        rows.append(
            {
                "rank": rank,
                "hardware": hardware(option),
                "gpu": option.gpu.id,
                "market": option.market,
                "usd_per_h": option.usd_per_h,
                "time_s": option.time_s,
                "cost_usd": option.cost_usd,
                "throughput": None if first is None else first.throughput,
                "unit": None if first is None else first.unit,
                "status": status,
                "pick": option is result.pick,
                "pareto": option.pareto,
                "feasible": option.feasible,
            }
        )
    return rows


def compare_context(
    service: Service, comparison: Any, names: list[str], markets: list[str]
) -> dict[str, Any]:
    from whichgpu.catalog.records import MARKETS
    from whichgpu.render.tables import (
        SPEC_ROWS,
        _pair,
        _purchase_cell,
        _range_cell,
        _ratio,
        price_citation,
    )

    catalog = service.catalog()
    slots = [*names, "", "", "", ""][: max(4, len(names) + 1)]
    context: dict[str, Any] = {
        "slots": slots,
        "gpus": [(g.id, g.name) for g in catalog.gpus],
        "all_markets": MARKETS,
        "chosen_markets": markets,
        "comparison": comparison,
    }
    if comparison is None:
        return context
    marks: dict[tuple[str, str], list[int]] = {}
    for number, correction in enumerate(comparison.corrections, start=1):
        marks.setdefault((correction.gpu, correction.field), []).append(number)

    def cell(gpu: str, fields: tuple[str, ...], text: str) -> dict[str, Any]:
        return {"text": text, "marks": [n for f in fields for n in marks.get((gpu, f), [])]}

    rows = comparison.gpus
    table = [
        (_(label), [cell(r.gpu.id, fields, how(r.gpu)) for r in rows])
        for label, fields, how in SPEC_ROWS
    ]
    prices = []
    for index, market in enumerate(comparison.markets):
        marked = ("rent",) if index == 0 else ()
        prices.append(
            (
                fmt(_("Rent, {market}"), market=_(market)),
                [cell(r.gpu.id, marked, _range_cell(r.prices.get(market))) for r in rows],
            )
        )
    for condition in ("new", "used"):
        prices.append(
            (
                fmt(_("Buy, {condition}"), condition=_(condition)),
                [cell(r.gpu.id, (), _purchase_cell(r, condition)) for r in rows],
            )
        )
    base = comparison.baseline.short_name
    derived = [
        (fmt(_("Bandwidth vs {gpu}"), gpu=base), [_ratio(r.derived.bandwidth_ratio) for r in rows]),
        (
            fmt(_("FP16 tensor vs {gpu}"), gpu=base),
            [_ratio(r.derived.fp16_tensor_ratio) for r in rows],
        ),
        (fmt(_("FP64 vs {gpu}"), gpu=base), [_ratio(r.derived.fp64_ratio) for r in rows]),
        (_("FP16 TFLOPS per $/h"), [_pair(r.derived.fp16_tflops_per_usd_per_h) for r in rows]),
        (_("GB of VRAM per $/h"), [_pair(r.derived.gb_per_usd_per_h) for r in rows]),
        (_("Hours per $100"), [_pair(r.derived.hours_per_100_usd) for r in rows]),
    ]
    today = service.today()
    listings = []
    for r in rows:
        for market, found in r.prices.items():
            line = price_citation(found.low, catalog, today)
            if found.high_usd_per_h > found.low_usd_per_h:
                line += " … " + price_citation(found.high, catalog, today)
            listings.append((r.gpu.name, _(market), line))
    context.update(
        spec_rows=table,
        price_rows=prices,
        derived_rows=derived,
        corrections=[c.note.render() for c in comparison.corrections],
        listings=listings,
    )
    return context


def catalog_context(service: Service, found: list[Any]) -> dict[str, Any]:
    from whichgpu.catalog.filters import FEATURES
    from whichgpu.catalog.prices import rent_range
    from whichgpu.fields import format_field, format_usd_range
    from whichgpu.render.tables import gpu_features

    catalog = service.catalog()
    rows = []
    for gpu in found:
        rent = rent_range(catalog, gpu.id)
        ends = None
        if rent is not None:
            ends = [(rent.low.provider, rent.low.as_of)]
            if rent.high is not rent.low and rent.high_usd_per_h != rent.low_usd_per_h:
                ends.append((rent.high.provider, rent.high.as_of))
        rows.append(
            {
                "id": gpu.id,
                "name": gpu.short_name,
                "architecture": gpu.architecture,
                "vram": f"{format_field('vram_gb', gpu.vram_gb)} {gpu.memory_type}",
                "bandwidth": format_field(
                    "memory_bandwidth_gb_per_s", gpu.memory_bandwidth_gb_per_s
                ),
                "fp16": format_field("fp16_tensor_dense_tflops", gpu.fp16_tensor_dense_tflops),
                "fp64": format_field("fp64_tflops", gpu.fp64_tflops),
                "features": gpu_features(gpu),
                "rent": None
                if rent is None
                else format_usd_range(rent.low_usd_per_h, rent.high_usd_per_h),
                "ends": ends,
            }
        )
    return {
        "rows": rows,
        "features": tuple(FEATURES),
        "architectures": sorted({g.architecture for g in catalog.gpus}),
        "sources": sorted(catalog.sources, key=lambda s: (s.kind, s.id)),
        "count": len(catalog.gpus),
    }


def gpu_context(service: Service, gpu: Any) -> dict[str, Any]:
    if gpu is None:
        return {"gpu": None}
    from whichgpu.catalog.prices import ranges_by_market
    from whichgpu.catalog.records import GPU_SPEC_FIELDS, MARKETS
    from whichgpu.fields import FIELDS, format_field, format_usd_range
    from whichgpu.render.tables import _range_cell, price_citation

    catalog, today = service.catalog(), service.today()
    specs = []
    for name in GPU_SPEC_FIELDS:
        citation = catalog.citation(gpu.id, name)
        specs.append(
            {
                "label": _(FIELDS[name][0]) if name in FIELDS else name,
                "value": format_field(name, getattr(gpu, name)),
                "source": citation.source,
                "note": citation.note,
            }
        )
    markets = []
    for market, found in ranges_by_market(catalog, gpu.id, MARKETS).items():
        listed = sorted(catalog.prices_for(gpu.id, [market]), key=lambda p: p.price_usd_per_h)
        markets.append(
            (_(market), _range_cell(found), [price_citation(p, catalog, today) for p in listed])
        )
    purchases = []
    for p in catalog.purchase_for(gpu.id):
        source = catalog.source(p.source)
        purchases.append(
            (
                _(p.condition),
                format_usd_range(p.low_usd, p.high_usd),
                source.title if source else p.source,
                p.as_of,
            )
        )
    return {"gpu": gpu, "specs": specs, "markets": markets, "purchases": purchases}


__all__ = ["FieldError", "create_app"]
