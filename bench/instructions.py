"""Instructions, counted by valgrind's callgrind (not a test): the figures of
bench/coldstart.py and bench/compute.py that do not move with the machine's load.

    python bench/instructions.py [--cold] [--compute] [--requests 3]

Wall time on a shared machine moves by ±30 % from one run to the next (the same commit's
distinct LoRA recommend read 50 to 75 ms in one hour); the instructions a run executes do
not (PYTHONHASHSEED fixed, bytecode written before counting). ``--cold``: each CLI command
of bench/coldstart.py in a fresh process, and its ratio to ``python -c pass`` counted the
same way (issue 48's cold start target is 10 × pass in wall time: an instruction ratio
leaves out the process's own start, which ``pass`` pays too, so it reads higher).
``--compute``: the instructions one distinct request of each bench/compute.py recommend
case adds (REQUESTS requests after a first one, minus the first one alone). Prints a line
and exits where valgrind is not installed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: One process: the compute case's first request, then REQUESTS distinct ones
_COMPUTE = """
import sys
sys.path.insert(0, "bench")
from compute import cases
name, n = sys.argv[1], int(sys.argv[2])
cases(0)[name]()
for call in [cases(100 + v)[name] for v in range(1, n + 1)]:
    call()
"""


def counted(args: list[str]) -> int:
    """Instructions of ``python ARGS`` in the repository's root, after one run that writes
    the bytecode (as an installed package has it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, *args]
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    found = re.search(r"Collected : (\d+)", out)
    if found is None:
        raise SystemExit(f"callgrind printed no count for {args}:\n{out[-2000:]}")
    return int(found.group(1))


def cold() -> None:
    from coldstart import COMMANDS

    bare = counted(["-c", "pass"])
    print(f"python -c pass: {bare / 1e6:.0f} M instructions")
    for command in COMMANDS:
        n = counted(["-m", "whichgpu", *command])
        print(f"whichgpu {' '.join(command)[:66]:66} {n / 1e6:7.0f} M {n / bare:6.1f} × pass")


def compute(requests: int) -> None:
    from compute import cases

    print(f"{'recommend case':58} {'M instructions a distinct request':>34}")
    for name in cases(0):
        if not name.startswith("recommend"):
            continue
        first = counted(["-c", _COMPUTE, name, "0"])
        more = counted(["-c", _COMPUTE, name, str(requests)])
        print(f"{name:58} {(more - first) / requests / 1e6:34.0f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--compute", action="store_true")
    parser.add_argument("--requests", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: no instruction counts (apt install valgrind)")
        return
    sys.path.insert(0, str(ROOT / "bench"))
    if args.cold or not args.compute:
        cold()
    if args.compute or not args.cold:
        compute(args.requests)


if __name__ == "__main__":
    main()
