"""The FastAPI application: middleware (body limits, language, security headers), error
handlers, the API router (:mod:`.api`) and the pages (:mod:`.pages`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from whichgpu.catalog.store import Catalog
from whichgpu.i18n import _, fmt, speaking
from whichgpu.web import api
from whichgpu.web.core import (
    LANGUAGE_COOKIE,
    MAX_BODY_BYTES,
    MAX_CONFIG_BYTES,
    UPLOAD_PATHS,
    Problem,
    Service,
    json_bytes,
    pick_language,
    too_large,
)
from whichgpu.web.pages import add_pages, error_page

if TYPE_CHECKING:
    from whichgpu.web.pool import ComputePool

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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


# -- the app -------------------------------------------------------------------------------


def create_app(catalog: Catalog | None = None, pool: ComputePool | None = None) -> FastAPI:
    """The web app and HTTP API over ``catalog`` (default: the shipped catalog with the
    prices of the user's config file, loaded on first use); the API's answers computed in
    ``pool``'s worker processes where one is given (they load the default catalog: a pool
    goes with ``catalog=None``), else in worker threads."""
    app = FastAPI(
        title="whichgpu",
        version="1",
        summary="Which GPU should I rent or buy for this job, how many, for how long, at what "
        "cost?",
        description="The JSON of each route is the matching command's `--json` (docs/json.md).",
        docs_url=None,  # Swagger UI loads from a CDN: the app serves every asset itself
        redoc_url=None,
    )
    if pool is not None and catalog is not None:
        raise ValueError("a compute pool's workers load the default catalog")
    app.state.service = Service(catalog, pool)
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

    @app.exception_handler(ClientDisconnect)
    async def disconnected(request: Request, error: ClientDisconnect) -> Response:
        """A connection closed before its request's body was read (by its client, or by
        :mod:`whichgpu.web.guard`: the body deadline, the connection cap): one log line, not
        a traceback."""
        client = f"{request.client.host}:{request.client.port}" if request.client else "-"
        logging.getLogger("uvicorn.error").info(
            "%s %s: connection from %s closed before its body was read (by the client, the "
            "body deadline or the connection cap)", request.method, request.url.path, client,
        )  # fmt: skip
        return Response(status_code=400)  # never sent: the client is gone

    @app.exception_handler(Exception)
    async def crash(request: Request, error: Exception) -> Response:
        problem = Problem(500, "internal_error", "internal error (a bug in whichgpu)")
        return api.error_response(problem)

    add_pages(app)

    def openapi() -> dict[str, Any]:
        """FastAPI's document, with the library's request types as component schemas."""
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi

            document = get_openapi(title=app.title, version=app.version, summary=app.summary,
                                   description=app.description, routes=app.routes)  # fmt: skip
            document.setdefault("components", {}).setdefault("schemas", {}).update(
                api.request_schemas()
            )
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


__all__ = ["create_app"]
