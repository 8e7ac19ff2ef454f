"""whichgpu: which GPU should I rent or buy for this job, how many, and at what cost?

The public API is small; everything else is a private detail of its modules::

    import whichgpu
    catalog = whichgpu.load_catalog()
    whichgpu.compare(catalog, ["a100", "a6000", "a2000"])
    job = whichgpu.make_job(task="lora", batch=4, seq=2048)
    result = whichgpu.fit(catalog, whichgpu.resolve_model("llama-3.1-8b"), job)

Names are imported on first use (PEP 562), so ``import whichgpu`` — and the CLI, which
imports only what a command needs — stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "GPU": "whichgpu.catalog",
    "Catalog": "whichgpu.catalog",
    "Comparison": "whichgpu.compare",
    "Job": "whichgpu.workload",
    "WhichGPUError": "whichgpu.errors",
    "compare": "whichgpu.compare",
    "estimate_memory": "whichgpu.estimate.memory",
    "estimate_throughput": "whichgpu.throughput",
    "fit": "whichgpu.fit",
    "load_catalog": "whichgpu.catalog",
    "make_job": "whichgpu.workload",
    "resolve_model": "whichgpu.models",
}

__all__ = [
    "GPU",
    "Catalog",
    "Comparison",
    "Job",
    "WhichGPUError",
    "compare",
    "estimate_memory",
    "estimate_throughput",
    "fit",
    "load_catalog",
    "make_job",
    "resolve_model",
]

if TYPE_CHECKING:
    from whichgpu.catalog import GPU, Catalog, load_catalog
    from whichgpu.compare import Comparison, compare
    from whichgpu.errors import WhichGPUError
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.fit import fit
    from whichgpu.models import resolve_model
    from whichgpu.throughput import estimate_throughput
    from whichgpu.workload import Job, make_job


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'whichgpu' has no attribute {name!r}")
