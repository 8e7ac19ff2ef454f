"""The API's computations in worker processes (``whichgpu serve --workers N``): N processes
take the requests from one queue, so every core computes and no connection waits behind a
busy process while another is idle; a computation past its time limit has its process
terminated and replaced (pebble's ``ProcessPool``), so the worker is freed at the limit, not
when its work ends, as a thread would be.

A task is a :class:`~whichgpu.web.core.Service` method's name and plain arguments (the
request's body, its query values), or a page's name in :data:`whichgpu.web.views.VIEWS` and
the form's fields: what crosses to the worker is that and the answer's JSON bytes or the
page's HTML, never a live object. Each worker holds its own ``Service`` (the shipped catalog with
the user's prices, loaded once); the memo of answers stays in the server's process.
"""

from __future__ import annotations

import asyncio
import pickle
from typing import TYPE_CHECKING, Any

from whichgpu.web import core
from whichgpu.web.core import (
    Problem,
    Service,
    json_bytes,
    run,
    run_off_loop,
    timeout_problem,
    worker_died_problem,
)
from whichgpu.web.labels import page_field_name
from whichgpu.web.views import VIEWS

if TYPE_CHECKING:
    from pebble import ProcessPool

#: The Service methods whose work grows with the request: computed in the compute pool.
POOLED = frozenset({"fit_doc", "estimate_doc", "recommend_doc", "mig_doc"})


async def run_call(
    service: Service, language: str, method: str, args: tuple[Any, ...]
) -> tuple[bytes | None, Problem | None]:
    """``service.method(*args)`` as JSON bytes, or the problem: a computation whose work
    grows with the request (:data:`POOLED`) in the server's compute processes where it has
    them (``whichgpu serve --workers N``), the catalog's lists and the rest in a worker
    thread (:func:`~whichgpu.web.core.run_off_loop`): milliseconds, which no queue of long
    computations holds up."""
    if service.pool is not None and method in POOLED:
        return await service.pool.call(language, method, args, core.COMPUTE_TIMEOUT_S)
    result: tuple[bytes | None, Problem | None] = await run_off_loop(
        language, lambda: document_bytes(service, method, args)
    )
    return result


async def run_view(
    service: Service, language: str, name: str, args: tuple[Any, ...], computing: bool
) -> tuple[int, str]:
    """The page ``name`` (:data:`whichgpu.web.views.VIEWS`) as its status and HTML: one
    that computes rendered in the compute processes where the server has them, else in a
    worker thread; the empty form at once (nothing to compute: it never queues behind the
    computations). A computation without an answer (past its time limit) shows the form
    with the problem, what the user typed kept."""
    view = VIEWS[name]
    if computing:
        page: tuple[int, str] | None
        if service.pool is not None:
            page, problem = await service.pool.view(language, name, args, core.COMPUTE_TIMEOUT_S)
        else:
            page, problem = await run_off_loop(
                language, lambda: view(service, language, *args), namer=page_field_name
            )
        if page is not None:
            return page
        return view(service, language, *args, failed=problem)  # the form: no computation
    return view(service, language, *args)


def document_bytes(service: Service, method: str, args: tuple[Any, ...]) -> bytes:
    """The JSON of ``service.method(*args)``: what a worker thread or a compute process
    answers for one API route, with the family names it read (``h100``) and as what."""
    from whichgpu.catalog.names import recording_family_choices
    from whichgpu.render.read_as import read_as_doc

    with recording_family_choices() as read_as:
        doc = getattr(service, method)(*args)
    if read_as and isinstance(doc, dict):  # the family names it read, and as what
        doc = {**doc, "read_as": read_as_doc(read_as)}
    return json_bytes(doc)


#: Allocations (net of frees) between the worker's young-generation collections.
YOUNG_COLLECTION_ALLOCATIONS = 5000

#: The worker process's own service (set by :func:`_start`).
_service: Service | None = None


def _start() -> None:
    """A worker's initializer: its service, the catalog loaded and the computing modules
    imported before the first task; then what they hold moved out of the cyclic garbage
    collector's sight (``gc.freeze``: long-lived, never garbage, and scanned at every full
    collection otherwise), and the young generation collected every 5,000 allocations net
    of frees instead of CPython's 700 (a recommendation allocates some 10^5 short-lived
    objects, almost none in cycles). Together ~5 % of a distinct recommend's time."""
    global _service
    import gc

    import whichgpu.commands.recommend
    import whichgpu.render.recommend_out  # noqa: F401

    _service = Service()
    _service.catalog()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_ALLOCATIONS, *gc.get_threshold()[1:])


def _call(language: str, method: str, args: tuple[Any, ...]) -> tuple[bytes | None, Any]:
    """``method(*args)`` of the worker's service as JSON bytes, or the problem (in
    ``language``), as :func:`whichgpu.web.core.run` answers in a thread."""
    service = _service
    assert service is not None, "the pool's initializer sets it"
    body, problem = run(language, lambda: document_bytes(service, method, args))
    return body, problem


def _view(language: str, name: str, args: tuple[Any, ...]) -> tuple[Any, Any]:
    """The page ``name`` rendered by the worker's service: its status and HTML."""
    service = _service
    assert service is not None, "the pool's initializer sets it"
    page, problem = run(language, lambda: VIEWS[name](service, language, *args), page_field_name)
    return page, problem


class ComputePool:
    """``workers`` processes computing the API's answers, each within its time limit.

    They start from a fork server where the platform has one (a clean process that has
    imported this module: the server's threads are not forked with it), else spawned;
    ``start_method`` chooses another (the tests fork, so that the workers inherit what they
    patch)."""

    def __init__(self, workers: int, start_method: str | None = None) -> None:
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
        self._context = multiprocessing.get_context(method)
        if method == "forkserver":
            self._context.set_forkserver_preload([__name__])
        self.workers = workers
        self._pool: ProcessPool = self._new_pool()

    def _new_pool(self) -> ProcessPool:
        from pebble import ProcessPool

        return ProcessPool(max_workers=self.workers, initializer=_start, context=self._context)

    async def call(
        self, language: str, method: str, args: tuple[Any, ...], timeout_s: float
    ) -> tuple[bytes | None, Problem | None]:
        """The answer of ``method(*args)``, or a problem: 503 past ``timeout_s`` (counted
        from the request: a task still queued then is dropped, a running one has its process
        terminated), 500 if its process died."""
        result: tuple[bytes | None, Problem | None] = await self._run(
            _call, (language, method, args), language, timeout_s
        )
        return result

    async def view(
        self, language: str, name: str, args: tuple[Any, ...], timeout_s: float
    ) -> tuple[tuple[int, str] | None, Problem | None]:
        """The page ``name`` (:data:`whichgpu.web.views.VIEWS`) as its status and HTML, or
        a problem, as :meth:`call` answers."""
        result: tuple[tuple[int, str] | None, Problem | None] = await self._run(
            _view, (language, name, args), language, timeout_s
        )
        return result

    async def _run(
        self, task: Any, args: tuple[Any, ...], language: str, timeout_s: float
    ) -> tuple[Any, Any]:
        """``task(*args)`` in a worker. The arguments are test-pickled here, in the request's
        thread, so that what cannot be pickled fails this request alone: pebble pickles in
        its scheduler thread, whose death broke every later request (a 600-level body did;
        such a body is refused before it gets here, :mod:`whichgpu.untrusted`). A pool found
        broken all the same is replaced, once."""
        from pebble import ProcessExpired

        try:
            pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL)  # what pebble will do
        except (RecursionError, pickle.PicklingError, TypeError, ValueError):
            return None, Problem(500, "internal_error", "internal error (a bug in whichgpu)")
        try:
            future = self._pool.schedule(task, args=args, timeout=timeout_s)
        except RuntimeError:  # the pool's own threads died: a fresh pool, then once more
            self._replace_pool()
            future = self._pool.schedule(task, args=args, timeout=timeout_s)
        try:
            value, problem = await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)
        except TimeoutError:  # the worker's own limit, or the request's (queued, then run)
            future.cancel()  # type: ignore[no-untyped-call]
            return None, timeout_problem(language, timeout_s)
        except ProcessExpired:
            return None, worker_died_problem(language)
        except asyncio.CancelledError:  # the client went away: so does its computation
            future.cancel()  # type: ignore[no-untyped-call]
            raise
        return value, problem

    def _replace_pool(self) -> None:
        """A new pool in place of a broken one (its workers stopped, not awaited)."""
        broken, self._pool = self._pool, self._new_pool()
        broken.stop()  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Let the workers finish what they run (each within its limit), then stop them."""
        self._pool.close()  # type: ignore[no-untyped-call]
        self._pool.join()
