"""uvicorn's HTTP/1.1 protocol with a deadline on every phase a connection waits on its
client, and a cap on open connections.

uvicorn alone times out only a keep-alive connection on which not one byte arrives: a
client that sends one byte of its next request, or of a body, and then waits, held its
connection for ever, and 300 such connections (under a 256-descriptor limit) starved the
server of descriptors, so that a cheap GET timed out. Here:

* every request's headers must be complete within :data:`HEADER_TIMEOUT_S` of the moment
  the connection began waiting for them (its opening, or the end of the previous
  response), else the connection is closed;
* a request's whole body must arrive within :data:`BODY_TIMEOUT_S` of its headers, else
  the connection is closed (the app's ``receive()`` then says the client disconnected);
* at most :func:`connection_cap` connections are open: one more closes those that wait on
  their client (for headers, or for the rest of a body), the longest waiting first, so
  slow clients never starve a prompt one; a connection whose request the app is computing
  is never closed for it.

An idle keep-alive connection is still closed by uvicorn after ``timeout_keep_alive``
(:data:`whichgpu.web.KEEP_ALIVE_S`). The module's constants are read when used, so that
tests can shorten them.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import logging
import sys
from typing import Any, ClassVar, Literal

from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a connection may take, from its opening or from the end of its previous
#: response, to send a request's headers; then it is closed. A browser or an HTTP library
#: sends its headers in one write (a few hundred bytes), so 10 s is far above any real
#: client, while a client that holds connections without completing a request holds each
#: for no longer.
HEADER_TIMEOUT_S = 10.0

#: Seconds a request's whole body may take to arrive once its headers have; then the
#: connection is closed. The largest body the app reads is 1 MiB + 64 KiB (the recommend
#: form's ``config.json`` upload with its fields; an API body is at most 64 KiB): 30 s lets
#: that arrive at ~36 KiB/s (~0.3 Mbit/s, a poor mobile uplink), and an API body at ~2 KiB/s,
#: while a client sending a byte now and then frees its connection within 30 s.
BODY_TIMEOUT_S = 30.0

#: The most connections open at once, whatever the descriptor limit. Far above what the
#: server answers (tens of computed requests a second a core; the catalog's lists in
#: milliseconds), so a legitimate client is never turned away by it, while it bounds what
#: connections can hold: each its descriptor, its buffers and the body being read (at most
#: ~1 MiB each, ~1 GiB in all).
MAX_CONNECTIONS = 1000

#: Descriptors of the server's process kept for everything but connections and the compute
#: pool: measured, 15 (stdio, the listening socket, the event loop's selector and
#: self-pipe, the log files), plus the files the app opens while it answers (a static file
#: being sent, the catalog and templates read at first use) and room for the connections
#: the event loop accepts in one go before any of them is counted here.
FD_RESERVE = 64

#: Descriptors kept for each compute process (``whichgpu serve --workers``): measured, 2
#: pipes each (17 descriptors with 1 worker, 31 with 8, 143 with 64), doubled for a worker
#: being replaced (past its time limit) while its successor starts.
FDS_PER_WORKER = 4

#: Seconds between two warnings that the cap closed connections: one line a minute says an
#: attack (or a cap too low) is under way without a line for each connection closed.
CAP_WARNING_INTERVAL_S = 60.0

_logger = logging.getLogger("uvicorn.error")


class _CapWarning:
    """When the cap was last warned of (the loop's clock), and how many connections it has
    closed since."""

    at = float("-inf")
    closed = 0


def raise_descriptor_limit(workers: int = 0) -> None:
    """Raise the process's soft limit on open descriptors towards what the cap can use
    (:data:`MAX_CONNECTIONS` and the reserve), within the hard limit, as servers do at their
    start (nginx's ``worker_rlimit_nofile``): under a low soft limit a burst of connections
    runs the process out of descriptors before the cap can act (asyncio then stops
    accepting for a second). Called by ``serve`` before anything reads the limit."""
    if sys.platform == "win32":
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_CONNECTIONS + FD_RESERVE + FDS_PER_WORKER * workers
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    target = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    descriptor_limit.cache_clear()


@functools.cache
def descriptor_limit() -> int | None:
    """The process's soft limit on open descriptors (``RLIMIT_NOFILE``), read once (after
    :func:`raise_descriptor_limit`), or ``None`` where there is none (unlimited, or no
    ``resource`` module: Windows)."""
    if sys.platform == "win32":
        return None
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def connection_cap(workers: int = 0) -> int:
    """The most connections the server keeps open: :data:`MAX_CONNECTIONS`, or fewer where
    the descriptor limit, less :data:`FD_RESERVE` and :data:`FDS_PER_WORKER` for each of
    the ``workers`` compute processes, leaves fewer (at least one). Under the usual soft
    limit of 1,024 and one worker: 956."""
    limit = descriptor_limit()
    if limit is None:
        return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, limit - FD_RESERVE - FDS_PER_WORKER * workers))


class GuardedH11Protocol(H11Protocol):
    """:class:`H11Protocol` with the deadlines and the connection cap of this module.

    A connection is in one of three phases: ``headers`` (waiting for a request's headers:
    since it opened, or since its previous response ended), ``body`` (the headers are in,
    the body still arriving) and ``app`` (the request is read: the app computes and
    answers). The first two wait on the client: each has its deadline, and the cap closes
    such connections; the third waits on the server and is never closed here.
    """

    #: The server's compute processes, whose descriptors :func:`connection_cap` keeps:
    #: set by :func:`guarded_protocol` (0: the app computes in threads).
    compute_workers: ClassVar[int] = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._phase: Literal["headers", "body", "app"] = "headers"
        #: The request cycle that was current when the connection began waiting for the
        #: next request's headers (``None`` for its first): a new cycle is the new request.
        self._previous: object = None
        #: When (the loop's clock) the connection began waiting for its current request.
        self.waiting_since = 0.0

    # the phases ----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_request()
        self._enforce_cap()

    def handle_events(self) -> None:
        super().handle_events()
        if self._phase == "headers" and self.cycle is not None and self.cycle is not self._previous:
            self._phase = "body"  # the headers are in (a request cycle began)
            self._arm(BODY_TIMEOUT_S)
        if self._phase == "body" and not self.cycle.more_body:
            self._phase = "app"  # the body is in too: the app's turn, without a deadline
            self._disarm()

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._await_request()  # before uvicorn reads a pipelined request
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _await_request(self) -> None:
        """Wait for the next request's headers, within :data:`HEADER_TIMEOUT_S`."""
        self._phase = "headers"
        self._previous = self.cycle
        self.waiting_since = self.loop.time()
        self._arm(HEADER_TIMEOUT_S)

    @property
    def waiting_on_client(self) -> bool:
        """Whether the connection waits on its client (for headers or for a body), not on
        the app, and is still open."""
        return self._phase != "app" and not self.transport.is_closing()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._late)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _late(self) -> None:
        self._deadline = None
        if self.waiting_on_client:
            self.transport.close()  # the app, if it waits for a body, is told of a disconnect

    # the cap -------------------------------------------------------------------------------

    def _enforce_cap(self) -> None:
        """Over :func:`connection_cap`, close the connections that have waited longest on
        their client (this new one among them, the most recent), as many as are over."""
        cap = connection_cap(self.compute_workers)
        if len(self.connections) <= cap:
            return
        open_ = [c for c in self.connections if not c.transport.is_closing()]
        excess = len(open_) - cap
        if excess <= 0:
            return
        waiting = [c for c in open_ if isinstance(c, GuardedH11Protocol) and c.waiting_on_client]
        for connection in heapq.nsmallest(excess, waiting, key=lambda c: c.waiting_since):
            connection.transport.close()
            _CapWarning.closed += 1
        now = self.loop.time()
        if _CapWarning.closed and now - _CapWarning.at >= CAP_WARNING_INTERVAL_S:
            _logger.warning(
                "connection cap (%d) reached: closed %d connection(s) waiting on their client, "
                "the longest waiting first, since the last such warning",
                cap,
                _CapWarning.closed,
            )
            _CapWarning.at, _CapWarning.closed = now, 0


def guarded_protocol(workers: int) -> type[GuardedH11Protocol]:
    """:class:`GuardedH11Protocol` for a server with ``workers`` compute processes (their
    descriptors kept out of the connection cap)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"compute_workers": workers})
