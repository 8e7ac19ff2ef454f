"""CLI cold start: wall time of whole ``whichgpu`` processes, as a user runs them.

    python bench/coldstart.py [RUNS]

Prints the minimum and median of RUNS fresh processes for each command (the minimum is the
figure least disturbed by other load on the machine), after one run that is not counted, and
each command's minimum as a ratio to ``python -c pass`` timed the same way in the same run
(issue 48's target: every command within 10 × that).
The processes may write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from their
environment), as an installed package has it: pip compiles at install time, and a process
that compiles every module it imports measures the compiler, not whichgpu. Not a test: a
figure to report.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = [
    ["compare", "a100-80gb-sxm", "rtx-a6000", "rtx-a2000"],
    ["compare", "a100-80gb-sxm", "rtx-a6000", "rtx-a2000", "--json"],
    ["gpus"],
    ["show", "h100"],
    ["fit", "--model", "llama-3.1-8b", "--task", "lora", "--gpu", "a6000"],
    ["recommend", "--task", "lora", "--model", "llama-2-7b", "--tokens", "1e8"],
    ["recommend", "--task", "lora", "--model", "llama-2-7b", "--tokens", "1e8", "--json"],
    ["recommend", "--file", "tests/scenarios/d01-train-7b-plus.toml"],
    # the serving planner over the full catalog: every GPU × count × replica split
    ["recommend", "--task", "inference", "-m", "llama-3.1-70b", "--request-rate", "5",
     "--ttft", "2s", "--tpot", "100ms"],
    ["estimate", "-m", "llama-3.1-70b", "--gpu", "h100-sxm", "--count", "8", "--request-rate",
     "20", "--ttft", "2s"],
]  # fmt: skip


def timed(command: list[str], runs: int, env: dict[str, str]) -> list[float]:
    """Wall seconds of ``runs`` fresh processes of ``command``, after one not counted."""
    subprocess.run(command, capture_output=True, check=True, env=env)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    exe = shutil.which("whichgpu") or sys.executable
    prefix = [exe] if exe.endswith("whichgpu") else [exe, "-m", "whichgpu"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bare = min(timed([sys.executable, "-c", "pass"], runs, env))
    print(f"python -c pass: {bare:.3f} s (minimum of {runs})")
    print(f"{'command':<55} {'min s':>7} {'median s':>9} {'× pass':>7}  ({runs} runs, "
          f"{prefix[0]})")  # fmt: skip
    for args in COMMANDS:
        times = timed([*prefix, *args], runs, env)
        print(
            f"{'whichgpu ' + ' '.join(args):<55} {min(times):7.3f} "
            f"{statistics.median(times):9.3f} {min(times) / bare:7.1f}"
        )


if __name__ == "__main__":
    main()
