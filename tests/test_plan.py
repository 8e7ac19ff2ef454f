"""One job on one hardware is one answer (issue 43): ``fit``, ``estimate`` and ``recommend``
give the same memory, throughput and likely range, whichever command asks, because each is
a loop over :func:`whichgpu.plan.plan` or shares its pieces."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import run_cli

#: name, the job's flags, the GPU, how many (one instance of that many)
JOBS = [
    ("training", ("--task", "train", "-m", "llama-3.2-1b", "--tokens", "1e9"), "h100-sxm", 8),
    ("training-1", ("--task", "train", "-m", "llama-3.2-1b", "--tokens", "1e9"), "h100-sxm", 1),
    ("lora", ("--task", "lora", "-m", "llama-3.1-8b", "--tokens", "1e8"), "rtx-a6000", 1),
    ("lora-2", ("--task", "lora", "-m", "llama-3.1-8b", "--tokens", "1e8"), "a100-80gb-sxm", 2),
    (
        "served",
        ("--task", "inference", "-m", "llama-3.1-8b", "--request-rate", "5", "--tpot", "100ms"),
        "l40s",
        1,
    ),
    ("image", ("--task", "image", "-m", "sdxl", "--images", "1000"), "l4", 1),
]


def _json(*args: str) -> Any:
    result = run_cli(*args, "--json")
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def _recommended(args: tuple[str, ...], gpu: str, count: int) -> dict[str, Any]:
    """recommend's option of ``count`` × ``gpu`` in one instance of that many."""
    doc = _json("recommend", *args, "--all", "--max-gpus", str(count))
    for option in doc["options"]:
        instance = option.get("instance") or {}
        if (option["gpu"], option["count"], option["mig_profile"]) == (gpu, count, None) and (
            instance.get("gpus_per_instance", count) == count
        ):
            return dict(option)
    raise AssertionError(f"no option of {count} × {gpu} in one instance")


def _close(a: float, b: float) -> bool:
    """Equal to recommend's rounding (four significant figures in its JSON)."""
    return a == pytest.approx(b, rel=6e-4)


@pytest.mark.parametrize(("name", "args", "gpu", "count"), JOBS, ids=[j[0] for j in JOBS])
def test_estimate_and_recommend_agree_on_one_job_on_one_hardware(
    name: str, args: tuple[str, ...], gpu: str, count: int
) -> None:
    estimated = _json("estimate", *args, "--gpu", gpu, "--count", str(count))
    option = _recommended(args, gpu, count)
    rate, run = estimated["throughput"], option["components"][0]
    said = option["throughput"]
    assert said["unit"] == rate["unit"]
    for key in ("value", "low", "high"):
        assert _close(said[key], rate[key]), (name, key, said, rate)
    assert said["low"] < said["value"] < said["high"]  # a range, served options too
    memory = estimated.get("memory_gib")
    if memory is None and estimated.get("image"):
        memory = estimated["image"]["memory_gib"]
    assert memory is not None and _close(run["needed_gib"], memory), (name, run, memory)


@pytest.mark.parametrize(
    ("args", "gpu"),
    [
        (("--task", "lora", "-m", "llama-3.1-8b"), "rtx-a6000"),
        (("--task", "train", "-m", "llama-3.2-1b"), "h100-sxm"),
        (("--task", "image", "-m", "sdxl"), "l4"),
        (("--task", "image", "-m", "flux.1-dev"), "a100-80gb-sxm"),
    ],
)
def test_fit_holds_the_job_estimate_plans(args: tuple[str, ...], gpu: str) -> None:
    """fit's row for a GPU is the job estimate plans on one of it: the settings left open
    chosen alike (an image job's batch too: fit asked it at one image a call before)."""
    fitted = _json("fit", *args, "--gpu", gpu)
    row = next(r for r in fitted["gpus"] if r.get("id", r.get("gpu")) == gpu)
    estimated = _json("estimate", *args, "--gpu", gpu)
    memory = estimated.get("memory_gib") or estimated["image"]["memory_gib"]
    assert row["needed_gib"] == pytest.approx(memory, rel=1e-3), (row, memory)
