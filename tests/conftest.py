from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from whichgpu.catalog import Catalog, load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(autouse=True)
def _stable_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Fixed date, width and language; no user config file leaks in."""
    monkeypatch.setenv("WHICHGPU_TODAY", "2026-11-29")
    monkeypatch.setenv("COLUMNS", "140")
    (tmp_path / "no-config.toml").write_text("")  # an empty config: not the user's own
    monkeypatch.setenv("WHICHGPU_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("WHICHGPU_CACHE", str(tmp_path / "cache"))  # no price snapshot
    monkeypatch.setenv("LANGUAGE", "en")
    monkeypatch.delenv("NO_COLOR", raising=False)
    yield
    from whichgpu.i18n import set_language

    set_language(None)  # a --lang given to run_cli must not leak into the next test


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def run_cli(*args: str) -> Result:
    """Run ``whichgpu ARGS`` in-process, as a user's shell would, and capture everything."""
    from whichgpu.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli() -> object:
    return run_cli


def golden(name: str, text: str) -> None:
    """Compare ``text`` with tests/golden/NAME; UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@contextmanager
def serving(app: Any, log_level: str = "error") -> Iterator[int]:
    """``app`` under uvicorn on an ephemeral loopback port, as ``whichgpu serve`` runs it
    (the guarded protocol, its timeouts), in a thread: its port. Loopback only."""
    import socket
    import threading
    import time

    import uvicorn

    from whichgpu.web.guard import GuardedH11Protocol

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level, ws="none",
                            access_log=False, http=GuardedH11Protocol,
                            timeout_keep_alive=5)  # fmt: skip
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert instance.started
    try:
        yield port
    finally:
        instance.should_exit = True
        thread.join(timeout=10)
