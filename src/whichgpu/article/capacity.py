"""The largest model a GPU holds for a given job: the article's capacity claims (C40–C43)
answered by the memory estimator, over generic transformers of growing size."""

from __future__ import annotations

from whichgpu.catalog.records import GPU
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.parallel import usable_bytes
from whichgpu.job import Job
from whichgpu.models.generic import generic_arch


def fits(gpu: GPU, job: Job, n_params: float) -> bool:
    arch = generic_arch(f"{n_params / 1e6:.0f}M")
    return estimate_memory(arch, job).total_bytes <= usable_bytes(gpu)


def largest_model(gpu: GPU, job: Job, low: float = 1e7, high: float = 1e12) -> float:
    """The largest generic transformer (models/generic.py shape rule) that fits ``gpu`` for
    ``job``, by bisection on the parameter count (to 1 %); 0 if even ``low`` does not fit."""
    if not fits(gpu, job, low):
        return 0.0
    while high / low > 1.01:
        middle = (low * high) ** 0.5
        low, high = (middle, high) if fits(gpu, job, middle) else (low, middle)
    return low
