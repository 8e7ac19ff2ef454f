"""Load benchmark of the HTTP API (not a test): ``POST /api/v1/recommend`` from many
concurrent clients against the web app served as ``whichgpu serve`` serves it (uvicorn);
``--pages``: the recommend page (``GET /recommend?...``, its table and charts) instead.

    python bench/load.py [--clients 50] [--seconds 10] [--distinct 1] [--processes N]
                         [--workers 1] [--pages]

Starts the server in its own process on 127.0.0.1, waits until it answers, then runs
CLIENTS concurrent users for SECONDS, each an ``httpx.AsyncClient`` loop with its own
keep-alive connection, spread over N client processes (default: the CPUs but one, at most
4: one Python process cannot generate this load by itself and would measure itself). Prints
requests/s, latency p50/p90/p99/max, errors and the server's CPU time. ``--distinct K``
cycles through K different workloads (other sizes and sequence lengths: all but the first
computed during the run, so K > 1 measures uncached computations).

Target: p99 under 100 ms at 50 concurrent clients with no errors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import httpx

ROUTE = "/api/v1/recommend"
PAGE = "/recommend"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def workloads(distinct: int) -> list[dict[str, object]]:
    """``distinct`` LoRA workloads differing in job size and sequence length: each its own
    computation (a size alone changes only the time and cost, which the estimators' caches
    of the job's shape would serve)."""
    return [
        {
            "name": "bench",
            "constraints": {"budget_usd": 500},
            "components": [
                {"kind": "lora", "model": "llama-2-7b", "tokens": f"{100 + i}M", "batch": 2,
                 "seq": 1024 + 8 * i}
            ],
            "objective": "cost",
        }
        for i in range(distinct)
    ]  # fmt: skip


def page_query(body: dict[str, object]) -> str:
    """The recommend page's query asking what ``body`` asks the API."""
    from urllib.parse import urlencode

    (component,) = body["components"]  # type: ignore[misc]
    fields = {"task": component["kind"], **{k: v for k, v in component.items() if k != "kind"}}
    fields["budget_usd"] = body["constraints"]["budget_usd"]  # type: ignore[index]
    fields["objective"] = body["objective"]
    return f"{PAGE}?{urlencode(fields)}"


async def ask(client: httpx.AsyncClient, body: dict[str, object], pages: bool) -> httpx.Response:
    if pages:
        return await client.get(page_query(body))
    return await client.post(ROUTE, json=body)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux /proc; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(port: int, workers: int = 1) -> subprocess.Popen[bytes]:
    """The server as ``whichgpu serve --workers N`` runs it (uvicorn, its protocol and
    timeouts, N compute processes)."""
    code = f"from whichgpu.web import serve; serve('127.0.0.1', {port}, {workers})"
    return subprocess.Popen([sys.executable, "-c", code])


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and its children (the compute processes)."""
    total = cpu_seconds(pid)
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid:
            total += tree_cpu_seconds(int(entry))
    return total


async def wait_ready(
    url: str, bodies: list[dict[str, object]], pages: bool, timeout: float = 30.0
) -> None:
    """Until the server answers; then the first workload once (the catalog load)."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        while True:
            try:
                if (await client.get("/api/v1/gpus")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            await asyncio.sleep(0.1)
        (await ask(client, bodies[0], pages)).raise_for_status()


@dataclass(frozen=True)
class Run:
    """What every client process runs: against ``url`` for ``seconds``, user ``n`` asking
    ``bodies[n]``, then ``bodies[n + step]``… (``pages``: as the recommend page)."""

    url: str
    step: int
    seconds: float
    bodies: list[dict[str, object]]
    pages: bool


async def users(run: Run, first: int, count: int) -> tuple[list[float], dict[str, int], float]:
    url, step, seconds, bodies, pages = run.url, run.step, run.seconds, run.bodies, run.pages
    latencies: list[float] = []
    errors: dict[str, int] = {}
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=url, limits=limits, timeout=30) for _ in range(count)]
    stop = time.perf_counter() + seconds

    async def loop(client: httpx.AsyncClient, n: int) -> None:
        while time.perf_counter() < stop:
            body = bodies[n % len(bodies)]
            n += step
            start = time.perf_counter()
            try:
                response = await ask(client, body, pages)
            except httpx.HTTPError as error:
                errors[type(error).__name__] = errors.get(type(error).__name__, 0) + 1
                continue
            if response.status_code != 200:
                key = f"HTTP {response.status_code}"
                errors[key] = errors.get(key, 0) + 1
                continue
            latencies.append(time.perf_counter() - start)

    began = time.perf_counter()
    try:
        await asyncio.gather(*(loop(c, first + i) for i, c in enumerate(clients)))
    finally:
        elapsed = time.perf_counter() - began
        for client in clients:
            await client.aclose()
    return latencies, errors, elapsed


def share(run: Run, first: int, count: int) -> tuple[list[float], dict[str, int], float]:
    """One client process: ``count`` users."""
    return asyncio.run(users(run, first, count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--distinct", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1, help="the server's compute processes")
    parser.add_argument("--processes", type=int, default=min(4, max(1, (os.cpu_count() or 1) - 1)))
    parser.add_argument("--pages", action="store_true", help="GET the recommend page instead")
    args = parser.parse_args()
    bodies = workloads(args.distinct)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, args.workers)
    try:
        asyncio.run(wait_ready(url, bodies, args.pages))
        processes = max(1, min(args.processes, args.clients))
        sizes = [
            args.clients // processes + (i < args.clients % processes) for i in range(processes)
        ]
        firsts = [sum(sizes[:i]) for i in range(processes)]
        plan = Run(url, args.clients, args.seconds, bodies, args.pages)
        cpu_before = tree_cpu_seconds(server.pid)
        with ProcessPoolExecutor(processes) as pool:
            jobs = [pool.submit(share, plan, firsts[i], sizes[i]) for i in range(processes)]
            results = [job.result() for job in jobs]
        elapsed = max(result[2] for result in results)
        cpu = tree_cpu_seconds(server.pid) - cpu_before
    finally:
        server.terminate()
        server.wait(10)
    latencies = sorted(t for found, _errors, _elapsed in results for t in found)
    errors: dict[str, int] = {}
    for _found, errs, _elapsed in results:
        for key, n in errs.items():
            errors[key] = errors.get(key, 0) + n

    def pct(p: float) -> float:
        return 1000 * latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))]

    total = len(latencies) + sum(errors.values())
    asked = f"GET {PAGE}" if args.pages else f"POST {ROUTE}"
    print(
        f"{asked}: {args.clients} concurrent clients in {processes} processes, "
        f"{elapsed:.1f} s, {len(bodies)} distinct workload(s), {os.cpu_count()} CPUs"
    )
    print(f"  requests      {total} ({total / elapsed:,.0f}/s)")
    if latencies:
        mean = 1000 * statistics.fmean(latencies)
        print(
            f"  latency ms    p50 {pct(50):.1f}  p90 {pct(90):.1f}  p99 {pct(99):.1f}  "
            f"max {1000 * latencies[-1]:.1f}  mean {mean:.1f}"
        )
    print(f"  errors        {sum(errors.values())} {errors or ''}")
    print(f"  server CPU    {cpu:.1f} s ({1000 * cpu / max(total, 1):.2f} ms a request)")


if __name__ == "__main__":
    main()
