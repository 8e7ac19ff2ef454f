"""whichgpu: which GPU should I rent or buy for this job, how many, and at what cost?

The public API is small; everything else is a private detail of its modules::

    import whichgpu
    catalog = whichgpu.load_catalog()
    result = whichgpu.compare(catalog, ["a100", "a6000", "a2000"])
"""

from whichgpu.catalog import GPU, Catalog, load_catalog
from whichgpu.compare import Comparison, compare
from whichgpu.errors import WhichGPUError

__version__ = "0.1.0"

__all__ = ["GPU", "Catalog", "Comparison", "WhichGPUError", "compare", "load_catalog"]
