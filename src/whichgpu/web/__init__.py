"""``whichgpu serve``: the web app and HTTP API (FastAPI, Jinja2, uvicorn).

Nothing here is imported by ``import whichgpu`` or by the other commands: FastAPI and Jinja2
load only when :func:`create_app` or :func:`serve` is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from whichgpu.catalog.store import Catalog

__all__ = ["create_app", "serve"]


def create_app(catalog: Catalog | None = None) -> FastAPI:
    """The ASGI app: pages at ``/``, ``/compare``, ``/catalog``; the API under ``/api/v1/``."""
    from whichgpu.web.app import create_app as build

    return build(catalog)


def serve(host: str, port: int) -> None:
    """Run the app with uvicorn on ``host``:``port`` until interrupted."""
    import uvicorn

    uvicorn.run(create_app(), host=host, port=port, log_level="info", access_log=False)
