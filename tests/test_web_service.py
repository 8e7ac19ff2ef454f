"""A service that holds (issue 16): bounded work, computation off the event loop within a
time limit, connections without a request closed, caches that neither leak nor grow.

The server tests run uvicorn on an ephemeral loopback port; nothing leaves the machine."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import serving
from whichgpu.catalog import load_catalog
from whichgpu.web import create_app
from whichgpu.web.core import Memo

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

PRESET = Path(__file__).parents[1] / "src/whichgpu/models/presets/llama-3.1-8b.json"


def _services(count: int, replicas: int) -> dict[str, Any]:
    return {
        "services": [
            {"model": "llama-3.1-8b", "quant": "int4", "replicas": replicas, "name": f"s{i}"}
            for i in range(count)
        ]
    }


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(load_catalog())) as test_client:
        yield test_client


def test_the_mig_request_that_froze_the_server_is_refused_at_once(client: TestClient) -> None:
    """64 services × 1,000 replicas: refused before any work, naming the limit."""
    started = time.perf_counter()
    response = client.post("/api/v1/mig", json=_services(64, 1000))
    assert time.perf_counter() - started < 1.0
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "too_many_replicas" and error["field"] == "services"
    assert error["message"] == "services: 64,000 replicas in all; a MIG plan places at most 4,096"


def test_the_largest_mig_plan_the_limits_allow_is_well_under_a_second(
    client: TestClient,
) -> None:
    """Replicas of one profile are interchangeable: the packer works on counts."""
    started = time.perf_counter()
    response = client.post("/api/v1/mig", json=_services(64, 64))
    assert response.status_code == 200
    plan = response.json()["pick"]
    # 4,096 int4 8B replicas, seven 1g.10gb slices to an A100 80GB PCIe: priced on a dated
    # offer, ahead of 2,048 A30s (two 2g.12gb slices each) whose offers are undated
    assert plan["gpus"] == 586 and plan["gpu"] == "a100-80gb-pcie"
    assert time.perf_counter() - started < 5.0  # a loose bound: the figure is in bench/


def test_an_uploaded_file_name_is_never_shown_to_another_uploader(client: TestClient) -> None:
    fields = {"task": "inference", "hours": "100", "objective": "cost", "markets": "on-demand"}
    for name in ("alice-secret-project-llama.json", "bob.json"):
        files = {"config": (name, PRESET.read_bytes(), "application/json")}
        text = client.post("/recommend", data=fields, files=files).text
        assert f"{name}, 8.03 B parameters" in text
        assert ("alice" in text) == name.startswith("alice")


def test_the_memo_is_bounded_in_bytes() -> None:
    memo = Memo(size=100, max_bytes=1000)
    for i in range(10):
        memo.put(f"k{i}", b"x" * 200)
    assert memo.bytes <= 1000 and memo.get("k0") is None and memo.get("k9") is not None
    memo.put("huge", b"x" * 300)  # over a quarter of the budget: not kept
    assert memo.get("huge") is None


# a real server on loopback ---------------------------------------------------------------
@contextmanager
def _serving(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on loopback, as ``whichgpu serve`` runs it: its URL."""
    with serving(app) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    from whichgpu.web import core, guard

    monkeypatch.setattr(guard, "HEADER_TIMEOUT_S", 0.5)
    monkeypatch.setattr(core, "COMPUTE_TIMEOUT_S", 1.0)

    def slow_mig(self: Any, body: dict[str, Any]) -> Any:  # stands for any slow request
        time.sleep(3.0)
        return {}

    monkeypatch.setattr(core.Service, "mig_doc", slow_mig)
    with _serving(create_app(load_catalog())) as url:
        yield url


@pytest.fixture
def pooled_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The server as ``whichgpu serve`` runs it: its API computed by a pool of worker
    processes (one here), each computation within the (shortened) time limit."""
    from whichgpu.web import core
    from whichgpu.web.pool import ComputePool

    monkeypatch.setattr(core, "COMPUTE_TIMEOUT_S", 1.0)
    real_mig = core.Service.mig_doc

    def slow_mig(self: Any, body: dict[str, Any]) -> Any:  # slow unless it asks for nothing
        if body.get("services"):
            time.sleep(30.0)
        return real_mig(self, {"gpu": "a100", "profiles": ["1g.10gb"]})

    monkeypatch.setattr(core.Service, "mig_doc", slow_mig)
    pool = ComputePool(1, start_method="fork")  # the worker inherits the patched method
    try:
        with _serving(create_app(pool=pool)) as url:
            yield url
    finally:
        pool.close()


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read()), time.perf_counter() - started
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), time.perf_counter() - started


def test_a_computation_past_its_limit_frees_its_worker_process(pooled_server: str) -> None:
    """In the compute pool a computation at its time limit is answered 503 and its process
    replaced: the one worker computes the next request at once, not after the 30 s the
    first would have taken; meanwhile the catalog's lists answer from the server."""
    outcome: dict[str, Any] = {}

    def slow() -> None:
        outcome["slow"] = _post(f"{pooled_server}/api/v1/mig", _services(1, 1))

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.3)
    status, seconds = _get(f"{pooled_server}/api/v1/gpus/h100")
    assert status == 200 and seconds < 0.5
    thread.join()
    status, body, seconds = outcome["slow"]
    assert status == 503 and body["error"]["code"] == "timeout" and seconds < 2.5
    status, body, seconds = _post(f"{pooled_server}/api/v1/mig", {"gpu": "a100"})
    assert status == 200 and seconds < 10  # a fresh worker: its start, not the 30 s
    status, body, _seconds = _post(
        f"{pooled_server}/api/v1/fit", {"model": "llama-3.1-8b", "task": "lora", "gpu": "a6000"}
    )
    assert status == 200 and body["kind"] == "fit" and body["total_gib"] > 10


def test_the_compute_pool_renders_the_pages_a_thread_renders(pooled_server: str) -> None:
    """A computing page (recommend, fit) comes out of the compute process as it does out of
    a worker thread, byte for byte: its ranked table and charts, or its refused field."""
    from fastapi.testclient import TestClient

    threaded = TestClient(create_app(load_catalog()))
    for path, status in (
        ("/recommend?task=lora&model=llama-2-7b&tokens=1e8&budget_usd=500&lang=fr", 200),
        ("/fit?model=llama-3.1-8b&task=lora&batch=two&lang=ja", 422),
    ):
        try:
            with urllib.request.urlopen(f"{pooled_server}{path}", timeout=20) as response:
                got, html = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            got, html = error.code, error.read().decode()
        expected = threaded.get(path)
        assert (got, html) == (expected.status_code, expected.text) and got == status
        if path.startswith("/recommend"):
            assert 'id="ranked"' in html and html.count("<svg") == 2
        else:
            assert "batch" in html.lower()


def _get(url: str) -> tuple[int, float]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=10) as response:
        response.read()
        return response.status, time.perf_counter() - started


def test_a_slow_request_never_delays_a_cheap_one(server: str) -> None:
    """While a computation runs (and then hits its time limit), the GPU list answers at once;
    the slow request gets a 503 in one line, not a hung connection."""
    outcome: dict[str, Any] = {}

    def slow() -> None:
        request = urllib.request.Request(
            f"{server}/api/v1/mig", json.dumps(_services(1, 1)).encode(),
            {"content-type": "application/json"},
        )  # fmt: skip
        started = time.perf_counter()
        try:
            urllib.request.urlopen(request, timeout=20)
        except urllib.error.HTTPError as error:
            outcome["status"] = error.code
            outcome["body"] = json.loads(error.read())
        outcome["seconds"] = time.perf_counter() - started

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.2)
    for _ in range(5):
        status, seconds = _get(f"{server}/api/v1/gpus/h100")
        assert status == 200 and seconds < 0.5
    thread.join()
    assert outcome["status"] == 503 and outcome["body"]["error"]["code"] == "timeout"
    assert 0.9 < outcome["seconds"] < 2.5  # the time limit, not the 3 s of work


def test_a_connection_that_sends_no_request_is_closed(server: str) -> None:
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as conn:
        conn.sendall(b"GET /api/v1/gpus HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        conn.settimeout(5)
        started = time.perf_counter()
        assert conn.recv(100) == b""  # closed by the server
        assert time.perf_counter() - started < 3


def test_an_oversized_workload_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A 50 MB file of comments once took 85 s: refused by its size, at once."""
    from tests.conftest import run_cli

    path = tmp_path / "big.toml"
    with path.open("w") as handle:
        handle.write("# a comment\n" * 200_000)  # 2.4 MB
    started = time.perf_counter()
    result = run_cli("recommend", "-f", str(path))
    assert time.perf_counter() - started < 1.0
    assert result.code == 2 and "at most 1,048,576 are read" in result.stderr


def test_a_page_past_its_limit_shows_the_form_with_the_problem(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: a page whose computation timed out answered the bare error page, what the user
    typed lost; it is the form again, the fields kept, with the 503 in it. The empty form
    never waits on a computation."""
    import whichgpu.commands.mig

    def slow_plan(*args: Any, **kwargs: Any) -> Any:
        time.sleep(3.0)
        raise AssertionError("past the limit: never reached")

    monkeypatch.setattr(whichgpu.commands.mig, "plan_mig", slow_plan)
    url = f"{server}/mig?model=llama-3.1-8b&quant=int4&replicas=5&lang=en"
    try:
        urllib.request.urlopen(url, timeout=10)
        raise AssertionError("expected a 503")
    except urllib.error.HTTPError as error:
        status, html = error.code, error.read().decode()
    assert status == 503 and 'name="replicas"' in html and 'value="5"' in html
    assert "longer than 1 s to compute" in html
    with urllib.request.urlopen(f"{server}/mig?lang=en", timeout=10) as response:
        assert response.status == 200  # the empty form: nothing computed, nothing waited on


def test_the_compute_pool_s_timeout_shows_the_form_too() -> None:
    """The same through the compute processes: their 503 comes back as a problem, and the
    form is rendered with it."""
    import asyncio

    from whichgpu.web.core import Service, timeout_problem
    from whichgpu.web.pool import run_view

    class TimedOut:
        async def view(self, language: str, name: str, args: Any, timeout_s: float) -> Any:
            return None, timeout_problem(language, timeout_s)

        async def call(self, *args: Any) -> Any:
            raise AssertionError("not an API call")

    service = Service(load_catalog(), TimedOut())
    args = ("/estimate", {"gpu": ["a100"], "batch": ["3"]}, {"gpu": "a100", "batch": "3"})
    status, html = asyncio.run(run_view(service, "fr", "estimate", args, computing=True))
    assert status == 503 and 'value="3"' in html and 'lang="fr"' in html
