"""whichgpu: which GPU should I rent or buy for this job, how many, and at what cost?

The public API is the names in ``__all__``; everything else is a private detail of its
modules. No submodule is named like a public function, so ``whichgpu.fit`` is the function
however often it is called and whatever was imported before (``tests/test_public_api.py``)::

    import whichgpu
    catalog = whichgpu.load_catalog()
    whichgpu.compare(catalog, ["a100", "a6000", "a2000"])
    job = whichgpu.make_job(task="lora", batch=4, seq=2048)
    result = whichgpu.fit(catalog, whichgpu.resolve_model("llama-3.1-8b"), job)

The README's "Python API" section is a worked example, run as a test. Names are imported on
first use (PEP 562), so ``import whichgpu`` — and the CLI, which imports only what a command
needs — stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name → the module that defines it
_EXPORTS = {
    "GPU": "whichgpu.catalog",
    "Catalog": "whichgpu.catalog",
    "load_catalog": "whichgpu.catalog",
    "resolve_model": "whichgpu.models",
    "list_models": "whichgpu.models.presets",
    "ModelArch": "whichgpu.models.arch",
    "Job": "whichgpu.job",
    "make_job": "whichgpu.job_input",
    "Comparison": "whichgpu.comparison",
    "compare": "whichgpu.comparison",
    "FitResult": "whichgpu.fitting",
    "fit": "whichgpu.fitting",
    "estimate_memory": "whichgpu.estimate.memory",
    "ThroughputEstimate": "whichgpu.throughput",
    "estimate_throughput": "whichgpu.throughput",
    "Workload": "whichgpu.requests",
    "Component": "whichgpu.requests",
    "Constraints": "whichgpu.requests",
    "make_workload": "whichgpu.workload_files",
    "Recommendation": "whichgpu.recommender.options",
    "recommend": "whichgpu.recommender.engine",
    "ServiceSpec": "whichgpu.mig_planner",
    "MigResult": "whichgpu.mig_planner",
    "make_service": "whichgpu.mig_planner",
    "plan_mig": "whichgpu.mig_planner",
    "WhichGPUError": "whichgpu.errors",
    "InvalidInput": "whichgpu.errors",
    "UnknownName": "whichgpu.errors",
    "AmbiguousName": "whichgpu.errors",
    "CatalogError": "whichgpu.errors",
}

__all__ = [
    "GPU",
    "AmbiguousName",
    "Catalog",
    "CatalogError",
    "Comparison",
    "Component",
    "Constraints",
    "FitResult",
    "InvalidInput",
    "Job",
    "MigResult",
    "ModelArch",
    "Recommendation",
    "ServiceSpec",
    "ThroughputEstimate",
    "UnknownName",
    "WhichGPUError",
    "Workload",
    "compare",
    "estimate_memory",
    "estimate_throughput",
    "fit",
    "list_models",
    "load_catalog",
    "make_job",
    "make_service",
    "make_workload",
    "plan_mig",
    "recommend",
    "resolve_model",
]

if TYPE_CHECKING:
    from whichgpu.catalog import GPU, Catalog, load_catalog
    from whichgpu.comparison import Comparison, compare
    from whichgpu.errors import (
        AmbiguousName,
        CatalogError,
        InvalidInput,
        UnknownName,
        WhichGPUError,
    )
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.fitting import FitResult, fit
    from whichgpu.job import Job
    from whichgpu.job_input import make_job
    from whichgpu.mig_planner import MigResult, ServiceSpec, make_service, plan_mig
    from whichgpu.models import resolve_model
    from whichgpu.models.arch import ModelArch
    from whichgpu.models.presets import list_models
    from whichgpu.recommender.engine import recommend
    from whichgpu.recommender.options import Recommendation
    from whichgpu.requests import Component, Constraints, Workload
    from whichgpu.throughput import ThroughputEstimate, estimate_throughput
    from whichgpu.workload_files import make_workload


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later look-ups are plain attribute reads
        return value
    raise AttributeError(f"module 'whichgpu' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
