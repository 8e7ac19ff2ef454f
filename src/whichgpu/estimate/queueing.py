"""Waiting for a slot: an engine that batches at most ``c`` sequences is a queue with ``c``
servers. Requests arrive at random (Poisson, rate λ) and hold a slot for their residence
time ``S`` (their prefill and their decode); the M/M/c model (Erlang, 1917; Kleinrock,
"Queueing Systems", Vol. 1, 1975, §3.5) gives the chance that a request waits and how long.
"""

from __future__ import annotations

import math
from functools import lru_cache


@lru_cache(maxsize=8192)
def erlang_c(servers: int, offered: float) -> float:
    """The probability that an arrival waits, with ``offered = λ·S`` erlangs on ``servers``
    (Kleinrock eq. 3.40), by the Erlang-B recurrence (stable for thousands of servers);
    once per (servers, offered): a served plan's searches ask the same points again (a
    full-catalog serving recommend asks 11,600 times, 3,600 of them distinct)."""
    if offered <= 0:
        return 0.0
    if offered >= servers:
        return 1.0
    if servers - offered > 8 * math.sqrt(offered) + 10:
        # all servers busy is a Poisson(offered) count beyond 8 standard deviations: < 1e-12
        return 0.0
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    rho = offered / servers
    return blocking / (1 - rho + rho * blocking)


def waiting_s(servers: int, offered: float, service_s: float, quantile: float = 0.5) -> float:
    """The ``quantile`` of the time an arrival waits for a slot: ``P(W > t) = C·e^{−(c−a)t/S}``
    (Kleinrock eq. 3.42), so ``t_q = S/(c−a)·ln(C/(1−q))`` where that is positive, else 0."""
    if offered >= servers:
        return math.inf
    waits = erlang_c(servers, offered)
    tail = 1.0 - quantile
    if waits <= tail:
        return 0.0
    return service_s / (servers - offered) * math.log(waits / tail)


def mean_waiting_s(servers: int, offered: float, service_s: float) -> float:
    """The mean time an arrival waits for a slot, ``W_q = C·S/(c − a)`` (Kleinrock eq. 3.41;
    M/M/1: ``ρ·S/(1 − ρ)``): what a benchmark's mean time to first token averages."""
    if offered >= servers:
        return math.inf
    return erlang_c(servers, offered) * service_s / (servers - offered)
