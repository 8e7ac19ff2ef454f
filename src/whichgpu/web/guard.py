"""uvicorn's HTTP/1.1 protocol with a deadline for the first request's headers.

uvicorn times out idle keep-alive connections, but not a connection that opens and never
completes a request: 300 of them were held for over a minute. This protocol closes such a
connection after :data:`HEADER_TIMEOUT_S`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a connection may take to send its first request's headers before it is closed
#: (a client holding connections open without a request ties up nothing for long).
HEADER_TIMEOUT_S = 10.0


class GuardedH11Protocol(H11Protocol):
    """:class:`H11Protocol`, closing a connection whose first request has not begun
    within the header deadline."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_deadline = self.loop.call_later(HEADER_TIMEOUT_S, self._headers_late)

    def _headers_late(self) -> None:
        if self.cycle is None and not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
        super().connection_lost(exc)
