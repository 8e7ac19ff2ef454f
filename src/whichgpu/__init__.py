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
    "make_job": "whichgpu.inputs.job_input",
    "Comparison": "whichgpu.commands.compare",
    "compare": "whichgpu.commands.compare",
    "FitResult": "whichgpu.commands.fit",
    "fit": "whichgpu.commands.fit",
    "estimate_memory": "whichgpu.estimate.memory",
    "ThroughputEstimate": "whichgpu.estimate.throughput",
    "estimate_throughput": "whichgpu.estimate.throughput",
    "Workload": "whichgpu.inputs.requests",
    "Component": "whichgpu.inputs.requests",
    "Constraints": "whichgpu.inputs.requests",
    "make_workload": "whichgpu.inputs.workload_files",
    "Recommendation": "whichgpu.commands.recommend.options",
    "recommend": "whichgpu.commands.recommend.rank",
    "ServiceSpec": "whichgpu.commands.mig",
    "MigResult": "whichgpu.commands.mig",
    "make_service": "whichgpu.commands.mig",
    "plan_mig": "whichgpu.commands.mig",
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
    from whichgpu.commands.compare import Comparison, compare
    from whichgpu.commands.fit import FitResult, fit
    from whichgpu.commands.mig import MigResult, ServiceSpec, make_service, plan_mig
    from whichgpu.commands.recommend.options import Recommendation
    from whichgpu.commands.recommend.rank import recommend
    from whichgpu.errors import (
        AmbiguousName,
        CatalogError,
        InvalidInput,
        UnknownName,
        WhichGPUError,
    )
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.throughput import ThroughputEstimate, estimate_throughput
    from whichgpu.inputs.job_input import make_job
    from whichgpu.inputs.requests import Component, Constraints, Workload
    from whichgpu.inputs.workload_files import make_workload
    from whichgpu.job import Job
    from whichgpu.models import resolve_model
    from whichgpu.models.arch import ModelArch
    from whichgpu.models.presets import list_models


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later look-ups are plain attribute reads
        return value
    raise AttributeError(f"module 'whichgpu' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
