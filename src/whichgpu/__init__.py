"""whichgpu: which GPU should I rent or buy for this job, how many, and at what cost?

The public API is small; everything else is a private detail of its modules::

    import whichgpu
    catalog = whichgpu.load_catalog()
    whichgpu.compare(catalog, ["a100", "a6000", "a2000"])
    job = whichgpu.make_job(task="lora", batch=4, seq=2048)
    result = whichgpu.fit(catalog, whichgpu.resolve_model("llama-3.1-8b"), job)
"""

from whichgpu.catalog import GPU, Catalog, load_catalog
from whichgpu.compare import Comparison, compare
from whichgpu.errors import WhichGPUError
from whichgpu.estimate.memory import estimate_memory
from whichgpu.fit import fit
from whichgpu.models import resolve_model
from whichgpu.throughput import estimate_throughput
from whichgpu.workload import Job, make_job

__version__ = "0.1.0"

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
