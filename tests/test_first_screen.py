"""Issue 49, item 1: the answer in one screen. In a real 80 × 24 terminal (tmux), the last
screen a recommendation leaves shows the pick, its cost and time (or its capacity), and the
job as understood (its size); the lists above it keep a hanging indent."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WHICHGPU = str(Path(sys.executable).with_name("whichgpu"))

CASES = [
    # make demo's recommendation
    (("recommend", "--file", "tests/scenarios/d02-train-1-7b.toml"),
     ("5B tokens", "(up to", "Cost: $", "/h, seen 2026-")),
    # the README's serving example
    (("recommend", "--task", "inference", "-m", "llama-3.1-70b", "--request-rate", "5",
      "--ttft", "2s", "--tpot", "100ms"),
     ("5.00 requests/s", "serves up to", "ms a token", "/h")),
]  # fmt: skip


def _last_screen(args: tuple[str, ...], tmp_path: Path) -> list[str]:
    """The 24 lines an 80 × 24 tmux pane shows once the command has run (without tmux, the
    last 24 lines the command prints at 80 columns: what the pane would show)."""
    if shutil.which("tmux") is None:
        env = {**os.environ, "COLUMNS": "80", "LINES": "24"}
        out = subprocess.run([WHICHGPU, *args], capture_output=True, text=True, cwd=ROOT,
                             env=env, check=True).stdout  # fmt: skip
        return out.splitlines()[-24:]
    done = tmp_path / "done"
    command = " ".join([WHICHGPU, *args]) + f"; touch {done}; sleep 30"
    session = f"whichgpu-{os.getpid()}-{len(args)}"
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    subprocess.run(["tmux", "-L", session, "new-session", "-d", "-s", session, "-x", "80",
                    "-y", "24", "-c", str(ROOT), command], check=True, env=env)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        shown = subprocess.run(["tmux", "-L", session, "capture-pane", "-p", "-t", session],
                               capture_output=True, text=True, check=True).stdout  # fmt: skip
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], check=False)
    return shown.splitlines()


@pytest.mark.parametrize(("args", "expected"), CASES)
def test_the_last_screen_holds_the_answer(
    args: tuple[str, ...], expected: tuple[str, ...], tmp_path: Path
) -> None:
    screen = "\n".join(_last_screen(args, tmp_path))
    answer = screen[screen.index("Answer") :]  # the block ends the answer
    assert answer.splitlines()[1].startswith("  → ")
    for text in expected:
        assert text in answer, (text, screen)
