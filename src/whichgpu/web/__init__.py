"""``whichgpu serve``: the web app and HTTP API (FastAPI, Jinja2, uvicorn).

Nothing here is imported by ``import whichgpu`` or by the other commands: FastAPI and Jinja2
load only when :func:`create_app` or :func:`serve` is called.

:func:`serve` runs uvicorn with :class:`whichgpu.web.guard.GuardedH11Protocol`: a deadline on
every phase in which a connection waits on its client (every request's headers, its body, an
idle keep-alive) and a cap on open connections that closes the slowest clients first.
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


#: Seconds an idle keep-alive connection stays open between requests (uvicorn's
#: ``timeout_keep_alive``: no byte of a next request in that time). Long enough for a page's
#: next request (its stylesheet and script, a form's answer), short enough that idle browsers
#: hold few connections; a next request begun but not finished is closed by the guard's
#: header deadline instead.
KEEP_ALIVE_S = 5


def serve(host: str, port: int, workers: int = 1) -> None:
    """Run the app with uvicorn on ``host``:``port`` until interrupted: one server process
    whose API answers are computed by ``workers`` processes taking requests from one queue
    (:mod:`whichgpu.web.pool`; the app is stateless, so several servers can also sit behind
    a load balancer).

    Connections are guarded (:mod:`whichgpu.web.guard`): a connection whose request's
    headers are not complete within :data:`~whichgpu.web.guard.HEADER_TIMEOUT_S` of its
    opening or of its previous response is closed, as is one whose body has not arrived
    within :data:`~whichgpu.web.guard.BODY_TIMEOUT_S` of its headers, and an idle keep-alive
    connection after :data:`KEEP_ALIVE_S`; at most
    :func:`~whichgpu.web.guard.connection_cap` connections are open (1,000, or fewer under a
    low descriptor limit, less those kept for the ``workers``), one more closing those that
    have waited longest on their client, never one whose request is being computed."""
    import uvicorn

    from whichgpu.web.guard import guarded_protocol, raise_descriptor_limit
    from whichgpu.web.pool import ComputePool

    raise_descriptor_limit(workers)

    pool = ComputePool(workers)
    try:
        uvicorn.run(
            create_app(pool=pool),
            host=host,
            port=port,
            log_level="info",
            access_log=False,
            http=guarded_protocol(workers),
            ws="none",  # no websockets: nor the websockets package's deprecated legacy API
            timeout_keep_alive=KEEP_ALIVE_S,
        )
    finally:
        pool.close()
