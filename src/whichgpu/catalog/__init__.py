"""The catalog of GPUs, sources, prices and the seed article's figures."""

from whichgpu.catalog.records import GPU, Price, PurchasePrice, Source
from whichgpu.catalog.store import Catalog, Citation, load_catalog

__all__ = ["GPU", "Catalog", "Citation", "Price", "PurchasePrice", "Source", "load_catalog"]
