"""``whichgpu serve``: the web app and HTTP API (FastAPI, Jinja2, uvicorn).

Nothing here is imported by ``import whichgpu`` or by the other commands: FastAPI and Jinja2
load only when :func:`create_app` or :func:`serve` is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from whichgpu.catalog.store import Catalog
    from whichgpu.web.pool import ComputePool

__all__ = ["create_app", "serve"]


def create_app(catalog: Catalog | None = None, pool: ComputePool | None = None) -> FastAPI:
    """The ASGI app: pages at ``/``, ``/compare``, ``/catalog``; the API under ``/api/v1/``,
    computed in ``pool``'s processes where one is given (else in worker threads)."""
    from whichgpu.web.app import create_app as build

    return build(catalog, pool)


#: Seconds an idle keep-alive connection stays open between requests.
KEEP_ALIVE_S = 5


def serve(host: str, port: int, workers: int = 1) -> None:
    """Run the app with uvicorn on ``host``:``port`` until interrupted: one server process
    whose API answers are computed by ``workers`` processes taking requests from one queue
    (:mod:`whichgpu.web.pool`; the app is stateless, so several servers can also sit behind
    a load balancer); connections that send no request within
    :data:`whichgpu.web.guard.HEADER_TIMEOUT_S` are closed, and idle keep-alive connections
    after :data:`KEEP_ALIVE_S`."""
    import uvicorn

    from whichgpu.web.guard import GuardedH11Protocol
    from whichgpu.web.pool import ComputePool

    pool = ComputePool(workers)
    try:
        uvicorn.run(
            create_app(pool=pool),
            host=host,
            port=port,
            log_level="info",
            access_log=False,
            http=GuardedH11Protocol,
            ws="none",  # no websockets: nor the websockets package's deprecated legacy API
            timeout_keep_alive=KEEP_ALIVE_S,
        )
    finally:
        pool.close()
